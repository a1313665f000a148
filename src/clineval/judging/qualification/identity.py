"""Which judge a qualification is about, and which qualification a judged run used: the **judge key**.

A judge is the model, the prompt template (its name and the sha256 of its text, as the run's spec records
it in ``judge.args["prompts"]``) and the settings that change its answers. From a task's judge spec
(``TaskSpec.judge``, an ``openai`` system spec; ``config.build._judge_spec``):

* ``settings`` = every arg but the endpoint and its credentials (``base_url``, ``api_key_env``), the model
  and the prompt (keyed separately), and the bookkeeping ``prompts`` / ``prompt_settings`` /
  ``allow_same_model`` / ``same_model_as_system``; the prompt's own ``prompt_settings`` (e.g. the
  HealthBench reference grader's temperature) override the shared ones. So ``temperature``, ``max_tokens``,
  ``seed``, ``system_prompt``, ``output``, ``conversation``.
* ``judge_key`` = sha256 of the canonical JSON ``[model, prompt, prompt_hash, settings]``.

The endpoint (``base_url``) is recorded but not matched: the same model behind another gateway is the same
judge. An API key is never part of a spec (only the *name* of its environment variable), so none can be
stored. A run reports the qualification of every prompt its scorers ask (``args["prompts"]``), or of the
judge's own prompt when no scorer names one (an equivalence-judge-only task).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clineval.core import ComponentSpec
from clineval.core.specs import canonical_json

NOT_SETTINGS = frozenset(
    {
        "base_url",
        "api_key_env",
        "model",
        "prompt",
        "prompts",
        "prompt_settings",
        "allow_same_model",
        "same_model_as_system",
    }
)


def _sha256(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class JudgeIdentity:
    model: str
    prompt: str
    prompt_hash: str
    settings: Mapping[str, Any] = field(default_factory=dict, hash=False)
    endpoint: str = ""

    @property
    def settings_hash(self) -> str:
        return _sha256(dict(self.settings))

    @property
    def judge_key(self) -> str:
        return _sha256([self.model, self.prompt, self.prompt_hash, dict(self.settings)])

    def describe(self) -> str:
        """``model M + prompt P@abcd1234 + settings ef567890`` (what a banner names)."""
        prompt = f"{self.prompt}@{self.prompt_hash[:8]}"
        return f"model {self.model} + prompt {prompt} + settings {self.settings_hash[:8]}"


def judge_identities(spec: ComponentSpec) -> dict[str, JudgeIdentity]:
    """One identity per prompt the judge serves (its own prompt and every scorer prompt)."""
    args = dict(spec.args)
    shared = {k: v for k, v in sorted(args.items()) if k not in NOT_SETTINGS}
    hashes: dict[str, str] = {}
    own = args.get("prompt")
    if isinstance(own, str) and spec.content_hash:
        hashes[own] = spec.content_hash
    hashes.update({str(k): str(v) for k, v in (args.get("prompts") or {}).items()})
    per_prompt = args.get("prompt_settings") or {}
    found = {}
    for prompt, digest in sorted(hashes.items()):
        settings = {
            **shared,
            **{k: v for k, v in (per_prompt.get(prompt) or {}).items() if k not in NOT_SETTINGS},
        }
        found[prompt] = JudgeIdentity(
            model=str(args.get("model") or spec.type),
            prompt=prompt,
            prompt_hash=digest,
            settings=dict(sorted(settings.items())),
            endpoint=str(args.get("base_url") or ""),
        )
    return found


def reported_prompts(spec: ComponentSpec) -> list[str]:
    """The prompts whose qualification a run reports: the scorers' prompts, else the judge's own."""
    prompts = sorted(str(p) for p in (spec.args.get("prompts") or {}))
    own = spec.args.get("prompt")
    return prompts or ([own] if isinstance(own, str) else [])
