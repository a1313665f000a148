"""Store URLs for the backends the store tests run on: a SQLite file and, where a server is configured,
a fresh PostgreSQL schema per test.

CI (``.ci/run``) starts a local PostgreSQL (``scripts/test_postgres.sh``), exports its URL as
``CLINEVAL_TEST_POSTGRES_URL`` and sets ``CLINEVAL_REQUIRE_POSTGRES=1``, so a missing server fails the run
instead of skipping the PostgreSQL half. Elsewhere the PostgreSQL cases are skipped with a reason.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, text

BACKENDS = ("sqlite", "postgresql")


def postgres_server_url() -> str | None:
    url = os.environ.get("CLINEVAL_TEST_POSTGRES_URL")
    if not url and os.environ.get("CLINEVAL_REQUIRE_POSTGRES") == "1":
        pytest.fail("CLINEVAL_REQUIRE_POSTGRES=1 but CLINEVAL_TEST_POSTGRES_URL is not set")
    return url or None


@contextmanager
def postgres_schema_url() -> Iterator[str]:
    """A URL whose connections use a new, empty schema (dropped afterwards)."""
    server = postgres_server_url()
    if server is None:
        pytest.skip('no PostgreSQL server: start one with `eval "$(scripts/test_postgres.sh start)"`')
    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
        yield f"{server}?options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        admin.dispose()


@contextmanager
def backend_url(backend: str, folder: Path) -> Iterator[str]:
    """A store URL on ``backend`` ("sqlite": a file under ``folder``; "postgresql": a fresh schema)."""
    if backend == "sqlite":
        # the folder exists: a missing store folder is an error for the CLI unless --create-store
        (folder / "nested" / "dir").mkdir(parents=True, exist_ok=True)
        yield f"sqlite:///{folder}/nested/dir/clineval.db"
    else:
        with postgres_schema_url() as url:
            yield url
