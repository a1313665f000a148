"""Sharded runs: ``clineval run SUITE --shard K/N --run-id R`` and ``clineval finalize R``.

Each shard loads the whole suite, keeps the cases of its shard (:func:`clineval.store.shards.shard_of`),
and writes them into run R of a shared store. The first shard to start stores the run row (insert if
absent: shards starting at once never fail); every later shard checks that its suite is the run's (same
suite hash, same N). A shard runs only its cases not stored yet, so re-running one resumes it and adds
nothing twice. Once a shard has stored all of its cases its ``run_shards`` row is ``complete``; a shard
that finds no shard missing claims the finalization (:mod:`clineval.store.finalizing`: one process at a
time, a dead claimant's claim taken over) and aggregates the run; one that finds another process
finalizing waits for it. ``finalize`` does the same on demand, refusing while a shard is missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from clineval.analysis import degradation
from clineval.analysis.usage import load_prices
from clineval.config import BuiltSuite, load_suite
from clineval.core import RunInfo, RunNotFoundError, RunResult
from clineval.core.errors import UserInputError
from clineval.datasets.lazy_cases import case_ids, where_id
from clineval.runs.execute import execute
from clineval.runs.finalize import finalize_run
from clineval.runs.interrupts import RunInterrupted, resume_command, store_write_error
from clineval.runs.judge_status import judge_qualification
from clineval.runs.plan import check_inputs, check_same_suite, new_run_info
from clineval.runs.request import DEFAULT_STORE, ProgressHooks, RunRequest
from clineval.store import ResultStore
from clineval.store.errors import write_failure_reason
from clineval.store.liveness import Owner
from clineval.store.shards import shard_of, shard_run_id

log = logging.getLogger(__name__)


@dataclass
class ShardOutcome:
    run_id: str
    shard: int
    of: int
    cases: int  # this shard's cases stored
    missing: list[int]  # shards of the run not complete after this one
    run: RunResult | None  # the aggregated run, when this shard was the last one and finalized it
    info: RunInfo

    def result(self) -> RunResult:
        """The finalized run, or the run as stored so far (no results loaded, no aggregates)."""
        return self.run if self.run is not None else RunResult(info=self.info, results=[], aggregates={})


def _waiting(holder: Owner) -> None:
    log.info("waiting for the process finalizing the run (%s)", holder.describe())


def shard_suite(suite: BuiltSuite, shard: int, of: int) -> BuiltSuite:
    """The suite with only the cases of ``shard`` (of ``of``) in each task."""

    def mine(task_id: str) -> Callable[[str], bool]:
        return lambda case_id: shard_of(task_id, case_id, of) == shard

    tasks = [replace(task, cases=where_id(task.cases, mine(task.spec.id))) for task in suite.tasks]
    return BuiltSuite(spec=suite.spec, tasks=tasks)


def check_same_run(stored: RunInfo, suite: BuiltSuite, of: int) -> None:
    hint = "every shard of a run runs the same suite file and options; or pick a new --run-id"
    check_same_suite(stored, suite, hint)
    stored_of = stored.provenance.get("shards")
    if stored_of != of:
        shown = "is not sharded" if stored_of is None else f"has {stored_of} shards"
        raise UserInputError(
            f"run {stored.run_id} {shown}, not {of}",
            hint=f"use --shard K/{stored_of} or pick a new --run-id" if stored_of else "pick a new --run-id",
        )


def _shard_command(request: RunRequest, run_id: str, shard: int, of: int) -> str:
    command = resume_command(request.suite_path, run_id, request.store_url, DEFAULT_STORE)
    return command.replace(f"--resume {run_id}", f"--shard {shard}/{of} --run-id {run_id}", 1)


def run_shard(
    request: RunRequest,
    hooks: ProgressHooks | None = None,
    on_start: Callable[[str], None] | None = None,
) -> ShardOutcome:
    """Run shard K of N of run R (``request.shard``, ``request.run_id``); see the module docstring."""
    if request.shard is None or request.run_id is None:
        raise UserInputError("a sharded run needs --shard K/N and --run-id R")
    shard, of = request.shard
    prices = load_prices(request.prices) if request.prices is not None else None
    store = ResultStore(request.store_url)
    run_id, started = shard_run_id(request.run_id), False
    try:
        seed = 0 if request.seed is None else request.seed
        suite = load_suite(request.suite_path, limit=request.limit, seed=seed)
        check_inputs(suite, request)
        judge = judge_qualification(store, suite.spec, datetime.now(UTC))  # which judge was qualified
        info = new_run_info(suite, request, run_id, shards=of, run_name=request.run_id, **judge)
        store.create_run_if_absent(info)
        stored = store.get_run(run_id)
        check_same_run(stored, suite, of)
        mine = shard_suite(suite, shard, of)
        store.shards.start(run_id, shard, of)
        started = True
        if on_start is not None:
            on_start(run_id)
        stats, warnings = asyncio.run(
            execute(mine, store, run_id, store.finished_keys(run_id), request, hooks)
        )
        keys = {(t.spec.id, c) for t in mine.tasks for c in case_ids(t.cases)}
        cases = len(keys & store.finished_keys(run_id))
        del suite, mine, keys  # the datasets' and systems' indexes: not held while the run is aggregated
        store.shards.finish(run_id, shard, cases=cases)
        missing = store.shards.missing(run_id, of)
        run = None
        if not missing:  # this process finalizes, unless another does (or did): then it waits for that
            extra: dict[str, object] = {
                "warnings": warnings,
                "timings": {task: vars(s) for task, s in stats.items()},
            }
            threshold = request.degraded_threshold
            run = store.finalize_once(
                run_id, lambda: finalize_run(store, run_id, extra, threshold, prices), on_wait=_waiting
            )
        return ShardOutcome(run_id, shard, of, cases, missing, run, store.get_run(run_id))
    except KeyboardInterrupt:
        if not started:
            raise
        with contextlib.suppress(Exception):
            store.shards.finish(run_id, shard, cases=0, status="interrupted")
        raise RunInterrupted(run_id, _shard_command(request, run_id, shard, of)) from None
    except Exception as err:
        reason = write_failure_reason(err)
        if reason is None:
            raise
        command = _shard_command(request, run_id, shard, of) if started else None
        raise store_write_error(store, run_id if started else None, reason, command) from None
    finally:
        store.close()


def finalize(
    run_id: str,
    store_url: str = DEFAULT_STORE,
    *,
    degraded_threshold: float = degradation.DEFAULT_THRESHOLD,
    prices: Path | None = None,
) -> RunResult:
    """Aggregate a sharded run once every shard 0..N-1 is complete; mark it finished.

    A run with a shard missing is refused with one line naming the missing shards."""
    table = load_prices(prices) if prices is not None else None
    store = ResultStore(store_url, must_exist=True)
    try:
        try:  # a run named by --run-id NAME, else a run id or its prefix
            info = store.get_run(shard_run_id(run_id))
        except RunNotFoundError:
            info = store.get_run(run_id)
        of = info.provenance.get("shards")
        if not isinstance(of, int):
            raise UserInputError(
                f"run {info.run_id} is not a sharded run",
                hint="a run without --shard aggregates itself; complete an interrupted one with --resume",
            )
        missing = store.shards.missing(info.run_id, of)
        if missing:
            names = ", ".join(f"{k}/{of}" for k in missing)
            raise UserInputError(
                f"run {info.run_id}: {len(missing)} of {of} shards not complete: {names}",
                hint=f"run them (clineval run SUITE --shard K/{of} --run-id {info.run_id}), then finalize",
            )
        run_id = info.run_id
        run = store.finalize_once(  # forced: taken even from a live shard finalizing it (same numbers)
            run_id, lambda: finalize_run(store, run_id, {}, degraded_threshold, table), force=True
        )
        assert run is not None  # a forced claim is always this process's
        return run
    finally:
        store.close()
