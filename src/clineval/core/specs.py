"""Specs: how every component of a run was built (name + args + content hash), so a run can be reproduced."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: the input of every content hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ComponentSpec(BaseModel):
    """A registry entry as built: ``type`` names the factory, ``args`` its options.

    ``content_hash`` covers what the args point to (dataset bytes, prompt template, vocabularies), so two
    runs with the same spec hash saw the same inputs.
    """

    model_config = ConfigDict(frozen=True)

    type: str
    args: dict[str, Any] = Field(default_factory=dict)
    content_hash: str | None = None

    @property
    def spec_hash(self) -> str:
        return sha256_text(canonical_json(self.model_dump(mode="json")))


class TaskSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    dataset: ComponentSpec
    system: ComponentSpec
    scorers: list[ComponentSpec]
    stratify: list[str] = Field(default_factory=list)
    annotators: list[ComponentSpec] = Field(default_factory=list)
    selection: ComponentSpec | None = None
    judge: ComponentSpec | None = None  # the optional LLM equivalence judge (an ``openai`` system)
    # the counterfactual option as validated (clineval.counterfactual.task); left out of the dump (and so of
    # every hash) when None, so the spec hash of a suite without it is what it was before the option existed
    counterfactual: dict[str, Any] | None = None

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.counterfactual is None:
            data.pop("counterfactual", None)
        return data

    @property
    def spec_hash(self) -> str:
        return sha256_text(canonical_json(self.model_dump(mode="json")))


class SuiteSpec(BaseModel):
    """A parsed suite. ``limit`` / ``seed`` are the sampling applied to every task."""

    model_config = ConfigDict(frozen=True)

    name: str
    tasks: list[TaskSpec]
    source: str | None = None
    limit: int | None = None
    seed: int = 0
    combined: ComponentSpec | None = None  # combined-score weights and options (clineval.metrics.combined)

    @property
    def spec_hash(self) -> str:
        return sha256_text(canonical_json(self.model_dump(mode="json", exclude={"source"})))
