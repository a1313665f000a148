"""A short store outage is retried with backoff (clineval.store.commits), on SQLite and PostgreSQL:

- injected: the first commits of the writer fail as a lost connection does; every case is stored once, also
  when a commit reached the database but its acknowledgement was lost (the retried batch conflicts with
  itself and adds nothing); a refusal that is not an outage is raised at once; the retry budget is kept;
- real: a PostgreSQL server of the test's own is stopped for 3 s in the middle of a live run, which
  completes with every case once and no stray psycopg line on stderr.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError, OperationalError

from clineval.store import ResultStore
from clineval.store import commits as commits_module
from clineval.store.commits import retry_budget
from clineval.store.errors import is_transient
from clineval.testing import Script, running_server_process
from tests.test_live_run import write_live_suite
from tests.test_store import info, result

ROOT = Path(__file__).resolve().parent.parent
PG_SCRIPT = ROOT / "scripts" / "test_postgres.sh"


def lost_connection() -> OperationalError:
    """What SQLAlchemy raises when the server went away under a statement (a disconnect it detected)."""
    return OperationalError(
        "INSERT INTO case_results ...",
        {},
        Exception("server closed the connection"),
        connection_invalidated=True,
    )


def stored_keys(store: ResultStore, run_id: str) -> list[tuple[str, str]]:
    with store.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT task_id, case_id FROM case_results WHERE run_id = :r"), {"r": run_id}
        )
        return sorted((row[0], row[1]) for row in rows)


@pytest.fixture
def store(store_url: str) -> Iterator[ResultStore]:
    with ResultStore(store_url) as opened:
        yield opened


def _failing_commits(monkeypatch: pytest.MonkeyPatch, fails: int, *, after_commit: bool) -> list[int]:
    """The next ``fails`` commits raise a lost connection (``after_commit``: once the rows are committed,
    as when the acknowledgement is lost); returns the list that counts attempts."""
    attempts = [0]
    real = commits_module._commit

    def flaky(engine: Any, insert: Any, rows: list[dict[str, Any]]) -> None:
        attempts[0] += 1
        if attempts[0] <= fails and not after_commit:
            raise lost_connection()
        real(engine, insert, rows)
        if attempts[0] <= fails:
            raise lost_connection()

    monkeypatch.setattr(commits_module, "_commit", flaky)
    monkeypatch.setattr(commits_module, "FIRST_DELAY_S", 0.01)
    return attempts


@pytest.mark.parametrize("after_commit", [False, True], ids=["before-commit", "ack-lost"])
def test_failed_commits_are_retried_and_store_every_case_once(
    store: ResultStore, monkeypatch: pytest.MonkeyPatch, after_commit: bool
) -> None:
    store.create_run(info("run-1"))
    attempts = _failing_commits(monkeypatch, 3, after_commit=after_commit)
    with store.writer("run-1") as writer:
        for i in range(50):
            writer.put(result(f"c{i}"))
    assert attempts[0] >= 4  # three failures, then the commit that went through
    assert stored_keys(store, "run-1") == sorted(("medqa", f"c{i}") for i in range(50))
    assert len(store.load_results("run-1")) == 50  # each case once, even when a commit was repeated


def test_the_retry_budget_is_kept(store: ResultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.create_run(info("run-1"))
    _failing_commits(monkeypatch, 10_000, after_commit=False)
    writer = store.writer("run-1", retry_s=0.5)
    started = time.monotonic()
    writer.put(result("c1"))
    with pytest.raises(OperationalError):
        writer.close()
    # 0.01 + 0.02 + ... stops before the next delay would pass 0.5 s
    assert 0.3 <= time.monotonic() - started < 2.0
    assert stored_keys(store, "run-1") == []


def test_a_refusal_is_not_retried(store: ResultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.create_run(info("run-1"))
    calls = [0]

    def refused(engine: Any, insert: Any, rows: list[dict[str, Any]]) -> None:
        calls[0] += 1
        raise OperationalError("INSERT", {}, sqlite3.OperationalError("database or disk is full"))

    monkeypatch.setattr(commits_module, "_commit", refused)
    writer = store.writer("run-1")
    writer.put(result("c1"))
    with pytest.raises(OperationalError):
        writer.close()
    assert calls[0] == 1


def test_transient_errors_are_told_from_refusals() -> None:
    import psycopg

    assert is_transient(lost_connection())
    refused = psycopg.OperationalError("connection failed: Connection refused")  # no SQLSTATE: connecting
    assert is_transient(OperationalError("SELECT 1", {}, refused))
    assert is_transient(OperationalError("x", {}, psycopg.errors.AdminShutdown("terminating connection")))
    assert is_transient(OperationalError("x", {}, sqlite3.OperationalError("database is locked")))
    assert not is_transient(OperationalError("x", {}, sqlite3.OperationalError("database or disk is full")))
    assert not is_transient(OperationalError("x", {}, psycopg.errors.DiskFull("no space")))
    assert not is_transient(IntegrityError("x", {}, psycopg.errors.UniqueViolation("dup")))
    assert not is_transient(OSError(28, "No space left on device"))


def test_the_budget_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLINEVAL_STORE_RETRY_S", raising=False)
    assert retry_budget() == 30.0
    monkeypatch.setenv("CLINEVAL_STORE_RETRY_S", "4.5")
    assert retry_budget() == 4.5
    assert retry_budget(0.25) == 0.25  # an explicit value wins
    monkeypatch.setenv("CLINEVAL_STORE_RETRY_S", "0")
    assert retry_budget() == 0.0  # retrying off


# -- a real PostgreSQL restart ---------------------------------------------------------------------------
def _pg(command: str, state: Path, port: int, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLINEVAL_PG_STATE": str(state), "CLINEVAL_PG_PORT": str(port)}
    return subprocess.run(
        ["bash", str(PG_SCRIPT), command, *extra], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def own_postgres(tmp_path: Path) -> Iterator[tuple[str, Path, int]]:
    """A PostgreSQL server of this test's own (it is restarted: the shared one is left alone)."""
    if not list(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl")) or shutil.which("bash") is None:
        if os.environ.get("CLINEVAL_REQUIRE_POSTGRES") == "1":
            pytest.fail("CLINEVAL_REQUIRE_POSTGRES=1 but no PostgreSQL binaries to start a server with")
        pytest.skip("no PostgreSQL binaries (scripts/test_postgres.sh installs them)")
    state, port = Path(f"/tmp/clineval-outage-{os.getpid()}"), 55400 + os.getpid() % 30
    started = _pg("start", state, port)
    assert started.returncode == 0, started.stderr
    url = started.stdout.strip().split("=", 1)[1]
    try:
        yield url, state, port
    finally:
        _pg("stop", state, port)


def _stored(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [row[0] for row in conn.execute(text("SELECT case_id FROM case_results"))]
    except Exception:  # not created yet, or the server is down
        return []
    finally:
        engine.dispose()


def test_a_postgresql_restart_mid_run_is_waited_out(
    tmp_path: Path, own_postgres: tuple[str, Path, int]
) -> None:
    url, state, port = own_postgres
    n = 80
    with running_server_process(Script(latency_s=0.1)) as server:
        suite = write_live_suite(tmp_path, server.base_url, n)
        args = ["run", str(suite), "--store", url, "--concurrency", "2", "--no-cache"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "clineval", *args],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while len(_stored(url)) < 10 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_stored(url)) < n, "the outage should land mid-run"
        down = _pg("restart", state, port, "3")  # the server is away for 3 s (and its shutdown and start)
        assert down.returncode == 0, down.stderr
        _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "error ignored terminating" not in err and "Traceback" not in err
    assert "the store is unavailable" in err and "the store is back" in err  # two lines tell the outage
    ids = _stored(url)
    assert sorted(ids, key=int) == [str(i) for i in range(n)]  # every case exactly once
    with ResultStore(url) as store:
        [run] = store.list_runs()
        assert run.status == "finished"
        assert store.load_run(run.run_id).aggregates["live"].scores["n"] == n
