"""Stored runs read column-wise: what finalize, report, compare and the gate use instead of every result.

:func:`read_totals` folds a run's case summaries (``case_results.summary``) into columns, failure counts
and usage totals, ~100 bytes per case; :func:`open_run` returns a ``RunResult`` whose ``results`` are read
from the store only when iterated (``StoredResults``) and whose ``columns`` are built. Like ``api``, this
module wires the library together.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from clineval.analysis.case_summary import RunTotals, SummaryPlan
from clineval.core import CaseResult, RunInfo, RunResult, Scorer, SuiteSpec
from clineval.core.helpers.columns import TaskColumns
from clineval.core.helpers.lines import loads
from clineval.scoring.registry import SCORERS
from clineval.store import ResultStore

PLAN_KEY = "summary_plan"  # provenance: the fingerprint of the plan the run's summaries were made under


def scorers_for(spec: SuiteSpec) -> dict[str, list[Scorer]]:
    """Rebuild each task's scorers from the stored specs (so any stored run can be re-aggregated)."""
    return {t.id: [SCORERS.get(s.type)(s.args) for s in t.scorers] for t in spec.tasks}


def summary_plan(spec: SuiteSpec) -> SummaryPlan:
    return SummaryPlan.for_suite(spec, scorers_for(spec))


def read_totals(store: ResultStore, info: RunInfo, plan: SummaryPlan | None = None) -> RunTotals:
    """The run's columns and totals from its stored summaries, in insertion order.

    A run stored before summaries existed, or under another plan (another clineval version's scorers), is
    summarized again from its full results, so the totals never come from summaries missing a key.
    """
    plan = plan or summary_plan(info.suite)
    if info.provenance.get(PLAN_KEY) == plan.fingerprint:
        totals = RunTotals(plan)
        for task_id, case_id, text in store.iter_summaries(info.run_id):
            if text is None:
                break
            totals.add(task_id, case_id, loads(text))  # msgspec: json's values, ~3x faster
        else:
            return totals
    totals = RunTotals(plan)
    totals.add_results(store.iter_results(info.run_id))
    return totals


class StoredResults(Sequence[CaseResult]):
    """A stored run's results, read from the store (in batches) each time they are iterated.

    ``len`` is known without reading; an index or a slice reads only those results (by position in
    insertion order); ``by_keys`` reads given cases (a report's samples).
    """

    def __init__(self, store: ResultStore, run_id: str, count: int) -> None:
        self._store = store
        self._run_id = run_id
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[CaseResult]:
        return self._store.iter_results(self._run_id)

    @overload
    def __getitem__(self, index: int) -> CaseResult: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[CaseResult]: ...
    def __getitem__(self, index: int | slice) -> CaseResult | Sequence[CaseResult]:
        if isinstance(index, slice):
            positions = range(self._count)[index]
            if positions.step == 1:  # one range query, not every result
                return self._store.results_slice(self._run_id, positions.start, positions.stop)
            return [self[i] for i in positions]
        position = range(self._count)[index]  # IndexError as a list gives it
        return self._store.results_slice(self._run_id, position, position + 1)[0]

    def by_keys(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], CaseResult]:
        """The results of the given ``(task_id, case_id)`` keys, read alone."""
        return self._store.results_for(self._run_id, keys)

    def __repr__(self) -> str:
        return f"StoredResults(run_id={self._run_id!r}, n={self._count})"


def open_run(store: ResultStore, run_id: str, columns: dict[str, TaskColumns] | None = None) -> RunResult:
    """The run with its stored aggregates and its columns (read from its summaries unless given), its
    results read on demand (the store must stay open while they are iterated: its engine reconnects after
    ``close``, so a file or server store can be read later)."""
    info = store.get_run(run_id)
    if columns is None:
        columns = read_totals(store, info).columns()
    run = store.load_run(info.run_id, results=())
    results = StoredResults(store, info.run_id, sum(len(c) for c in columns.values()))
    return run.model_copy(update={"results": results, "columns": columns})


def columns_of_run(run: RunResult) -> dict[str, TaskColumns]:
    """The run's columns: those it carries, else built from its results."""
    if run.columns is not None:
        return run.columns
    totals = RunTotals(summary_plan(run.info.suite))
    totals.add_results(run.results)
    return totals.columns()
