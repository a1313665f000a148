"""An OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp...) called with plain aiohttp.

aiohttp directly, not the openai SDK: 1,000 calls at concurrency 50 against a 50 ms server took 1.12 s with
aiohttp, 1.5 s with the SDK and 15.3 s through inspect_ai. The API key is read from the environment at call
time and never enters the spec, the cache key or an error message.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec
from pydantic import BaseModel, ConfigDict, Field

from clineval.core.case import Case
from clineval.core.errors import SystemCallError
from clineval.core.helpers.lines import json_too_deep
from clineval.core.output import SystemOutput, Usage
from clineval.core.specs import ComponentSpec, canonical_json, sha256_text
from clineval.systems._http import JsonHttpClient
from clineval.systems._outputs import OutputFormat, output_from_value
from clineval.systems.prompts import Message, load_prompt

# The request body: msgspec writes a chat body (~1.5 kB) in 1.6 us where json's encoder takes 15 us (issue 26:
# a live call's client CPU). The same JSON value, without json's spaces after ',' and ':'.
_ENCODE = msgspec.json.Encoder().encode


class OpenAIOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(default="https://api.openai.com/v1", pattern=r"^https?://")
    model: str = Field(min_length=1)
    api_key_env: str = Field(default="OPENAI_API_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    prompt: str = "mcq_cot_v1"
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = None
    system_prompt: str | None = None
    # "text": the reply is text (MCQ, free text); "structured" / "cds_report": the reply is a JSON object
    # (a differential, a CDS recommendation) read like the http system's; an unparseable reply stays text
    output: Literal["text", "structured", "cds_report"] = "text"
    # a case with a conversation to send (HealthBench): "messages" sends it as chat messages with their roles,
    # as openai/simple-evals does; "text" renders the template around its flattened text (before issue 23)
    conversation: Literal["messages", "text"] = "messages"


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None
    fields = ("prompt_tokens", "completion_tokens", "total_tokens")
    return Usage(**{k: value[k] for k in fields if isinstance(value.get(k), int)})


def parse_chat_completion(data: Any) -> SystemOutput:
    """``choices[0].message.content`` -> text, ``usage`` -> Usage; anything else is malformed."""
    try:
        choice = data["choices"][0]
        message = choice["message"]
        content = message.get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise SystemCallError("malformed_response", "response has no choices[0].message") from None
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    if not isinstance(content, str):
        message_text = f"choices[0].message.content is {content!r} (finish_reason={finish})"
        raise SystemCallError("empty_output", message_text)
    raw = {"finish_reason": finish, "model": data.get("model")}
    return SystemOutput(text=content, usage=_usage(data.get("usage")), raw=raw)


class OpenAIChatSystem:
    live = True

    def __init__(self, options: OpenAIOptions, base_dir: Path) -> None:
        self.options = options
        self.prompt = load_prompt(options.prompt, base_dir)
        self.url = options.base_url.rstrip("/") + "/chat/completions"
        self._client = JsonHttpClient()
        self._sampling: dict[str, Any] = {"temperature": options.temperature}
        if options.max_tokens is not None:
            self._sampling["max_tokens"] = options.max_tokens
        if options.seed is not None:
            self._sampling["seed"] = options.seed
        self.spec = ComponentSpec(
            type="openai", args=options.model_dump(mode="json"), content_hash=self.prompt.content_hash
        )

    async def start(self, concurrency: int) -> None:
        await self._client.start(concurrency)

    async def close(self) -> None:
        await self._client.close()

    def messages(self, case: Case) -> list[Message]:
        return self.prompt.render(
            case,
            system_prompt=self.options.system_prompt,
            conversation=self.options.conversation == "messages",
        )

    def _body(self, messages: list[Message]) -> dict[str, Any]:
        return {"model": self.options.model, "messages": messages, **self._sampling}

    def cache_key(self, case: Case) -> str | None:
        payload = {
            "system": "openai",
            "base_url": self.options.base_url.rstrip("/"),
            "body": self._body(self.messages(case)),
        }
        return sha256_text(canonical_json(payload))

    async def call(self, case: Case) -> SystemOutput:
        key = os.environ.get(self.options.api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        secrets = [key, headers["Authorization"]] if key else []
        body = self._body(self.messages(case))
        try:
            payload: Any = _ENCODE(body)
        except (TypeError, ValueError):  # a lone surrogate: json's encoder fails on it as it always did
            payload = body
        data = await self._client.post_json(self.url, payload, headers, secrets=secrets)
        output = parse_chat_completion(data)
        if self.options.output == "text" or output.text is None:
            return output
        return json_reply(output, self.options.output)


_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.IGNORECASE)


def json_reply(output: SystemOutput, output_format: OutputFormat) -> SystemOutput:
    """A chat reply holding a JSON object (bare, fenced, or the outermost {...} in the text) read as a
    structured output; the text, usage and raw fields are kept. A reply with no parseable object stays
    text: the scorers then say what is missing (e.g. ``no_differential``), never a crash."""
    text = output.text or ""
    candidates = [_FENCE.sub("", text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = None if json_too_deep(candidate) else json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            parsed = output_from_value(value, output_format)
            return parsed.model_copy(update={"text": text, "usage": output.usage, "raw": output.raw})
    return output


def openai_system(options: Mapping[str, Any], base_dir: Path) -> OpenAIChatSystem:
    return OpenAIChatSystem(OpenAIOptions.model_validate(options), base_dir)
