"""Per-run sums the viewer shows without reading every case: cases, failed cases, cases per scorer label and
per failure kind, per task (``run_counts``, migration 0010; issue 26).

The writer (:mod:`clineval.store.writer`) adds the counts of each batch it commits in the same transaction
(:func:`batch_rows`), so they are exact while a run is still running, and shards and workers writing one run
add up. :func:`read_counts` trusts them only when their case total equals the run's stored cases (an index
count): a run stored before this table, or with rows committed one at a time after a refused row, or whose
driver could not say how many rows a batch inserted (a ``stale`` row), is counted from its cases instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, func, select

from clineval.core import CaseResult
from clineval.store.tables import case_results, run_counts

_Key = tuple[str, str, str, str | None]  # task, kind, name, value


def batch_rows(run_id: str, results: Iterable[CaseResult]) -> list[dict[str, Any]]:
    """The ``run_counts`` rows of one committed batch (a handful: one per task, kind and value)."""
    found: Counter[_Key] = Counter()
    for result in results:
        task = result.task_id
        found[(task, "n", "", None)] += 1
        error = result.output.error
        if error is not None:
            found[(task, "failed", "", None)] += 1
            found[(task, "failure", "", error.kind)] += 1
        for name, score in result.scores.items():
            found[(task, "label", name, score.label)] += 1
    return [
        {"run_id": run_id, "task_id": task, "kind": kind, "name": name, "value": value, "n": n}
        for (task, kind, name, value), n in found.items()
    ]


def stale_row(run_id: str) -> dict[str, Any]:
    """Marks the run's counts as unusable (a batch whose inserted rows the driver did not report)."""
    return {"run_id": run_id, "task_id": "", "kind": "stale", "name": "", "value": None, "n": 0}


@dataclass
class RunCounts:
    """A run's sums: ``labels[task][scorer][label]`` (a None label as ``"None"``) and
    ``failures[task][kind]``, each ordered by count, largest first."""

    n: int = 0
    failed: int = 0
    labels: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    failures: dict[str, dict[str, int]] = field(default_factory=dict)


def read_counts(conn: Connection, run_id: str) -> RunCounts | None:
    """The run's sums, or None when they cannot be trusted (see the module docstring)."""
    c = run_counts.c
    query = (
        select(c.task_id, c.kind, c.name, c.value, func.sum(c.n))
        .where(c.run_id == run_id)
        .group_by(c.task_id, c.kind, c.name, c.value)
    )
    counts = RunCounts()
    rows = sorted(conn.execute(query).all(), key=lambda r: -int(r[4]))
    for task, kind, name, value, n in rows:
        n = int(n)
        if kind == "stale":
            return None
        if kind == "n":
            counts.n += n
        elif kind == "failed":
            counts.failed += n
        elif kind == "label":
            counts.labels.setdefault(task, {}).setdefault(name, {})[str(value)] = n
        elif kind == "failure":
            counts.failures.setdefault(task, {})[str(value)] = n
    if not rows:
        return None
    stored = conn.execute(select(func.count()).where(case_results.c.run_id == run_id)).scalar_one()
    return counts if counts.n == int(stored) else None
