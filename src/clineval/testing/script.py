"""The behaviour of the scripted test server: latency, answers, and per-prompt sequences of failures.

A rule matches when its ``match`` substring is in the last user message (or the ``/predict`` input). Each
distinct matching prompt walks the rule's ``replies`` in order and then repeats the last one, so
``[{"status": 500}, {}]`` means "fail once, then answer" for every question the rule covers.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_ANSWER_FORMAT = '{"step_by_step_thinking": "Scripted answer.", "answer_choice": "{letter}"}'


class Reply(BaseModel):
    """One scripted response. Empty ``{}`` = a normal answer after the default latency."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    status: int = 200
    retry_after: float | str | None = None
    delay: float | None = Field(default=None, ge=0)
    body: str | None = None
    content: str | None = None
    json_body: dict[str, Any] | None = Field(default=None, alias="json")


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    match: str = Field(min_length=1)
    replies: list[Reply] = Field(min_length=1)


class Script(BaseModel):
    """Everything the server does; loadable from JSON (``Script.load(path)``) for the subprocess form."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    latency_s: float = Field(default=0.05, ge=0)
    default_answer: str = "A"
    answer_format: str = DEFAULT_ANSWER_FORMAT
    answers_by_substring: dict[str, str] = Field(default_factory=dict)
    rules: list[Rule] = Field(default_factory=list)
    require_api_key: str | None = None
    model: str = "scripted-model"
    # a chat request for another model gets vLLM's 404 "The model `x` does not exist." (off: any answers)
    reject_unknown_model: bool = False

    @classmethod
    def load(cls, path: Path) -> Script:
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))

    def answer_for(self, prompt: str) -> str:
        """The scripted content: the letter of the first ``answers_by_substring`` key found in the prompt."""
        letter = next((v for k, v in self.answers_by_substring.items() if k in prompt), self.default_answer)
        return self.answer_format.replace("{letter}", letter)


def prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:16]


class ScriptState:
    """Call counters and rule positions; shared with the test thread, hence the lock."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.total = 0
            self.unauthorized = 0
            self.with_auth_header = 0
            self.by_path: Counter[str] = Counter()
            self.by_rule: Counter[str] = Counter()
            self.by_prompt: Counter[str] = Counter()
            self._positions: Counter[tuple[int, str]] = Counter()
            self.last_request: dict[str, Any] | None = None

    def record(self, path: str, prompt: str, body: dict[str, Any], *, auth_header: bool = False) -> Reply:
        """Count one request and choose its reply (header values are never recorded, only their presence)."""
        digest = prompt_hash(prompt)
        with self._lock:
            self.total += 1
            self.with_auth_header += auth_header
            self.by_path[path] += 1
            self.by_prompt[digest] += 1
            self.last_request = body
            for index, rule in enumerate(self.script.rules):
                if rule.match in prompt:
                    self.by_rule[rule.match] += 1
                    position = self._positions[(index, digest)]
                    self._positions[(index, digest)] += 1
                    return rule.replies[min(position, len(rule.replies) - 1)]
        return Reply()

    def record_unauthorized(self) -> None:
        with self._lock:
            self.total += 1
            self.unauthorized += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "total": self.total,
                "unauthorized": self.unauthorized,
                "with_auth_header": self.with_auth_header,
                "by_path": dict(self.by_path),
                "by_rule": dict(self.by_rule),
                "by_prompt": dict(self.by_prompt),
                "last_request": json.loads(json.dumps(self.last_request)),
            }
