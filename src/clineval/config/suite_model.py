"""The suite file's shape (pydantic, unknown keys rejected so a typo is an error, not a silent default)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class DatasetEntry(BaseModel):
    model_config = ConfigDict(extra="allow")
    format: str

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class SystemEntry(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class TaskEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    dataset: DatasetEntry
    system: SystemEntry
    scorers: list[str | dict[str, dict[str, Any] | None]] = Field(min_length=1)
    stratify: list[str] = Field(default_factory=list)
    annotate: list[str | dict[str, dict[str, Any] | None]] = Field(default_factory=list)
    mcq_selection: dict[str, Any] | None = None
    equivalence_judge: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    counterfactual: dict[str, Any] | None = None  # clineval.counterfactual.task.CounterfactualOption
    description: str | None = None

    @field_validator("scorers", "annotate")
    @classmethod
    def _one_name_per_mapping(cls, value: list[Any]) -> list[Any]:
        for entry in value:
            if isinstance(entry, dict) and len(entry) != 1:
                raise ValueError("a scorer is a name or a mapping {name: {options}} with exactly one name")
        return value


class CombinedScoreEntry(BaseModel):
    """``combined_score: {weights: {diagnostics: 0.4, safety: 0.3, ...}}`` (see clineval.metrics.combined)."""

    model_config = ConfigDict(extra="forbid")
    weights: dict[str, float] = Field(min_length=1)
    name: str = "combined_score"
    renormalize: bool = True
    categories: str | None = None  # a metric -> category YAML overriding the packaged one
    n_resamples: int = Field(default=1000, ge=10)
    seed: int = 0
    strict: bool = False  # a weighted category with no metric in a task: an error, not a warning


class SuiteFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    description: str | None = None
    combined_score: CombinedScoreEntry | None = None
    tasks: list[TaskEntry] = Field(min_length=1)
