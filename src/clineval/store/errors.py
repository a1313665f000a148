"""Why a store (or cache) could not be written, in a few words that never hold the data being written.

A SQLAlchemy error renders the SQL and its bound parameters (case text, model output) into ``str(err)``; a
traceback of one prints them again. :func:`write_failure_reason` reads only the error's type, its errno or
SQLSTATE, and the DBAPI message of SQLite (which names the condition, never a value), so the message built
from it is safe for a CI log. ``None`` means: not a failure to write storage (let it propagate).
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
