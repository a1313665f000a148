"""``PROVIDER/MODEL`` model specs -> the options of an ``openai`` system (an OpenAI-compatible endpoint).

| provider | base URL (``--base-url`` overrides) | API key read from (at call time, never stored) |
| --- | --- | --- |
| ``openai`` | ``$OPENAI_BASE_URL``, else https://api.openai.com/v1 | ``OPENAI_API_KEY`` |
| ``vllm`` | http://localhost:8000/v1 | ``VLLM_API_KEY`` (optional) |
| ``ollama`` | http://localhost:11434/v1 | ``OLLAMA_API_KEY`` (optional) |
| ``llamacpp`` | http://localhost:8080/v1 | ``LLAMACPP_API_KEY`` (optional) |

Only the *name* of the key's environment variable enters the suite; the ``openai`` system reads the key when
it calls (see ``clineval.systems.openai_chat``), so a key never reaches a log, a report or the store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clineval.core.errors import UserInputError


@dataclass(frozen=True)
class Provider:
    name: str
    default_base_url: str
    api_key_env: str
    base_url_env: str | None = None


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", base_url_env="OPENAI_BASE_URL"),
        Provider("vllm", "http://localhost:8000/v1", "VLLM_API_KEY"),
        Provider("ollama", "http://localhost:11434/v1", "OLLAMA_API_KEY"),
        Provider("llamacpp", "http://localhost:8080/v1", "LLAMACPP_API_KEY"),
    )
}


@dataclass(frozen=True)
class ModelSpec:
    provider: str
    model: str
    base_url: str
    api_key_env: str

    def system_options(self) -> dict[str, Any]:
        """The ``openai`` system's options (no key: only the name of its environment variable)."""
        return {"base_url": self.base_url, "model": self.model, "api_key_env": self.api_key_env}


def parse_model(
    text: str, base_url: str | None = None, environ: Mapping[str, str] | None = None, option: str = "--model"
) -> ModelSpec:
    """``PROVIDER/MODEL`` (the model name may itself hold slashes: ``vllm/meta-llama/Llama-3-8B``)."""
    env = os.environ if environ is None else environ
    provider_name, sep, model = text.partition("/")
    known = ", ".join(PROVIDERS)
    if not sep or not model.strip():
        raise UserInputError(
            f"{option} {text!r} is not PROVIDER/MODEL", hint=f"e.g. openai/gpt-4o-mini; providers: {known}"
        )
    provider = PROVIDERS.get(provider_name.lower())
    if provider is None:
        raise UserInputError(f"{option}: unknown provider {provider_name!r}", hint=f"use one of: {known}")
    url = base_url or (env.get(provider.base_url_env) if provider.base_url_env else None)
    url = (url or provider.default_base_url).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise UserInputError(f"base URL {url!r} is not http(s)://...", hint="e.g. http://localhost:8000/v1")
    return ModelSpec(provider.name, model.strip(), url, provider.api_key_env)


def provider_table() -> str:
    """The providers as a Markdown table (the command help and docs/runs/catalogue.md show it)."""
    rows = ["| provider | default base URL | API key variable |", "| --- | --- | --- |"]
    for p in PROVIDERS.values():
        url = f"${p.base_url_env}, else {p.default_base_url}" if p.base_url_env else p.default_base_url
        rows.append(f"| {p.name} | {url} | {p.api_key_env} |")
    return "\n".join(rows)
