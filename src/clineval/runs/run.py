"""The library entry points the CLI calls: run a suite (or resume one), rebuild a stored run, write reports.

This is the one place that wires config, runner, store, metrics and report together; it holds no logic of
its own beyond that wiring.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from clineval import systems
from clineval.analysis import degradation
from clineval.analysis.case_summary import SummaryPlan
from clineval.analysis.eval_rows import run_rows
from clineval.analysis.gate import snapshot
from clineval.analysis.usage import PriceTable, load_prices, usage_from_totals
from clineval.config import BuiltSuite, BuiltTask, load_suite
from clineval.core import CaseResult, EvalMetric, RunInfo, RunResult, RunType, SuiteSpec, TaskAggregate
from clineval.core.errors import UserInputError
from clineval.datasets.lazy_cases import case_ids, where_id
from clineval.metrics.aggregate import aggregate_columns, aggregate_task, overall_by_system, overall_scores
from clineval.metrics.combine import add_combined, check_strict, combined_spec
from clineval.report.systems import task_system_names
from clineval.runner.cache import ResponseCache
from clineval.runner.engine import RunSettings, TaskStats, run_gc, run_task
from clineval.runner.policy import CallPolicy
from clineval.runs.interrupts import RunInterrupted, resume_command, store_write_error
from clineval.runs.provenance import effective_options, provenance
from clineval.runs.stored import PLAN_KEY, read_totals
from clineval.runs.stored import open_run as open_stored_run
from clineval.runs.stored import scorers_for as scorers_for  # re-exported: callers use api.scorers_for
from clineval.store import ResultStore
from clineval.store.errors import write_failure_reason

DEFAULT_STORE = "sqlite:///.clineval/clineval.db"
DEFAULT_CACHE = Path(".clineval/cache.sqlite")


class ProgressHooks(Protocol):
    def task_started(self, task_id: str, total: int, already_done: int) -> None: ...
    def case_finished(self, task_id: str, result: CaseResult) -> None: ...
    def task_finished(self, task_id: str, stats: TaskStats) -> None: ...


@dataclass
class RunRequest:
    suite_path: Path
    store_url: str = DEFAULT_STORE
    limit: int | None = None
    seed: int | None = None  # None: 0 for a new run, the stored seed on --resume
    concurrency: int = 16
    resume: str | None = None
    cache_path: Path | None = DEFAULT_CACHE
    retry_failed: bool = False
    policy: CallPolicy = field(default_factory=CallPolicy)
    tenant_id: str = "default"
    run_type: RunType = "adhoc"
    degraded_threshold: float = degradation.DEFAULT_THRESHOLD  # see clineval.analysis.degradation
    prices: Path | None = None  # ``--prices``: a price table priced token usage (clineval.analysis.usage)
    shard: tuple[int, int] | None = None  # (K, N): only the cases of shard K of N (clineval.store.shards)
    run_id: str | None = None  # the shared run a shard writes into (required with ``shard``)
    out: Path | None = None  # where the CLI writes the reports: kept in the printed resume command
    preflight: bool = False  # check every live endpoint first (clineval.systems.preflight); the CLI's default

    def __post_init__(self) -> None:
        _check_shard_options(self)
        if not 0.0 <= self.degraded_threshold <= 1.0:
            raise UserInputError(
                f"degraded threshold {self.degraded_threshold} is not a fraction",
                hint="use a number from 0 to 1, e.g. 0.2 for 20% of a task's cases",
            )


def _check_shard_options(request: RunRequest) -> None:
    if (request.shard is None) != (request.run_id is None):
        raise UserInputError(
            "--shard and --run-id go together",
            hint="every shard of a run names the same run id: --shard K/N --run-id R",
        )
    if request.shard is not None:
        k, n = request.shard
        if n < 1 or not 0 <= k < n:
            raise UserInputError(f"--shard {k}/{n}: K must be 0..N-1", hint="e.g. --shard 0/4 .. 3/4")
        if request.resume is not None:
            raise UserInputError(
                "--resume does not take --shard",
                hint="re-run the shard's own command: it runs only its pending cases",
            )
        if not request.run_id or len(request.run_id) > 64:
            raise UserInputError(f"--run-id {request.run_id!r} must be 1 to 64 characters")


def check_inputs(suite: BuiltSuite, request: RunRequest | None = None) -> None:
    """Before the run is stored: what would "finish" with exit 0 (empty task, unmatched predictions...)."""
    for task in suite.tasks:
        if not task.cases:
            dataset = task.spec.dataset
            raise UserInputError(
                f"task {task.spec.id}: dataset {dataset.args.get('path', '')} ({dataset.type}) has no cases",
                path=suite.spec.source,
                hint="check the dataset path and its filters (split, limit)",
            )
        check = getattr(task.system, "check_cases", None)
        if callable(check):
            check(task.cases)
    if suite.spec.combined is not None:
        try:
            combined = combined_spec(suite.spec.combined)
        except (ValueError, OSError) as err:
            raise UserInputError(f"combined_score: {err}", path=suite.spec.source) from None
        check_strict(suite.spec, {t.spec.id: t.scorers for t in suite.tasks}, combined)
    systems.preflight_suite(suite.tasks, request.policy.timeout_s if request and request.preflight else None)


RESUME_SAME_SUITE = "resume with the suite file and data of the original run, or start a new run"


def check_same_suite(info: RunInfo, suite: BuiltSuite, hint: str) -> None:
    """A stored run is continued (``--resume``, another shard) only from the suite it was made from."""
    if info.suite.spec_hash != suite.spec.spec_hash:
        raise UserInputError(
            f"run {info.run_id} was made from a different suite (its datasets, systems, scorers, limit "
            "or seed differ from this suite file now)",
            path=suite.spec.source,
            hint=hint,
        )


def _check_resume_options(info: RunInfo, request: RunRequest) -> None:
    """``--resume`` with a ``--limit`` or ``--seed`` other than the stored run's would sample other cases."""
    stored_given = (("limit", info.suite.limit, request.limit), ("seed", info.suite.seed, request.seed))
    for option, stored, given in stored_given:
        if given is not None and given != stored:
            shown = "none" if stored is None else stored
            raise UserInputError(
                f"--resume {info.run_id[:12]}: the run was made with --{option} {shown},"
                f" not --{option} {given}",
                hint=f"omit --{option} (the stored one is used), or start a new run",
            )


def run_suite(
    request: RunRequest, hooks: ProgressHooks | None = None, on_start: Callable[[str], None] | None = None
) -> RunResult:
    """Run (or resume) a suite; every finished case is stored as it finishes.

    ``on_start(run_id)`` is called once the run is in the store, before any call is made. Ctrl-C after
    that stores the run as ``interrupted`` and raises :class:`~clineval.runs.interrupts.RunInterrupted`; a
    store that refuses a write mid-run raises a one-line :class:`~clineval.store.errors.StoreWriteError`.
    """
    if request.shard is not None:
        from clineval.runs.shards import run_shard

        return run_shard(request, hooks, on_start).result()
    prices = load_prices(request.prices) if request.prices is not None else None  # a bad file: before any run
    store = ResultStore(request.store_url)
    run_id: str | None = None
    try:
        if request.resume is not None:
            previous = store.get_run(request.resume)
            _check_resume_options(previous, request)
            suite = load_suite(request.suite_path, limit=previous.suite.limit, seed=previous.suite.seed)
            check_same_suite(previous, suite, RESUME_SAME_SUITE)
            check_inputs(suite, request)
            run_id = store.claim_run(previous.run_id).run_id  # refused while its process is alive
            done = store.finished_keys(run_id)
        else:
            seed = 0 if request.seed is None else request.seed
            suite = load_suite(request.suite_path, limit=request.limit, seed=seed)
            check_inputs(suite, request)
            new_id, done = uuid.uuid4().hex, set()
            store.create_run(new_run_info(suite, request, new_id))
            run_id = new_id  # stored: from here on, resumable
        if on_start is not None:
            on_start(run_id)
        stats, warnings = asyncio.run(execute(suite, store, run_id, done, request, hooks))
        del suite, done  # the datasets' and systems' indexes: not held while the run is aggregated
        return finalize_run(
            store,
            run_id,
            extra_provenance={"timings": {task: vars(s) for task, s in stats.items()}, "warnings": warnings},
            degraded_threshold=request.degraded_threshold,
            prices=prices,
        )
    except KeyboardInterrupt:
        if run_id is None:
            raise
        _mark_interrupted(store, run_id)
        raise RunInterrupted(run_id, _resume_command(request, run_id)) from None
    except Exception as err:
        reason = write_failure_reason(err)
        if reason is None:
            raise
        command = None if run_id is None else _resume_command(request, run_id)
        raise store_write_error(store, run_id, reason, command) from None
    finally:
        store.close()


def new_run_info(suite: BuiltSuite, request: RunRequest, run_id: str, **extra: object) -> RunInfo:
    """The stored row of a new run of ``suite`` (``extra``: more provenance, e.g. ``shards``)."""
    sizes = {t.spec.id: len(t.cases) for t in suite.tasks}
    options = {t.spec.id: [effective_options(s) for s in t.scorers] for t in suite.tasks}
    return RunInfo(
        run_id=run_id,
        suite=suite.spec,
        status="running",
        created_at=datetime.now(UTC),
        provenance={**provenance(suite.spec, sizes, options), PLAN_KEY: _plan(suite).fingerprint, **extra},
        tenant_id=request.tenant_id,
        run_type=request.run_type,
    )


def _plan(suite: BuiltSuite) -> SummaryPlan:
    """What each result's case summary keeps (``clineval.analysis.case_summary``)."""
    return SummaryPlan.for_suite(suite.spec, {t.spec.id: t.scorers for t in suite.tasks})


def _resume_command(request: RunRequest, run_id: str) -> str:
    return resume_command(request.suite_path, run_id, request.store_url, DEFAULT_STORE, request.out)


def _mark_interrupted(store: ResultStore, run_id: str) -> None:
    # A store that cannot be written shows the run interrupted anyway, once this process is gone.
    with contextlib.suppress(Exception):
        store.mark_interrupted(run_id)


async def execute(
    suite: BuiltSuite,
    store: ResultStore,
    run_id: str,
    done: set[tuple[str, str]],
    request: RunRequest,
    hooks: ProgressHooks | None,
) -> tuple[dict[str, TaskStats], list[str]]:
    cache = ResponseCache(request.cache_path) if request.cache_path is not None else None
    settings = RunSettings(
        concurrency=request.concurrency, policy=request.policy, cache=cache, retry_failed=request.retry_failed
    )
    stats: dict[str, TaskStats] = {}
    warnings: list[str] = [w for task in suite.tasks for w in task.warnings]  # raised while loading
    try:
        with run_gc(), store.writer(run_id, summarize=_plan(suite).encode) as writer:
            for task in suite.tasks:
                task_id = task.spec.id
                stored = {case_id for t, case_id in done if t == task_id}
                already = sum(1 for case_id in case_ids(task.cases) if case_id in stored) if stored else 0
                # by id: a dataset read from its file stays so (datasets.lazy_cases)
                pending = where_id(task.cases, _absent_from(stored)) if already else task.cases
                if hooks:
                    hooks.task_started(task_id, len(task.cases), already)
                started = time.perf_counter()
                on_result = (lambda r, t=task_id: hooks.case_finished(t, r)) if hooks else None
                stats[task_id] = await run_task(
                    task_id,
                    pending,
                    task.system,
                    task.scorers,
                    writer,
                    settings,
                    on_result,
                    task.selection,
                    task.judge,
                )
                stats[task_id].seconds = round(time.perf_counter() - started, 3)
                if hooks:
                    hooks.task_finished(task_id, stats[task_id])
                if suite.spec.limit is None and not done:
                    warnings.extend(_unmatched_predictions(task))
    finally:
        if cache is not None:
            cache.close()
    if cache is not None and cache.write_error is not None:  # one warning for the run, not one per case
        warnings.append(
            f"the response cache {cache.path} could not be written ({cache.write_error}): "
            "the run went on without caching, so a re-run will call the system again"
        )
    return stats, warnings


def _absent_from(ids: set[str]) -> Callable[[str], bool]:
    return lambda case_id: case_id not in ids


def _unmatched_predictions(task: BuiltTask) -> list[str]:
    """Replayed predictions that joined no case usually mean a wrong id field or id format."""
    unused = getattr(task.system, "unused_ids", None)
    ids: list[str] = unused() if callable(unused) else []
    if not ids:
        return []
    return [
        f"task {task.spec.id}: {len(ids)} predictions match no case (e.g. id {ids[0]!r}); "
        "check the predictions' id field, or set numeric_ids: true"
    ]


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


def finalize(
    run_id: str,
    store_url: str = DEFAULT_STORE,
    *,
    degraded_threshold: float = degradation.DEFAULT_THRESHOLD,
    prices: Path | None = None,
) -> RunResult:
    """Aggregate a sharded run once all its shards are complete (:func:`clineval.runs.shards.finalize`)."""
    from clineval.runs.shards import finalize as finalize_shards

    return finalize_shards(run_id, store_url, degraded_threshold=degraded_threshold, prices=prices)


def open_run(store_url: str, run_id: str) -> RunResult:
    """A stored run with its columns, its results read from the store when iterated (any size of run:
    ``clineval.runs.stored``)."""
    store = ResultStore(store_url, read_only=True)
    try:
        return open_stored_run(store, store.get_run(run_id).run_id)
    finally:
        store.close()  # the engine reconnects when the results are iterated


def load_run(store_url: str, run_id: str) -> RunResult:
    store = ResultStore(store_url, read_only=True)
    try:
        return store.load_run(store.get_run(run_id).run_id)
    finally:
        store.close()
