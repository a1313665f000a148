"""A run: its specs, per-case results and aggregates (the values every report renders)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidatorFunctionWrapHandler, field_validator

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
    """A run. ``results`` is a list, or a sequence read from the store when iterated (a stored run of a
    million cases is never held in memory at once); ``columns`` (``clineval.core.helpers.columns``), when set,
    are the per-case columns that aggregation, compare and reports read instead of the results."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    info: RunInfo
    results: Sequence[CaseResult]
    aggregates: dict[str, TaskAggregate]
    overall: dict[str, MetricValue] = Field(default_factory=dict)
    # task id -> clineval.core.helpers.columns.TaskColumns (typed Any: importing core.run must not import
    # numpy)
    columns: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)

    @field_validator("results", mode="wrap")
    @classmethod
    def _lazy_results(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        # a store-backed sequence stays lazy; anything else is validated into a list of CaseResults
        if isinstance(value, Sequence) and not isinstance(value, list | tuple | str):
            return value
        return list(handler(value))

    @property
    def run_id(self) -> str:
        return self.info.run_id
