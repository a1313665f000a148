"""Bring a store's schema to the newest Alembic revision (``clineval/store/migrations``).

``upgrade(engine)`` is called whenever a :class:`~clineval.store.ResultStore` opens a database:

- a database already at the head revision costs one query (``SELECT`` on ``alembic_version``, no schema
  inspection);
- an empty database gets every migration;
- a database created before clineval used Alembic (it has ``runs`` but no ``alembic_version``) holds the
  schema of revision 0001: it is stamped 0001, then upgraded.

Two processes opening a new database at once must not both migrate it: on PostgreSQL the migration holds a
transaction-level advisory lock, on a SQLite file an exclusive ``flock`` on ``<database>.migrate.lock``;
each re-reads the revision once it holds the lock.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.exc import OperationalError, ProgrammingError

from clineval.store.migrations import HEAD

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"
INITIAL = "0001"
_PG_LOCK_KEY = 0x636C696E  # "clin": any constant shared by every clineval process


def current_revision(conn: Connection) -> str | None:
    """The stored revision, or None for a database without ``alembic_version``."""
    if not inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _config(conn: Connection) -> Config:
    from alembic.config import Config  # imported only when a migration is due

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = conn
    return config


@contextlib.contextmanager
def _file_lock(engine: Engine) -> Iterator[None]:
    database = engine.url.database or ""
    if engine.dialect.name != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
        yield
        return
    try:
        import fcntl
    except ImportError:  # Windows: no flock; concurrent first opens there are the user's to avoid
        yield
        return
    lock_path = Path(database).expanduser().with_name(Path(database).name + ".migrate.lock")
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _migrate(conn: Connection) -> None:
    from alembic import command

    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
    revision = current_revision(conn)
    if revision == HEAD:
        return  # another process migrated while we waited for the lock
    config = _config(conn)
    if revision is None and inspect(conn).has_table("runs"):
        command.stamp(config, INITIAL)
    command.upgrade(config, "head")


def _new_sqlite_file(engine: Engine) -> bool:
    database = engine.url.database or ""
    if engine.dialect.name != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
        return False
    return not Path(database).expanduser().exists()


def _at_head(engine: Engine) -> bool:
    """One query: whether the stored revision is the head. False also when ``alembic_version`` is missing,
    when the database is busy, and for a SQLite file not created yet: its first connection (which switches
    it to WAL) must happen under the migration lock, or two processes creating it at once collide."""
    if _new_sqlite_file(engine):
        return False
    try:
        with engine.connect() as conn:
            return bool(conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD)
    except (OperationalError, ProgrammingError):  # no such table (SQLite / PostgreSQL), or locked
        return False


def upgrade(engine: Engine) -> str:
    """Migrate ``engine``'s database to the head revision (if needed) and return the revision."""
    if _at_head(engine):
        return HEAD
    with _file_lock(engine), engine.begin() as conn:
        _migrate(conn)
        return current_revision(conn) or HEAD
