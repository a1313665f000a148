"""The ``eval_results`` rows of a finished run and of a gate decision (pure: values in, rows out).

A run gives one row per headline metric of each task (``condition`` NULL) and one per headline metric and
value of the task's ``condition`` stratum, each with the tier of the scorer that produced it (from the
same snapshot a baseline stores, :func:`clineval.analysis.gate.snapshot`). ``metric_name`` is the
aggregation key; the task id, the stratum's ``n`` and the suite name are in ``metadata``.

A gate decision gives one row per compared metric (``run_type='config_gate'``): the candidate's value,
``baseline_id``, ``passed_baseline`` (None for tracked metrics) and, in ``metadata``, its role and
direction, the baseline's value, the delta, the paired test's p-value and interval (statistical mode) and
the gate id.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from clineval.analysis.gate import CONDITION, GateResult, is_headline
from clineval.core import EvalMetric, RunType


def _value(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan


def run_rows(
    snap: Mapping[str, Any], *, run_type: RunType, tenant_id: str, timestamp: datetime
) -> list[EvalMetric]:
    """Rows for every headline metric of a run snapshot, overall and per ``condition``."""
    rows: list[EvalMetric] = []
    for task, data in snap.get("tasks", {}).items():
        tiers: Mapping[str, int | None] = data.get("tiers", {})
        groups: list[tuple[str | None, Mapping[str, Any]]] = [(None, data.get("scores", {}))]
        groups += sorted(data.get("strata", {}).get(CONDITION, {}).items())
        for condition, scores in groups:
            for metric, value in sorted(scores.items()):
                if not is_headline(metric, value):
                    continue
                rows.append(
                    EvalMetric(
                        run_id=str(snap["run_id"]),
                        run_type=run_type,
                        timestamp=timestamp,
                        tenant_id=tenant_id,
                        condition=None if condition is None else str(condition),
                        tier=tiers.get(metric),
                        metric_name=metric,
                        metric_value=_value(value),
                        metadata={"task": task, "suite": snap.get("suite"), "n": scores.get("n")},
                    )
                )
    return rows


def gate_rows(result: GateResult, *, baseline_id: int, gate_id: int, timestamp: datetime) -> list[EvalMetric]:
    """Rows for every metric a gate compared (gating and tracked)."""
    rows: list[EvalMetric] = []
    for r in result.rows:
        condition = r.stratum.split("=", 1)[1] if r.stratum.startswith(f"{CONDITION}=") else None
        rows.append(
            EvalMetric(
                run_id=result.run_id,
                run_type="config_gate",
                timestamp=timestamp,
                tenant_id=result.tenant,
                condition=condition,
                tier=r.tier,
                metric_name=r.metric,
                metric_value=math.nan if r.candidate is None else r.candidate,
                baseline_id=baseline_id,
                passed_baseline=None if r.status == "tracked" else r.status == "pass",
                metadata={
                    "task": r.task,
                    "stratum": r.stratum,
                    "status": r.status,
                    "role": r.role,
                    "direction": r.direction,
                    "mode": result.mode,
                    "baseline_name": result.baseline_name,
                    "baseline_version": result.baseline_version,
                    "baseline_value": r.baseline,
                    "delta": r.delta,
                    "p": r.p,
                    "ci": list(r.ci) if r.ci is not None else None,
                    "note": r.note,
                    "gate_id": gate_id,
                },
            )
        )
    return rows
