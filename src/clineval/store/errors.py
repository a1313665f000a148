"""Why a store (or cache) could not be written, in a few words that never hold the data being written.

A SQLAlchemy error renders the SQL and its bound parameters (case text, model output) into ``str(err)``; a
traceback of one prints them again. :func:`write_failure_reason` reads only the error's type, its errno or
SQLSTATE, and the DBAPI message of SQLite (which names the condition, never a value), so the message built
from it is safe for a CI log. ``None`` means: not a failure to write storage (let it propagate). A case the
database refused for its data (:class:`CaseWriteError`) is named by its task and case id (shortened) and
the column, never by the value. :func:`is_transient` tells an outage worth retrying (the connection lost
or refused, SQLite busy) from a refusal.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator

from clineval.core.errors import UserInputError

# errno -> reason: the OS refused a write (the store's file, its WAL, the cache, a report).
_ERRNO_REASONS = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EFBIG: "file too large",
    errno.EIO: "input/output error",
}

# Words in SQLite's own message (sqlite3.OperationalError) -> reason. SQLite's messages name the condition.
_SQLITE_REASONS = (
    ("disk is full", "disk full"),
    ("readonly database", "read-only"),
    ("read-only", "read-only"),
    ("disk i/o error", "input/output error"),
    ("unable to open database file", "cannot open the file"),
    ("database is locked", "locked by another process for too long"),
    ("no such table", "not a clineval store, or its schema is missing"),
)

# PostgreSQL SQLSTATE (psycopg's ``sqlstate``) -> reason.
_SQLSTATE_REASONS = {
    "53100": "disk full",
    "53200": "out of memory",
    "53300": "too many connections",
    "25006": "read-only transaction",
    "42501": "permission denied",
    "57P01": "server shut down",
    "08006": "connection lost",
    "08003": "connection lost",
    "08000": "connection lost",
}


def _chain(err: BaseException) -> Iterator[BaseException]:
    """The error, the DBAPI error SQLAlchemy wraps (``orig``), and their causes, each once."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [err]
    while todo:
        item = todo.pop(0)
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        todo.extend([getattr(item, "orig", None), item.__cause__, item.__context__])


def _is_sqlalchemy(err: BaseException) -> bool:
    return type(err).__module__.startswith("sqlalchemy")


def write_failure_reason(err: BaseException) -> str | None:
    """A short reason if ``err`` is storage refusing a write or a database error; else None."""
    found_db_error = None
    for item in _chain(err):
        if isinstance(item, CaseWriteError):
            return str(item)
        if isinstance(item, OSError) and item.errno in _ERRNO_REASONS:
            return _ERRNO_REASONS[item.errno]
        module = type(item).__module__
        if module == "sqlite3":
            message = str(item).lower()
            for words, reason in _SQLITE_REASONS:
                if words in message:
                    return reason
            found_db_error = found_db_error or f"SQLite {type(item).__name__}"
        sqlstate = getattr(item, "sqlstate", None)
        if isinstance(sqlstate, str) and module.startswith(("psycopg", "psycopg2")):
            if sqlstate in _SQLSTATE_REASONS:
                return _SQLSTATE_REASONS[sqlstate]
            found_db_error = found_db_error or f"PostgreSQL error {sqlstate}"
        if _is_sqlalchemy(item) and found_db_error is None:
            found_db_error = f"database error {type(item).__name__}"
    return found_db_error


class StoreWriteError(UserInputError):
    """The store refused a write mid-run (disk full, read-only, permissions): one line, no case content."""


# SQLSTATEs a new connection or a second try gets past: connection exceptions (class 08), the server shutting
# down or starting (57P01-57P03), too many connections, serialization failure, deadlock.
_TRANSIENT_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "53300", "40001", "40P01"})
_SQLITE_BUSY = ("database is locked", "database is busy")


def is_transient(err: BaseException) -> bool:
    """Whether a retry may succeed: the connection was lost or refused (a server restarting), or busy."""
    for item in _chain(err):
        if getattr(item, "connection_invalidated", False) is True:  # SQLAlchemy saw a disconnect
            return True
        module = type(item).__module__
        if module == "sqlite3":
            return any(words in str(item).lower() for words in _SQLITE_BUSY)
        if module.startswith(("psycopg", "psycopg2")):
            sqlstate = getattr(item, "sqlstate", None) or getattr(item, "pgcode", None)
            if isinstance(sqlstate, str) and sqlstate:
                return sqlstate.startswith("08") or sqlstate in _TRANSIENT_SQLSTATES
            # no SQLSTATE: the client failed to connect, or the connection broke or was closed
            names = {cls.__name__ for cls in type(item).__mro__}
            return bool(names & {"OperationalError", "InterfaceError"})
    return False


# SQLSTATE -> what is wrong with a refused value (the value itself is never shown)
_DATA_PROBLEMS = {
    "22001": "value too long",
    "22021": "not valid text in the database's encoding",
    "22P05": "a character the database cannot hold",
    "23502": "missing",
    "23505": "duplicate",
    "23514": "not allowed by a check constraint",
}
# case_results column -> its length limit (the TEXT and JSON columns have none)
_COLUMN_LIMITS = {"run_id": 64, "case_key": 255, "status": 16}
_PARAM_COLUMNS = {"result_json": "result"}  # bound parameter -> column


def shorten(text: str, keep: int = 40) -> str:
    """``text`` for a message: control characters escaped, cut to ``keep`` characters with its length."""
    shown = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text[:keep])
    return shown if len(text) <= keep else f"{shown}… ({len(text)} characters)"


def row_problem(row: dict[str, object], err: BaseException) -> tuple[str | None, str]:
    """``(column, problem)`` of a case_results row the database refused (column None when unknown)."""
    for param, value in row.items():
        column = _PARAM_COLUMNS.get(param, param)
        if isinstance(value, str) and "\x00" in value:
            return column, "contains a NUL character, which PostgreSQL text cannot hold"
        limit = _COLUMN_LIMITS.get(column)
        if isinstance(value, str) and limit is not None and len(value) > limit:
            return column, f"value too long ({len(value)} characters, at most {limit})"
    column_name = None
    problem = None
    for item in _chain(err):
        diag = getattr(item, "diag", None)
        column_name = column_name or getattr(diag, "column_name", None)
        sqlstate = getattr(item, "sqlstate", None)
        if isinstance(sqlstate, str) and problem is None:
            problem = _DATA_PROBLEMS.get(sqlstate, f"refused (PostgreSQL error {sqlstate})")
    return column_name, problem or write_failure_reason(err) or f"refused ({type(err).__name__})"


class CaseWriteError(Exception):
    """The database refused one case's row for its data: names the case (ids shortened) and the column."""

    def __init__(self, task_id: str, case_id: str, column: str | None, problem: str) -> None:
        where = f"column {column}: " if column else ""
        super().__init__(f"cannot store case {shorten(task_id)}/{shorten(case_id)}: {where}{problem}")
        self.task_id = task_id
        self.case_id = case_id
        self.column = column
