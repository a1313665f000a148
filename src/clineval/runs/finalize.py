"""Finalize a run: aggregate everything the store holds for it, mark it finished, write its metric rows.

Last step of the lifecycle (request -> plan -> execute -> finalize). An unsharded run finalizes itself; a
sharded run is finalized once, by the last shard or by ``clineval finalize`` (``clineval.runs.shards``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from clineval.analysis import degradation
from clineval.analysis.case_summary import SummaryPlan
from clineval.analysis.eval_rows import run_rows
from clineval.analysis.gate import snapshot
from clineval.analysis.usage import PriceTable, usage_from_totals
from clineval.core import CaseResult, EvalMetric, RunResult, SuiteSpec, TaskAggregate
from clineval.core.system_identity import task_system_names
from clineval.metrics.aggregate import aggregate_columns, aggregate_task, overall_by_system, overall_scores
from clineval.metrics.combine import add_combined
from clineval.runs.counterfactual import add_counterfactual
from clineval.runs.stored import open_run as open_stored_run
from clineval.runs.stored import read_totals, scorers_for
from clineval.store import ResultStore


def aggregate_results(spec: SuiteSpec, results: Sequence[CaseResult]) -> dict[str, TaskAggregate]:
    scorers = scorers_for(spec)
    by_task: dict[str, list[CaseResult]] = {t.id: [] for t in spec.tasks}
    for result in results:
        by_task.setdefault(result.task_id, []).append(result)
    return {t.id: aggregate_task(by_task[t.id], scorers[t.id], t.stratify) for t in spec.tasks}


def finalize_run(
    store: ResultStore,
    run_id: str,
    extra_provenance: dict[str, object] | None = None,
    degraded_threshold: float | None = None,
    prices: PriceTable | None = None,
) -> RunResult:
    """Aggregate everything the store holds for a run, mark it finished, and return the RunResult.

    Everything is computed from the run's case summaries read column-wise (``clineval.runs.stored``), so
    memory does not grow with the results' size; the returned run reads its results from the store when
    they are iterated. With ``degraded_threshold``, the components that failed on too many cases are
    assessed (``clineval.analysis.degradation``): ``provenance["degradation"]``, and a line each in
    ``warnings``. Token usage per task (and its cost where ``prices`` names the model) goes to
    ``provenance["usage"]`` (``clineval.analysis.usage``)."""
    info = store.get_run(run_id)
    scorers = scorers_for(info.suite)
    totals = read_totals(store, info, SummaryPlan.for_suite(info.suite, scorers))
    extra = dict(extra_provenance or {})
    if degraded_threshold is not None:
        assessed = degradation.assess_components(totals.components(), degraded_threshold)
        earlier = extra.get("warnings")
        extra["warnings"] = [*(earlier if isinstance(earlier, list) else []), *assessed["warnings"]]
        extra["degradation"] = assessed
    extra["usage"] = usage_from_totals(info.suite, totals.usage_totals(), prices)
    n_stored = totals.n_cases
    columns = totals.columns()
    aggregates = {t.id: aggregate_columns(columns[t.id], scorers[t.id], t.stratify) for t in info.suite.tasks}
    systems = task_system_names(info.suite)  # no mean over tasks of different systems (report_format.md)
    overall = overall_scores(aggregates, systems)
    extra["overall_by_system"] = overall_by_system(aggregates, systems)
    aggregates = add_counterfactual(store, info, aggregates, extra)  # issue 27: before the metric rows
    aggregates, overall = add_combined(info.suite, scorers, columns, aggregates, overall, extra)
    expected = sum(int(info.provenance.get("task_sizes", {}).get(t.id, 0)) for t in info.suite.tasks)
    status = "finished" if n_stored >= expected else "partial"
    now = datetime.now(UTC)
    done = info.model_copy(update={"status": status, "finished_at": now})
    rows = metric_rows(RunResult(info=done, results=[], aggregates=aggregates, columns=columns))
    # one transaction (aggregates, status, provenance, eval_results): a kill leaves it unfinalized, not half
    store.finish_run(
        info.run_id, aggregates, overall, status, extra_provenance=extra, metrics=rows, finished_at=now
    )
    return open_stored_run(store, info.run_id, columns)


def metric_rows(run: RunResult) -> list[EvalMetric]:
    """The run's rows of ``eval_results``: every headline metric, overall and per condition, with its tier."""
    snap = snapshot(run, scorers_for(run.info.suite))
    timestamp = run.info.finished_at or datetime.now(UTC)
    return run_rows(snap, run_type=run.info.run_type, tenant_id=run.info.tenant_id, timestamp=timestamp)


def record_metrics(store: ResultStore, run: RunResult) -> int:
    """Write (or rewrite) the run's rows of ``eval_results`` (:func:`metric_rows`)."""
    return store.eval_results.replace_run_rows(run.run_id, metric_rows(run))
