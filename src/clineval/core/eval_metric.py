"""One row of the ``eval_results`` table: one metric value of one run, tenant, tier and condition."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

RunType = Literal["nightly", "weekly", "config_gate", "adhoc"]
RUN_TYPES: tuple[str, ...] = ("nightly", "weekly", "config_gate", "adhoc")


class EvalMetric(BaseModel):
    """A metric value as stored for trend queries, dashboards and alerting.

    ``condition`` is None for a task-level (aggregate) value; ``tier`` is 1-4 for the four-tier CDS
    metrics and None for metrics outside that taxonomy (MCQ accuracy, DDx recall...). ``metric_value`` NaN
    means "not scorable" (stored as NULL). ``baseline_id`` / ``passed_baseline`` are set by a gate
    (``run_type='config_gate'``) and by pipeline regression checks; ``passed_baseline`` is None for
    tracked metrics.
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    run_type: RunType
    timestamp: datetime
    tenant_id: str
    metric_name: str
    metric_value: float
    condition: str | None = None
    tier: int | None = Field(default=None, ge=1, le=4)
    baseline_id: int | None = None
    passed_baseline: bool | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("timestamp")
    @classmethod
    def _tz_aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("timestamp must be timezone-aware")
        return value

    @property
    def scorable(self) -> bool:
        return not math.isnan(self.metric_value)
