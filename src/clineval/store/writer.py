"""ResultWriter: appends CaseResults from the event loop through a queue to a background thread.

``put`` only enqueues (microseconds, never blocks on the database). The thread takes everything queued
within ``LINGER_S`` (5 ms) and inserts it in ONE transaction (group commit), so a finished case is
committed within milliseconds of ``put`` and a ``kill -9`` loses only what was still in the queue. A
second result for the same ``(run_id, task_id, case_id)`` is ignored (``INSERT ... ON CONFLICT DO
NOTHING``). An exception in the thread is re-raised in the caller by the next ``put`` / ``flush`` /
``close``. The thread also refreshes the run's heartbeat every ``HEARTBEAT_S`` seconds, so other
processes can tell a live run from one whose process died (:mod:`clineval.store.liveness`).

A commit that fails because the store is briefly unreachable (a PostgreSQL restart) is retried with
backoff for up to ``retry_s`` seconds (:mod:`clineval.store.commits`) before the run stops; the retried
batch is one transaction whose rows conflict with nothing already stored, so no case is stored twice.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from pydantic_core import to_json
from sqlalchemy import (
    JSON,
    ColumnElement,
    Connection,
    Engine,
    Insert,
    Text,
    bindparam,
    cast,
    select,
    tuple_,
    update,
)

from clineval.core import CaseResult
from clineval.store.case_reads import batch_rows, stale_row
from clineval.store.commits import commit_rows, retry_budget
from clineval.store.keys import case_key
from clineval.store.liveness import HEARTBEAT_S, HOST, mark_active
from clineval.store.tables import case_results, dumps, run_counts, runs, utcnow

log = logging.getLogger(__name__)
MAX_BATCH = 5_000
# Results waiting for the thread, at most: a replayed run scores faster than a database commits, and an
# unbounded queue would hold the whole run in memory. A full queue makes ``put`` wait (backpressure).
MAX_QUEUED = 4 * MAX_BATCH
# How long the thread waits for more results before committing: bounds what a kill -9 can lose (results
# finished in the last few ms) and turns bursts of finishing cases into one transaction.
LINGER_S = 0.005
_KEY = ("run_id", "case_key")  # the unique key (task and case ids are unbounded text: clineval.store.keys)
RESULT_PARAM = "result_json"  # the result's JSON text (bound as text: encoded once, by us)
insert_counts = run_counts.insert()


class _Flush:
    """A marker: the thread sets ``done`` once everything queued before it is committed."""

    def __init__(self) -> None:
        self.done = threading.Event()


_Item = CaseResult | _Flush | None  # None = stop


class ResultWriter:
    """Use as a context manager, or call ``close()``; results still queued are committed on close."""

    def __init__(
        self,
        engine: Engine,
        run_id: str,
        summarize: Callable[[CaseResult], str] | None = None,
        *,
        retry_s: float | None = None,
    ) -> None:
        self.engine = engine
        self.run_id = run_id
        self.summarize = summarize  # the case summary's JSON (clineval.analysis.case_summary), or NULL
        self.retry_s = retry_budget(retry_s)  # how long a commit is retried through an outage
        self._queue: queue.Queue[_Item] = queue.Queue(maxsize=MAX_QUEUED)
        self._error: BaseException | None = None
        self._error_raised = False
        self._closed = False
        self._last_beat = time.monotonic()
        mark_active(run_id, True)
        self._thread = threading.Thread(target=self._run, name=f"clineval-writer-{run_id}", daemon=True)
        self._thread.start()

    # -- caller side --------------------------------------------------------------------------------
    def put(self, result: CaseResult) -> None:
        """Queue one result (cheap, non-blocking; safe to call from the event loop)."""
        self._raise_if_failed(always=True)
        if self._closed:
            raise RuntimeError(f"result writer of run {self.run_id!r} is closed")
        if not isinstance(result, CaseResult):
            raise TypeError(f"ResultWriter.put takes a CaseResult, got {type(result).__name__}")
        self._enqueue(result)

    def _enqueue(self, item: _Item) -> None:
        """Queue ``item``, waiting while the queue is full (never forever: a dead thread raises)."""
        while True:
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                self._raise_if_failed(always=True)
                if not self._thread.is_alive():
                    raise RuntimeError(f"result writer of run {self.run_id!r} stopped") from None

    def flush(self, timeout: float | None = None) -> None:
        """Block until everything queued so far is committed; raises if the writer failed."""
        self._raise_if_failed(always=True)
        if self._closed:
            return
        marker = _Flush()
        self._enqueue(marker)
        deadline = None if timeout is None else time.monotonic() + timeout
        while not marker.done.wait(0.05) and self._thread.is_alive():
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"result writer of run {self.run_id!r} did not flush in {timeout}s")
        self._raise_if_failed(always=True)

    def close(self) -> None:
        """Commit what is queued, stop the thread, and raise its error unless it was raised already."""
        if not self._closed:
            self._closed = True
            while self._thread.is_alive():  # a thread that stopped on an error: its error is raised below
                try:
                    self._queue.put(None, timeout=0.1)
                    break
                except queue.Full:
                    continue
            self._thread.join()
            mark_active(self.run_id, False)
        self._raise_if_failed(always=False)

    def _raise_if_failed(self, *, always: bool) -> None:
        err = self._error
        if err is None or (self._error_raised and not always):
            return
        if not self._error_raised:
            self._error_raised = True
            raise err
        # Not the error's text: a SQLAlchemy error holds the SQL parameters (case text, model output).
        raise RuntimeError(
            f"result writer of run {self.run_id!r} failed earlier ({type(err).__name__})"
        ) from err

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- writer thread ------------------------------------------------------------------------------
    def _run(self) -> None:
        stop = False
        while not stop:
            batch: list[CaseResult] = []
            markers: list[_Flush] = []
            try:  # wake up at least once per heartbeat interval, results or not
                item = self._queue.get(timeout=HEARTBEAT_S)
            except queue.Empty:
                self._beat()
                continue
            deadline = time.monotonic() + LINGER_S
            while True:
                if item is None:
                    stop = True
                elif isinstance(item, _Flush):
                    markers.append(item)
                else:
                    batch.append(item)
                if stop or markers or len(batch) >= MAX_BATCH:
                    break
                try:  # linger a few ms: one transaction per burst, not one per result
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
            try:
                if batch:
                    self._insert(batch)
                if time.monotonic() - self._last_beat >= HEARTBEAT_S:
                    self._beat()
            except BaseException as err:  # re-raised in the caller; nothing after it is written
                self._error = err
                stop = True
            finally:
                for marker in markers:
                    marker.done.set()

    def _beat(self) -> None:
        """Refresh the run's heartbeat (only while this process still owns the run).

        A failed beat is not an error of the run: if the store cannot be written, the next insert says so.
        """
        self._last_beat = time.monotonic()
        query = update(runs).where(
            runs.c.run_id == self.run_id, runs.c.owner_pid == os.getpid(), runs.c.owner_host == HOST
        )
        try:
            with self.engine.begin() as conn:
                conn.execute(query.values(heartbeat_at=utcnow()))
        except Exception:  # see the docstring
            log.debug("heartbeat of run %s not written", self.run_id)

    def _rows(self, batch: list[CaseResult]) -> tuple[list[dict[str, Any]], list[CaseResult]]:
        """One row per key (the first result wins; ``result_json`` is the result as JSON text), and the
        results those rows hold."""
        now = utcnow()
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        kept: list[CaseResult] = []
        for result in batch:
            key = (result.task_id, result.case_id)
            if key in rows:
                continue
            kept.append(result)
            rows.setdefault(
                key,
                {
                    "run_id": self.run_id,
                    "task_id": result.task_id,
                    "case_id": result.case_id,
                    "case_key": case_key(result.task_id, result.case_id),
                    "status": "failed" if result.failed else "ok",
                    RESULT_PARAM: encode_result(result),
                    "created_at": now,
                    "summary": self.summarize(result) if self.summarize is not None else None,
                },
            )
        return list(rows.values()), kept

    def _insert(self, batch: list[CaseResult]) -> None:
        rows, kept = self._rows(batch)
        counts = batch_rows(self.run_id, kept)

        def insert(conn: Connection, some: list[dict[str, Any]]) -> None:
            inserted = _insert_ignoring_duplicates(conn, some)
            if some is not rows:  # one row at a time, looking for a refused one: the sums will not match
                return
            # the run's sums (clineval.store.case_reads), in the same transaction; a batch some of whose
            # rows were already stored (or a driver that cannot tell) makes them unusable, never wrong
            conn.execute(insert_counts, counts if inserted == len(rows) else [stale_row(self.run_id)])

        if commit_rows(self.engine, insert, rows, self.retry_s):
            self._beat()  # the store was away: tell other processes at once that this run is alive


def encode_result(result: CaseResult) -> str:
    """The result as JSON text, as :func:`clineval.store.tables.dumps` would write it.

    pydantic-core encodes the plain dump (about 2x faster than ``json`` on the JSON-mode dump); a result
    holding a NaN or an infinity (or those words in its text) takes the tagged slow path instead, so "not
    scorable" is never written as ``null``.
    """
    raw = to_json(result.model_dump(), inf_nan_mode="constants")
    if b"NaN" in raw or b"Infinity" in raw:
        return dumps(result.model_dump(mode="json"))
    return raw.decode("utf-8")


def _result_value(dialect: str) -> ColumnElement[Any]:
    """The bound JSON text, cast to JSON where the column has a native JSON type."""
    param = bindparam(RESULT_PARAM, type_=Text)
    return cast(param, JSON) if dialect == "postgresql" else param


def insert_ignoring_duplicates(dialect: str) -> Insert | None:
    """``INSERT ... ON CONFLICT (run_id, case_key) DO NOTHING`` for SQLite and PostgreSQL.

    None for other dialects, which use the portable fallback of :func:`_insert_ignoring_duplicates`.
    """
    # each dialect's module is imported only for its own store (PostgreSQL's costs ~15 ms at start-up)
    if dialect == "sqlite":
        from sqlalchemy.dialects import sqlite

        stmt: Insert = sqlite.insert(case_results).on_conflict_do_nothing(index_elements=list(_KEY))
    elif dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        stmt = postgresql.insert(case_results).on_conflict_do_nothing(index_elements=list(_KEY))
    else:
        return None
    return stmt.values(result=_result_value(dialect))


def _insert_ignoring_duplicates(conn: Connection, rows: list[dict[str, Any]]) -> int:
    """Insert ``rows``; those whose key is already stored are skipped. Returns the rows inserted, as the
    driver reports them (-1 when it cannot tell)."""
    stmt = insert_ignoring_duplicates(conn.dialect.name)
    if stmt is None:  # portable fallback: skip keys already present (the unique constraint still guards)
        key_cols = tuple_(*(case_results.c[name] for name in _KEY))
        wanted = [tuple(row[name] for name in _KEY) for row in rows]
        query = select(*(case_results.c[name] for name in _KEY)).where(key_cols.in_(wanted))
        present = {tuple(row) for row in conn.execute(query)}
        rows = [row for row in rows if tuple(row[name] for name in _KEY) not in present]
        if not rows:
            return 0
        stmt = case_results.insert().values(result=_result_value(conn.dialect.name))
    if conn.dialect.name == "postgresql":  # psycopg's executemany reports no row count (-1): the inserted
        # rows' ids are returned instead (SQLAlchemy's insertmanyvalues: a few multi-row INSERTs)
        return len(conn.execute(stmt.returning(case_results.c.id), rows).all())
    return int(conn.execute(stmt, rows).rowcount)
