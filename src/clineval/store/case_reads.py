"""Reading a run's case results back (``case_results``): keys, full results, summaries, slices, counts.

A mixin of :class:`~clineval.store.store.ResultStore` (its ``engine``); every method runs its own short
read. Results come back in insertion order (``case_results.id``).

Run counts (``run_counts``, migration 0010; issue 26): the per-run sums the viewer shows without reading every
case: cases, failed cases, cases per scorer label and per failure kind, per task. The writer
(:mod:`clineval.store.writer`) adds the counts of each batch it commits in the same transaction
(:func:`batch_rows`), so they are exact while a run is still running, and shards and workers writing one run
add up. :func:`read_counts` trusts them only when their case total equals the run's stored cases (an index
count): a run stored before this table, or with rows committed one at a time after a refused row, or whose
driver could not say how many rows a batch inserted (a ``stale`` row), is counted from its cases instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine, Text, case, func, select, type_coerce

from clineval.core import CaseResult
from clineval.store.keys import case_key
from clineval.store.tables import case_results, is_tagged, loads, run_counts


def case_result(raw: Any) -> CaseResult:
    """From the stored JSON text (or an already parsed value, as some drivers return)."""
    if not isinstance(raw, str | bytes):
        return CaseResult.model_validate(raw)
    if is_tagged(raw if isinstance(raw, str) else raw.decode()):
        return CaseResult.model_validate(loads(raw))
    return CaseResult.model_validate_json(raw)


class CaseResultReads:
    """The case-result reads of a store (see the module docstring)."""

    engine: Engine

    def case_counts(self, run_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        """``run_id -> (cases stored, of which failed)``; runs without results are absent."""
        ids = list(run_ids)
        failed = func.sum(case((case_results.c.status == "failed", 1), else_=0))
        query = (
            select(case_results.c.run_id, func.count(), failed)
            .where(case_results.c.run_id.in_(ids))
            .group_by(case_results.c.run_id)
        )
        with self.engine.connect() as conn:
            return {row[0]: (int(row[1]), int(row[2] or 0)) for row in conn.execute(query)}

    def finished_keys(self, run_id: str) -> set[tuple[str, str]]:
        """``(task_id, case_id)`` of every stored result of the run (failed ones included)."""
        query = select(case_results.c.task_id, case_results.c.case_id).where(case_results.c.run_id == run_id)
        with self.engine.connect() as conn:
            return {(row[0], row[1]) for row in conn.execute(query)}

    def load_results(self, run_id: str) -> list[CaseResult]:
        """Every stored result of the run, in insertion order."""
        raw = type_coerce(case_results.c.result, Text)  # the JSON text: parsed and validated in one step
        query = select(raw).where(case_results.c.run_id == run_id).order_by(case_results.c.id)
        with self.engine.connect() as conn:
            return [case_result(row[0]) for row in conn.execute(query)]

    def iter_results(self, run_id: str, batch: int = 1000) -> Iterator[CaseResult]:
        """Every stored result of the run, in insertion order, read ``batch`` rows at a time (a server-side
        cursor where the driver has one): for writing them out without holding them all."""
        raw = type_coerce(case_results.c.result, Text)
        query = select(raw).where(case_results.c.run_id == run_id).order_by(case_results.c.id)
        with self.engine.connect() as conn:
            rows = conn.execution_options(yield_per=batch).execute(query)
            for row in rows:
                yield case_result(row[0])

    def iter_summaries(self, run_id: str, batch: int = 5000) -> Iterator[tuple[str, str, str | None]]:
        """``(task_id, case_id, summary JSON or None)`` of every stored result, in insertion order, read
        ``batch`` rows at a time; None for results stored before summaries were (read them in full)."""
        cols = case_results.c
        query = (
            select(cols.task_id, cols.case_id, cols.summary).where(cols.run_id == run_id).order_by(cols.id)
        )
        with self.engine.connect() as conn:
            for row in conn.execution_options(yield_per=batch).execute(query):
                yield row[0], row[1], row[2]

    def results_for(self, run_id: str, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], CaseResult]:
        """The stored results of the given ``(task_id, case_id)`` keys (those stored), read in full."""
        stored_keys = list(dict.fromkeys(case_key(*key) for key in keys))  # read through the unique index
        raw = type_coerce(case_results.c.result, Text)
        found: dict[tuple[str, str], CaseResult] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(stored_keys), 500):
                chunk = stored_keys[start : start + 500]
                query = select(raw).where(case_results.c.run_id == run_id, case_results.c.case_key.in_(chunk))
                for row in conn.execute(query):
                    result = case_result(row[0])
                    found[(result.task_id, result.case_id)] = result
        return found

    def results_slice(self, run_id: str, start: int, stop: int) -> list[CaseResult]:
        """The stored results at positions ``start`` to ``stop`` (exclusive) in insertion order."""
        raw = type_coerce(case_results.c.result, Text)
        query = select(raw).where(case_results.c.run_id == run_id).order_by(case_results.c.id)
        query = query.offset(start).limit(max(0, stop - start))
        with self.engine.connect() as conn:
            return [case_result(row[0]) for row in conn.execute(query)]

    def count_results(self, run_id: str) -> int:
        query = select(func.count()).select_from(case_results).where(case_results.c.run_id == run_id)
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())


# -- run counts (see the module docstring) ------------------------------------------------------------------

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
