"""The pipeline config file (YAML): which suites a nightly / weekly pipeline runs and how each is checked.

```yaml
name: acme-cds
tenant: acme                       # default "default"
store: sqlite:///.clineval/clineval.db   # optional; --store overrides
alerts: {webhook_url: https://hooks.slack.com/services/..., smtp: {...}}   # optional (docs/runs/alerts.md)
nightly:
  - name: tier1-production         # Tier 1 on last night's production recommendations
    suite: tier1_production.yaml
    floors: {schema_pass_rate: 0.99, escalation_pass_rate: 1.0}
  - name: tier3-golden             # Tier 3 on the held-out golden set, against a promoted baseline
    suite: tier3_golden.yaml
    baseline: golden-main
    mode: statistical              # strict (default) | statistical
weekly:
  - name: tier4-judge              # tracked, never gating: no baseline, no floors
    suite: tier4_judge.yaml
```

A step's regression check is a baseline gate (``clineval gate``: the same cases every night, paired) or
floors (absolute minimums for metrics of sets that change every night, such as a production window, where
a paired comparison with a baseline run is impossible), or both. Suite paths are relative to this file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from clineval.config.errors import suite_error
from clineval.config.yaml_lines import load_yaml
from clineval.core.errors import SuiteError

KINDS = ("nightly", "weekly")
PipelineKind = Literal["nightly", "weekly"]


class StepEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=100)
    suite: str
    baseline: str | None = None
    mode: Literal["strict", "statistical"] = "strict"
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    margin: float = Field(default=0.0, ge=0.0)
    floors: dict[str, float] = Field(default_factory=dict)
    allow_tuned_cases: bool = False  # gate a set that includes tuned-on (train) cases: say so explicitly

    @field_validator("floors")
    @classmethod
    def _finite(cls, floors: dict[str, float]) -> dict[str, float]:
        for metric, value in floors.items():
            if not math.isfinite(value):
                raise ValueError(f"floor of {metric} must be a finite number")
        return floors

    @property
    def gating(self) -> bool:
        return self.baseline is not None or bool(self.floors)


class PipelineFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    tenant: str = Field(default="default", min_length=1, max_length=255)
    store: str | None = None
    alerts: dict[str, Any] | None = None
    nightly: list[StepEntry] = Field(default_factory=list)
    weekly: list[StepEntry] = Field(default_factory=list)


class PipelineConfig(BaseModel):
    """A validated pipeline file; ``suite_path`` resolves a step's suite relative to the file."""

    model_config = ConfigDict(frozen=True)

    path: Path
    file: PipelineFile

    def steps(self, kind: str) -> list[StepEntry]:
        return list(getattr(self.file, kind))

    def suite_path(self, step: StepEntry) -> Path:
        return (self.path.parent / step.suite).resolve()


def load_pipeline_config(path: str | Path) -> PipelineConfig:
    """Parse and validate a pipeline file; a mistake raises SuiteError with its line."""
    doc = load_yaml(Path(path))
    if not isinstance(doc.value, dict):
        raise SuiteError(
            "a pipeline file is a mapping with 'name' and 'nightly'/'weekly'", path=doc.path, line=1
        )
    try:
        parsed = PipelineFile.model_validate(doc.value)
    except ValidationError as err:
        known = list(PipelineFile.model_fields) + list(StepEntry.model_fields)
        raise suite_error(err, doc, known_keys=known) from None
    for kind in KINDS:
        names = [s.name for s in getattr(parsed, kind)]
        for index, step in enumerate(getattr(parsed, kind)):
            line = doc.line_of((kind, index))
            if names.index(step.name) != index:
                raise SuiteError(f"duplicate step name {step.name!r} in {kind}", path=doc.path, line=line)
            if kind == "weekly" and step.gating:
                raise SuiteError(
                    f"weekly step {step.name!r} has a baseline or floors",
                    path=doc.path,
                    line=line,
                    hint="the weekly pipeline runs Tier 4 (LLM judge), which is tracked and never gates",
                )
            suite = (doc.path.parent / step.suite).resolve()
            if not suite.is_file():
                raise SuiteError(
                    f"step {step.name!r}: suite file {suite} not found", path=doc.path, line=line
                )
    return PipelineConfig(path=doc.path, file=parsed)
