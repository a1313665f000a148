"""Committing a batch of case results: retried through a short store outage, and a refused row named.

``commit_rows`` inserts the rows in one transaction (``INSERT ... ON CONFLICT DO NOTHING``: a batch
committed twice stores each case once). A failure that a retry can get past (:func:`is_transient`: the
connection lost or refused while a PostgreSQL server restarts, SQLite busy) is retried with exponential
backoff (0.1 s, 0.2 s, 0.4 s, ... at most 2 s apart) for up to ``retry_s`` seconds in all (default
:data:`DEFAULT_RETRY_S`, or ``CLINEVAL_STORE_RETRY_S``; 0 turns retrying off); then the error is raised and
the run stops, resumable. A batch the database refuses for its data (a value it cannot hold) is committed
row by row to find the case: :class:`~clineval.store.errors.CaseWriteError` names it and the column.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DataError, IntegrityError, StatementError

from clineval.store.errors import CaseWriteError, is_transient, row_problem

log = logging.getLogger(__name__)
DEFAULT_RETRY_S = 30.0
FIRST_DELAY_S = 0.1
MAX_DELAY_S = 2.0
RETRY_ENV = "CLINEVAL_STORE_RETRY_S"

Insert = Callable[[Connection, list[dict[str, Any]]], None]


def retry_budget(value: float | None = None) -> float:
    """Seconds a failed commit is retried: ``value``, else ``$CLINEVAL_STORE_RETRY_S``, else 30."""
    if value is not None:
        return max(0.0, value)
    text = os.environ.get(RETRY_ENV, "").strip()
    try:
        return max(0.0, float(text)) if text else DEFAULT_RETRY_S
    except ValueError:
        log.warning("%s=%r is not a number of seconds: using %s", RETRY_ENV, text, DEFAULT_RETRY_S)
        return DEFAULT_RETRY_S


def _commit(engine: Engine, insert: Insert, rows: list[dict[str, Any]]) -> None:
    with engine.begin() as conn:
        insert(conn, rows)


def with_retry(attempt: Callable[[], None], retry_s: float, what: str) -> int:
    """Call ``attempt`` until it succeeds, retrying transient failures for up to ``retry_s`` seconds in
    all; returns how many retries it took. The last failure (or a non-transient one) is raised. An outage
    logs two warnings: when it starts and when the store is back."""
    started = time.monotonic()
    delay, retries = FIRST_DELAY_S, 0
    while True:
        try:
            attempt()
        except Exception as err:
            if not is_transient(err) or time.monotonic() - started + delay > retry_s:
                raise
            level = logging.WARNING if retries == 0 else logging.DEBUG
            log.log(
                level,
                "the store is unavailable (%s): retrying %s for up to %.0f s",
                _name(err),
                what,
                retry_s,
            )
        else:
            if retries:
                waited = time.monotonic() - started
                log.warning(
                    "the store is back: %s committed after %d retries (%.1f s)", what, retries, waited
                )
            return retries
        time.sleep(delay)
        retries += 1
        delay = min(delay * 2, MAX_DELAY_S)


def _name(err: BaseException) -> str:
    """The error's type and, for a driver error, its own type (never its message: it may hold data)."""
    orig = getattr(err, "orig", None)
    return type(err).__name__ if orig is None else f"{type(err).__name__}: {type(orig).__name__}"


def _refused_for_data(err: BaseException) -> bool:
    """The database (or driver) refused a value: worth finding which row holds it."""
    if isinstance(err, DataError | IntegrityError):
        orig = err.orig
        # a missing run row (foreign key) is no fault of one case
        return getattr(orig, "sqlstate", None) != "23503" and "foreign key" not in str(orig).lower()
    # a value the driver refuses before sending it (e.g. a NUL in PostgreSQL text)
    return isinstance(err, StatementError) and isinstance(err.orig, ValueError)


def commit_rows(engine: Engine, insert: Insert, rows: list[dict[str, Any]], retry_s: float) -> int:
    """Insert ``rows`` in one transaction (see the module docstring); returns the retries it took."""
    try:
        return with_retry(lambda: _commit(engine, insert, rows), retry_s, f"{len(rows)} case results")
    except Exception as err:
        if not _refused_for_data(err):
            raise
        culprit = _find_refused_row(engine, insert, rows)
        if culprit is None:
            raise
        row, row_err = culprit
        column, problem = row_problem(row, row_err)
        raise CaseWriteError(row["task_id"], row["case_id"], column, problem) from row_err


def _find_refused_row(
    engine: Engine, insert: Insert, rows: list[dict[str, Any]]
) -> tuple[dict[str, Any], BaseException] | None:
    """The first row the database refuses on its own (the rows before it are committed: they are valid)."""
    for row in rows:
        try:
            _commit(engine, insert, [row])
        except Exception as err:
            if _refused_for_data(err):
                return row, err
            raise
    return None
