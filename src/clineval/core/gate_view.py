"""A stored release-gate decision as the reports show it (read from ``gate_results``; nothing recomputed)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, computed_field


class GateDecisionRow(BaseModel):
    """One metric of a gate decision. ``status``: ``pass``, ``fail`` or ``tracked`` (not gating)."""

    model_config = ConfigDict(frozen=True)

    task: str
    metric: str
    stratum: str = ""  # e.g. "condition=copd"; empty for the task-level value
    tier: int | None = None
    baseline: float | None = None
    candidate: float | None = None
    delta: float | None = None
    p: float | None = None  # statistical mode: the Holm-adjusted p-value; None in strict mode
    ci: tuple[float, float] | None = None  # statistical mode: 95% paired bootstrap interval of the delta
    status: str
    note: str = ""
    direction: str = "higher"  # "higher" or "lower" is better (decisions stored before it: higher)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def role(self) -> str:
        """``gate`` (the row decided: pass or fail) or ``track`` (shown, never decides)."""
        return "track" if self.status == "tracked" else "gate"


class GateDecision(BaseModel):
    """One gate decision taken on a run against a promoted baseline version."""

    model_config = ConfigDict(frozen=True)

    baseline_name: str
    baseline_version: int
    tenant: str
    mode: str
    passed: bool
    created_at: datetime
    rows: list[GateDecisionRow] = Field(default_factory=list)

    @property
    def failures(self) -> list[GateDecisionRow]:
        return [r for r in self.rows if r.status == "fail"]
