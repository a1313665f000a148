"""The "Release gate" section: stored gate decisions of the run, as given to the report (never recomputed).

Per decision: a PASS/FAIL heading (baseline name and version, tenant, mode, date), the failed rows first,
then the passed gating rows when there are at most :data:`MAX_LISTED` gating rows (otherwise only the
failed ones), and counts of passed and tracked rows. Tracked (non-gating) rows are counted, not listed;
``report.json`` keeps every row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clineval.core import GateDecision, GateDecisionRow
from clineval.report.formatting import is_number, jsonable

MAX_LISTED = 30
NA = "n/a"


@dataclass(frozen=True)
class GateRowView:
    status: str
    task: str
    metric: str
    stratum: str
    baseline: str
    candidate: str
    delta: str
    p: str
    note: str


@dataclass(frozen=True)
class GateView:
    verdict: str  # "PASS" | "FAIL"
    baseline: str  # "main v3"
    tenant: str
    mode: str
    date: str
    rows: list[GateRowView]  # failed first, then (when listed) passed gating rows
    n_failed: int
    n_passed: int
    n_tracked: int
    passed_listed: bool
    show_notes: bool

    @property
    def summary(self) -> str:
        gating = self.n_failed + self.n_passed
        text = f"{self.n_failed} of {gating} gating metric(s) regressed; {self.n_passed} passed"
        if not self.passed_listed and self.n_passed:
            text += " (not listed)"
        return f"{text}; {self.n_tracked} tracked (not gating, not listed)."


def _num(value: float | None) -> str:
    return f"{value:.4f}" if is_number(value) else NA


def _delta(value: float | None) -> str:
    return f"{value:+.4f}" if is_number(value) else NA


def _row(row: GateDecisionRow) -> GateRowView:
    return GateRowView(
        status=row.status,
        task=row.task,
        metric=row.metric + (" (lower is better)" if row.direction == "lower" else ""),
        stratum=row.stratum,
        baseline=_num(row.baseline),
        candidate=_num(row.candidate),
        delta=_delta(row.delta),
        p=_num(row.p),
        note=row.note,
    )


def gate_view(decision: GateDecision) -> GateView:
    failed = [r for r in decision.rows if r.status == "fail"]
    passed = [r for r in decision.rows if r.status == "pass"]
    n_tracked = len(decision.rows) - len(failed) - len(passed)
    listed = len(failed) + len(passed) <= MAX_LISTED
    shown = failed + (passed if listed else [])
    return GateView(
        verdict="PASS" if decision.passed else "FAIL",
        baseline=f"{decision.baseline_name} v{decision.baseline_version}",
        tenant=decision.tenant,
        mode=decision.mode,
        date=decision.created_at.strftime("%Y-%m-%d %H:%M UTC"),
        rows=[_row(r) for r in shown],
        n_failed=len(failed),
        n_passed=len(passed),
        n_tracked=n_tracked,
        passed_listed=listed,
        show_notes=any(r.note for r in shown),
    )


def gate_views(gates: Sequence[GateDecision]) -> list[GateView]:
    return [gate_view(g) for g in gates]


def gates_json(gates: Sequence[GateDecision]) -> list[Any]:
    """The decisions for ``report.json``: every row, NaN as null, dates as ISO 8601."""
    return [jsonable(g.model_dump(mode="python")) | {"created_at": g.created_at.isoformat()} for g in gates]
