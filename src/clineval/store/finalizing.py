"""Finalizing a run: everything it writes in one transaction, and who may finalize a sharded run.

:func:`finish` stores a run's aggregates, status, finish time, provenance and ``eval_results`` rows in ONE
transaction: a process killed while finalizing leaves the run as it was (``running``, no aggregates), never
finished without its metric rows.

A sharded run is finalized by one process at a time (:func:`finalize_once`). The process claims it in
``runs.finalizer_pid`` / ``finalizer_host`` / ``finalizer_beat`` with a conditional update, and a thread
refreshes the beat every :data:`~clineval.store.liveness.HEARTBEAT_S` seconds while it aggregates. Another
process that finds the run claimed waits while the claimant is alive (``liveness.is_alive``: its pid on
this host, else its beat at most 30 s old) and takes the claim over once it is not: a shard
killed between claiming and storing the aggregates no longer leaves the run unfinalized for good. A run is
finalized once its status is final (``finished``, ``partial``, ``failed``), which :func:`finish` writes
together with the aggregates.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypeVar

from sqlalchemy import Engine, select, update

from clineval.core import EvalMetric, MetricValue, TaskAggregate
from clineval.store.eval_results import replace_run_rows
from clineval.store.liveness import HEARTBEAT_S, HOST, Owner, is_alive, mark_active
from clineval.store.tables import FINAL_STATUSES, runs, utc, utcnow

log = logging.getLogger(__name__)
POLL_S = 1.0  # how often a process waiting for another's finalization looks again
T = TypeVar("T")


def finish(
    engine: Engine,
    run_id: str,
    values: dict[str, Any],
    extra_provenance: Mapping[str, Any] | None,
    metrics: Iterable[EvalMetric] | None,
) -> bool:
    """Update the run with ``values`` (status, aggregates, ...), merge ``extra_provenance`` into its
    provenance (top-level keys replaced) and replace its ``eval_results`` rows, in one transaction; False
    if there is no such run."""
    with engine.begin() as conn:
        current = conn.execute(select(runs.c.provenance).where(runs.c.run_id == run_id)).first()
        if current is None:
            return False
        if extra_provenance:
            values = {**values, "provenance": {**(current[0] or {}), **extra_provenance}}
        conn.execute(update(runs).where(runs.c.run_id == run_id).values(**values))
        if metrics is not None:
            replace_run_rows(conn, run_id, metrics)
    return True


@dataclass(frozen=True)
class Claim:
    """``claimed``: this process finalizes; ``done``: the run is finalized; ``busy``: ``holder`` is at it."""

    state: Literal["claimed", "done", "busy"]
    holder: Owner | None = None


def _key(run_id: str) -> str:
    return f"finalize:{run_id}"  # in liveness' set of what this process is doing


def _same(column: Any, value: Any) -> Any:
    return column.is_(None) if value is None else column == value


def claim(engine: Engine, run_id: str, *, force: bool = False) -> Claim:
    """Claim the finalization of ``run_id`` unless it is finalized or a live process holds the claim
    (``force``: take it even then — ``clineval finalize``, which a user runs on purpose)."""
    with engine.connect() as conn:
        row = conn.execute(
            select(runs.c.status, runs.c.finalizer_pid, runs.c.finalizer_host, runs.c.finalizer_beat).where(
                runs.c.run_id == run_id
            )
        ).first()
    if row is None:
        raise LookupError(f"no run {run_id!r}")
    if row.status in FINAL_STATUSES and not force:
        return Claim("done")
    holder = Owner(pid=row.finalizer_pid, host=row.finalizer_host, heartbeat_at=utc(row.finalizer_beat))
    if not force and holder.pid is not None and is_alive(holder, _key(run_id)):
        return Claim("busy", holder)
    query = update(runs).where(runs.c.run_id == run_id)
    if not force:  # compare and swap: of two processes taking over a dead claim, one wins
        query = query.where(
            runs.c.status.not_in(FINAL_STATUSES),
            _same(runs.c.finalizer_pid, row.finalizer_pid),
            _same(runs.c.finalizer_host, row.finalizer_host),
            _same(runs.c.finalizer_beat, row.finalizer_beat),
        )
    with engine.begin() as conn:
        done = conn.execute(
            query.values(finalizer_pid=os.getpid(), finalizer_host=HOST, finalizer_beat=utcnow())
        )
    if done.rowcount != 1:
        return Claim("busy", holder)
    mark_active(_key(run_id), True)  # alive from the claim on (another thread of this process sees it held)
    return Claim("claimed")


def _mine(run_id: str) -> Any:
    return update(runs).where(
        runs.c.run_id == run_id, runs.c.finalizer_pid == os.getpid(), runs.c.finalizer_host == HOST
    )


@contextlib.contextmanager
def holding(engine: Engine, run_id: str) -> Iterator[None]:
    """Keep this process's claim (:func:`claim`) alive, a beat every HEARTBEAT_S seconds, while the block
    finalizes; a block that fails gives the claim up, so the next process need not wait for it to go stale."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT_S):
            try:
                with engine.begin() as conn:
                    conn.execute(_mine(run_id).values(finalizer_beat=utcnow()))
            except Exception:  # a store that cannot be written: the finalization itself will say so
                log.debug("finalizer heartbeat of run %s not written", run_id)

    thread = threading.Thread(target=beat, name=f"clineval-finalizer-{run_id}", daemon=True)
    thread.start()
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception), engine.begin() as conn:
            conn.execute(_mine(run_id).values(finalizer_pid=None, finalizer_host=None, finalizer_beat=None))
        raise
    finally:
        stop.set()
        thread.join()
        mark_active(_key(run_id), False)


def finalize_once(
    engine: Engine,
    run_id: str,
    finalize: Callable[[], T],
    *,
    force: bool = False,
    on_wait: Callable[[Owner], None] | None = None,
) -> T | None:
    """``finalize()`` under this process's claim; None if the run is (or, while this call waited for a
    live claimant, became) finalized by another process. A dead claimant's claim is taken over."""
    waited = False
    while True:
        got = claim(engine, run_id, force=force)
        if got.state == "done":
            return None
        if got.state == "claimed":
            with holding(engine, run_id):
                return finalize()
        if not waited and on_wait is not None and got.holder is not None:
            on_wait(got.holder)
        waited = True
        time.sleep(POLL_S)


def finish_values(
    aggregates: Mapping[str, TaskAggregate],
    overall: Mapping[str, MetricValue],
    status: str,
    finished_at: datetime | None,
) -> dict[str, Any]:
    """The ``runs`` columns a finished run gets."""
    if status not in FINAL_STATUSES:
        raise ValueError(f"finish status must be one of {FINAL_STATUSES}, got {status!r}")
    return {
        "status": status,
        "finished_at": utc(finished_at) or utcnow(),
        "overall": dict(overall),
        "aggregates": {task: agg.model_dump(mode="json") for task, agg in aggregates.items()},
    }
