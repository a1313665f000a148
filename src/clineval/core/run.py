"""A run: its specs, per-case results and aggregates (the values every report renders)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.core.eval_metric import RunType
from clineval.core.score import CaseResult
from clineval.core.specs import SuiteSpec

MetricValue = float | int | list[float] | None


class TaskAggregate(BaseModel):
    """Aggregates of one task.

    ``scores[metric]`` holds headline metrics with ``<metric>_ci`` intervals beside them and the counts
    ``n``, ``n_failed``, ``n_unscored``; ``strata[key][value][metric]`` the same per metadata value.
    """

    model_config = ConfigDict(frozen=True)

    scores: dict[str, MetricValue]
    strata: dict[str, dict[str, dict[str, MetricValue]]] = Field(default_factory=dict)


class RunInfo(BaseModel):
    """A stored run without its per-case results."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    suite: SuiteSpec
    status: str
    created_at: datetime
    finished_at: datetime | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)
    tenant_id: str = "default"
    run_type: RunType = "adhoc"


class RunResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    info: RunInfo
    results: list[CaseResult]
    aggregates: dict[str, TaskAggregate]
    overall: dict[str, MetricValue] = Field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return self.info.run_id
