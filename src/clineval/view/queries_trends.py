"""The trends page's reads: ``eval_results`` over time, baseline promotions and gate decisions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, select

from clineval.store.tables import baselines, eval_results, gate_results, utc


@dataclass(frozen=True)
class TrendPoint:
    timestamp: datetime
    run_id: str
    run_type: str
    condition: str | None
    value: float | None
    passed_baseline: bool | None
    task: str = ""  # the task the row aggregates (its metadata's "task"); a run's tasks are separate series

    @property
    def short_run_id(self) -> str:
        return self.run_id.replace("-", "")[:12]


@dataclass(frozen=True)
class Marker:
    """A baseline promotion or a gate decision, placed on the time axis."""

    at: datetime
    kind: str  # "baseline" | "gate"
    text: str
    run_id: str
    passed: bool | None = None

    @property
    def short_run_id(self) -> str:
        return self.run_id.replace("-", "")[:12]


def choices(engine: Engine) -> tuple[list[str], list[str]]:
    """Every tenant and every metric name that has rows."""
    with engine.connect() as conn:
        tenants = [
            r[0]
            for r in conn.execute(
                select(eval_results.c.tenant_id).distinct().order_by(eval_results.c.tenant_id)
            )
        ]
        metrics = [
            r[0]
            for r in conn.execute(
                select(eval_results.c.metric_name).distinct().order_by(eval_results.c.metric_name)
            )
        ]
    return tenants, metrics


def trend(
    engine: Engine, tenant: str, metric: str, condition: str | None = None, limit: int = 2000
) -> list[TrendPoint]:
    """The metric's values for the tenant, oldest first (task-level rows unless ``condition``)."""
    where: list[Any] = [eval_results.c.tenant_id == tenant, eval_results.c.metric_name == metric]
    where.append(eval_results.c.condition == condition if condition else eval_results.c.condition.is_(None))
    query = select(eval_results).where(*where).order_by(eval_results.c.timestamp.desc()).limit(limit)
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return [
        TrendPoint(
            timestamp=utc(r.timestamp) or r.timestamp,
            run_id=str(r.run_id),
            run_type=r.run_type,
            condition=r.condition,
            value=r.metric_value,
            passed_baseline=r.passed_baseline,
            task=_task(r._mapping["metadata"]),
        )
        for r in reversed(rows)
    ]


def _task(metadata: Any) -> str:
    task = metadata.get("task") if isinstance(metadata, dict) else None
    return str(task) if task is not None else ""


def markers(engine: Engine, tenant: str) -> list[Marker]:
    """Baseline promotions and gate decisions of the tenant, oldest first."""
    with engine.connect() as conn:
        promoted = conn.execute(select(baselines).where(baselines.c.tenant == tenant)).all()
        gated = conn.execute(select(gate_results).where(gate_results.c.tenant == tenant)).all()
    found = [
        Marker(utc(r.promoted_at) or r.promoted_at, "baseline", f"baseline {r.name} v{r.version}", r.run_id)
        for r in promoted
    ]
    found += [
        Marker(
            utc(r.created_at) or r.created_at,
            "gate",
            f"gate vs {r.baseline_name} v{r.baseline_version}: {'PASS' if r.passed else 'FAIL'}",
            r.run_id,
            bool(r.passed),
        )
        for r in gated
    ]
    return sorted(found, key=lambda m: m.at)
