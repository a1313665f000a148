"""Metric values per row (``eval_results``): what dashboards, trend queries and alerts read.

Rows are only ever inserted. A NaN value ("not scorable") is stored as NULL and read back as NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypedDict

from sqlalchemy import ColumnElement, Connection, Engine, Row, delete, func, insert, select

from clineval.core import EvalMetric
from clineval.core.errors import UserInputError
from clineval.core.eval_metric import RUN_TYPES
from clineval.store.tables import eval_results, utc

INSERT_BATCH = 5_000


class RowFilters(TypedDict, total=False):
    """The filters :meth:`EvalResultStore.query` and :meth:`EvalResultStore.count` take."""

    tenant_id: str | None
    run_id: str | None
    run_type: str | None
    metric_name: str | None
    condition: str | None
    since: datetime | None


def _values(row: EvalMetric) -> dict[str, Any]:
    value = row.metric_value
    return {
        "run_id": row.run_id,
        "run_type": row.run_type,
        "timestamp": row.timestamp,
        "tenant_id": row.tenant_id,
        "condition": row.condition,
        "tier": row.tier,
        "metric_name": row.metric_name,
        "metric_value": value if math.isfinite(value) else None,
        "baseline_id": row.baseline_id,
        "passed_baseline": row.passed_baseline,
        "metadata": row.metadata,
    }


def _metric(row: Row[Any]) -> EvalMetric:
    return EvalMetric(
        run_id=str(row.run_id).replace("-", ""),  # PostgreSQL's uuid comes back hyphenated
        run_type=row.run_type,
        timestamp=utc(row.timestamp),
        tenant_id=row.tenant_id,
        condition=row.condition,
        tier=row.tier,
        metric_name=row.metric_name,
        metric_value=math.nan if row.metric_value is None else float(row.metric_value),
        baseline_id=row.baseline_id,
        passed_baseline=row.passed_baseline,
        metadata=dict(row.metadata or {}),
    )


def _insert(conn: Connection, values: list[dict[str, Any]]) -> None:
    for start in range(0, len(values), INSERT_BATCH):
        conn.execute(insert(eval_results), values[start : start + INSERT_BATCH])


def replace_run_rows(conn: Connection, run_id: str, rows: Iterable[EvalMetric]) -> int:
    """:meth:`EvalResultStore.replace_run_rows` inside the caller's transaction (finalizing a run)."""
    values = [_values(r) for r in rows]
    kept = eval_results.c.run_type == "config_gate"  # gate decisions: taken at a point in time
    conn.execute(delete(eval_results).where(eval_results.c.run_id == run_id, ~kept))
    _insert(conn, values)
    return len(values)


class EvalResultStore:
    """``eval_results`` in the store's database (the table is created by the store's migrations)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record(self, rows: Iterable[EvalMetric]) -> int:
        """Insert ``rows`` in one transaction; returns how many."""
        values = [_values(r) for r in rows]
        with self.engine.begin() as conn:
            _insert(conn, values)
        return len(values)

    def replace_run_rows(self, run_id: str, rows: Iterable[EvalMetric]) -> int:
        """The metric rows of a (re-)finalised run: its earlier non-gate rows are replaced, atomically.

        A run is finalised again when it is resumed or re-weighted; gate rows (``config_gate``) are
        decisions taken at a point in time and are kept.
        """
        with self.engine.begin() as conn:
            return replace_run_rows(conn, run_id, rows)

    def query(
        self,
        *,
        tenant_id: str | None = None,
        run_id: str | None = None,
        run_type: str | None = None,
        metric_name: str | None = None,
        condition: str | None = None,
        since: datetime | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[EvalMetric]:
        """Stored rows matching every given filter, oldest first (``newest_first``: the newest ``limit``
        rows, newest first; the rows of one finalisation, which share its time, in the order written)."""
        conditions = _conditions(tenant_id, run_id, run_type, metric_name, condition, since)
        when = eval_results.c.timestamp.desc() if newest_first else eval_results.c.timestamp
        query = select(eval_results).where(*conditions).order_by(when, eval_results.c.id)
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            return [_metric(row) for row in conn.execute(query)]

    def count(
        self,
        *,
        tenant_id: str | None = None,
        run_id: str | None = None,
        run_type: str | None = None,
        metric_name: str | None = None,
        condition: str | None = None,
        since: datetime | None = None,
    ) -> int:
        """How many stored rows match every given filter (``query``'s, without its limit)."""
        conditions = _conditions(tenant_id, run_id, run_type, metric_name, condition, since)
        with self.engine.connect() as conn:
            return int(
                conn.execute(select(func.count()).select_from(eval_results).where(*conditions)).scalar_one()
            )


def _conditions(
    tenant_id: str | None,
    run_id: str | None,
    run_type: str | None,
    metric_name: str | None,
    condition: str | None,
    since: datetime | None,
) -> list[ColumnElement[bool]]:
    if run_type is not None and run_type not in RUN_TYPES:
        raise UserInputError(f"unknown run type {run_type!r}", hint=f"use one of: {', '.join(RUN_TYPES)}")
    filters = {
        "tenant_id": tenant_id,
        "run_id": run_id,
        "run_type": run_type,
        "metric_name": metric_name,
        "condition": condition,
    }
    found = [eval_results.c[column] == value for column, value in filters.items() if value is not None]
    if since is not None:
        found.append(eval_results.c.timestamp >= since)
    return found
