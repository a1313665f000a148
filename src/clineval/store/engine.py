"""Engine construction: SQLite parent directories, pragmas, the NaN-safe JSON codec, pool choice, and the
strictly read-only opening of a store on read-only media."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import StaticPool

from clineval.store.tables import dumps, loads

SQLITE_BUSY_TIMEOUT_MS = 10_000


def display_url(url: str | URL) -> str:
    """The URL with its password masked, for messages."""
    return make_url(url).render_as_string(hide_password=True)


def _sqlite_in_memory(url: URL) -> bool:
    database = url.database or ""
    return database in ("", ":memory:") or "mode=memory" in database or url.query.get("mode") == "memory"


def _sqlite_file(url: URL) -> Path | None:
    database = url.database or ""
    if _sqlite_in_memory(url) or database.startswith("file:"):
        return None
    return Path(database)


# The databases clineval is tested on. Another SQLAlchemy dialect may well work, but a store that
# half-works (migrations, conflict handling) is worse than a clear refusal.
SUPPORTED_DIALECTS = ("sqlite", "postgresql")
# DBAPI module (ImportError.name) -> what to install for it.
DRIVER_PACKAGES = {
    "psycopg": "pip install 'clineval[postgresql]'",
    "psycopg2": "pip install psycopg2-binary",
    "pg8000": "pip install pg8000",
}


def unsupported_dialect(url: URL) -> str | None:
    """Why ``url`` cannot be a store (a dialect clineval does not support), or None."""
    backend = url.get_backend_name()
    if backend not in SUPPORTED_DIALECTS:
        return f"the {backend} dialect is not supported"
    if url.get_driver_name() in ("asyncpg", "aiosqlite", "psycopg_async"):
        return f"{url.drivername} is an asyncio driver, which the store does not use"
    return None


def sqlite_path(url: str | URL) -> Path | None:
    """The file of a SQLite URL (None for in-memory, ``file:`` URIs and other dialects)."""
    parsed = make_url(url)
    return _sqlite_file(parsed) if parsed.get_backend_name() == "sqlite" else None


def writable_folder(path: Path) -> bool:
    """Whether files can be created beside ``path``: False on read-only media (``access`` says EROFS even
    to root) and in a folder the user may not write."""
    return os.access(path.expanduser().absolute().parent, os.W_OK)


def read_only_url(path: Path) -> URL:
    """A URL that opens the SQLite file ``path`` strictly read-only, creating no file beside it (read-only
    media refuse one): ``immutable=1``, or ``mode=ro`` when a write-ahead log lies beside the file (its
    committed pages are part of the database; ``immutable`` would skip them)."""
    file = path.expanduser().absolute()
    wal = file.with_name(file.name + "-wal")
    mode = "mode=ro" if wal.is_file() and wal.stat().st_size > 0 else "immutable=1"
    return make_url(f"sqlite:///file:{quote(str(file), safe='/')}?{mode}&uri=true")


def read_only_path(url: str | URL) -> Path | None:
    """The SQLite file of ``url`` when it must be read through :func:`read_only_url` (its folder cannot
    be written), else None."""
    path = sqlite_path(url)
    return path if path is not None and path.expanduser().exists() and not writable_folder(path) else None


def _set_read_only_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS:d}")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def _set_sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS:d}")  # first: the others may wait
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def _not_pipeline_noise(record: logging.LogRecord) -> bool:
    """Drop psycopg's "error ignored terminating <psycopg.Pipeline [BAD]>": logged when a connection breaks
    inside a batch insert, beside the error that is raised (and retried or reported) anyway. Without a
    logging set-up Python printed it on stderr as a stray line."""
    return not str(record.msg).startswith("error ignored terminating")


def _quiet_psycopg() -> None:
    psycopg_log = logging.getLogger("psycopg")
    if _not_pipeline_noise not in psycopg_log.filters:
        psycopg_log.addFilter(_not_pipeline_noise)


def make_engine(url: str | URL, *, read_only: bool = False) -> Engine:
    """An engine for ``url``. SQLite files get their parent directory created and WAL mode.

    ``read_only``: for a store that is only read. A SQLite file in a folder that cannot be written (read-only
    media) is then opened strictly read-only (:func:`read_only_url`: no WAL switch, no file created).
    An in-memory SQLite database (``sqlite://``) is shared by all threads through one connection, so
    the writer thread sees the same database as the caller (meant for tests).
    """
    parsed = make_url(url)
    kwargs: dict[str, Any] = {"json_serializer": dumps, "json_deserializer": loads}
    is_sqlite = parsed.get_backend_name() == "sqlite"
    frozen = read_only_path(parsed) if read_only else None
    if frozen is not None:
        engine = create_engine(read_only_url(frozen), **kwargs)
        event.listen(engine, "connect", _set_read_only_pragmas)
        return engine
    if is_sqlite:
        path = _sqlite_file(parsed)
        if path is not None and not read_only:
            path.expanduser().parent.mkdir(parents=True, exist_ok=True)
        if _sqlite_in_memory(parsed):
            kwargs.update(poolclass=StaticPool, connect_args={"check_same_thread": False})
    if parsed.get_backend_name() == "postgresql":
        _quiet_psycopg()
    engine = create_engine(parsed, **kwargs)
    if is_sqlite:
        event.listen(engine, "connect", _set_sqlite_pragmas)
    return engine
