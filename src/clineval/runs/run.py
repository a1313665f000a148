"""The library entry points the CLI calls: run a suite (or resume one), finalize, read a stored run back.

A run reads top-down: :mod:`~clineval.runs.request` (what is asked) -> :mod:`~clineval.runs.plan` (the suite
loaded and checked, the run stored) -> :mod:`~clineval.runs.execute` (the cases through the runner into the
store) -> :mod:`~clineval.runs.finalize` (aggregates, status, metric rows). :func:`run_suite` is the one place
that decides between an unsharded run (here) and a shard of a shared run (:mod:`clineval.runs.shards`, which
uses the same four steps and never this module).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from clineval.analysis import degradation
from clineval.analysis.usage import load_prices
from clineval.config import load_suite
from clineval.core import RunResult
from clineval.runs import shards, workers
from clineval.runs.execute import execute
from clineval.runs.finalize import aggregate_results, finalize_run, metric_rows, record_metrics
from clineval.runs.interrupts import RunInterrupted, store_write_error
from clineval.runs.judge_status import judge_qualification
from clineval.runs.plan import RESUME_SAME_SUITE, check_inputs, check_same_suite, new_run_info
from clineval.runs.request import (
    DEFAULT_CACHE,
    DEFAULT_STORE,
    ProgressHooks,
    RunRequest,
    check_resume_options,
    request_resume_command,
)
from clineval.runs.stored import open_run as open_stored_run
from clineval.runs.stored import scorers_for
from clineval.store import ResultStore
from clineval.store.errors import write_failure_reason

__all__ = [  # the names of the old ``clineval.api`` module, which aliases this one
    "DEFAULT_CACHE",
    "DEFAULT_STORE",
    "RESUME_SAME_SUITE",
    "ProgressHooks",
    "RunRequest",
    "aggregate_results",
    "check_inputs",
    "check_same_suite",
    "execute",
    "finalize",
    "finalize_run",
    "load_run",
    "metric_rows",
    "new_run_info",
    "open_run",
    "record_metrics",
    "run_suite",
    "scorers_for",
]


def run_suite(
    request: RunRequest, hooks: ProgressHooks | None = None, on_start: Callable[[str], None] | None = None
) -> RunResult:
    """Run (or resume) a suite; every finished case is stored as it finishes.

    ``on_start(run_id)`` is called once the run is in the store, before any call is made. Ctrl-C after
    that stores the run as ``interrupted`` and raises :class:`~clineval.runs.interrupts.RunInterrupted`; a
    store that refuses a write mid-run raises a one-line :class:`~clineval.store.errors.StoreWriteError`.
    """
    if request.shard is not None:
        return shards.run_shard(request, hooks, on_start).result()
    if request.workers > 1:
        return workers.run_workers(request, hooks, on_start)
    prices = load_prices(request.prices) if request.prices is not None else None  # a bad file: before any run
    store = ResultStore(request.store_url)
    run_id: str | None = None
    try:
        if request.resume is not None:
            previous = store.get_run(request.resume)
            check_resume_options(previous, request)
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
            judge = judge_qualification(store, suite.spec, datetime.now(UTC))  # which judge was qualified
            store.create_run(new_run_info(suite, request, new_id, **judge))
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
        raise RunInterrupted(run_id, request_resume_command(request, run_id)) from None
    except Exception as err:
        reason = write_failure_reason(err)
        if reason is None:
            raise
        command = None if run_id is None else request_resume_command(request, run_id)
        raise store_write_error(store, run_id, reason, command) from None
    finally:
        store.close()


def _mark_interrupted(store: ResultStore, run_id: str) -> None:
    # A store that cannot be written shows the run interrupted anyway, once this process is gone.
    with contextlib.suppress(Exception):
        store.mark_interrupted(run_id)


def finalize(
    run_id: str,
    store_url: str = DEFAULT_STORE,
    *,
    degraded_threshold: float = degradation.DEFAULT_THRESHOLD,
    prices: Path | None = None,
) -> RunResult:
    """Aggregate a sharded run once all its shards are complete (:func:`clineval.runs.shards.finalize`)."""
    return shards.finalize(run_id, store_url, degraded_threshold=degraded_threshold, prices=prices)


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
