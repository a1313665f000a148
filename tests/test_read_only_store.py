"""A store on read-only media can be read: every read command, and ``clineval view --read-only``.

The tests run as root, which writes anywhere, so read-only media are simulated where clineval detects them
(``store.engine.writable_folder``: False for the copy's folder). What is checked is what read-only media
need: no migration lock, no WAL switch, no file created beside the database, its bytes and mtime unchanged,
and an engine that refuses a write (SQLite's own ``immutable`` / ``mode=ro`` opening, not a promise).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from starlette.testclient import TestClient
from typer.testing import CliRunner

from clineval.cli.main import app
from clineval.core.errors import UserInputError
from clineval.store import ResultStore, engine
from clineval.view import create_app
from tests.cli_helpers import clineval, write_small_suite


def _fingerprint(folder: Path) -> dict[str, tuple[str, int]]:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in folder.iterdir()
    }


@pytest.fixture
def media(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A store with one finished run, copied into ``media/``, which clineval sees as read-only media."""
    write_small_suite(tmp_path, predictions=['{"id": "0", "output": "A"}', '{"id": "1", "output": "C"}'])
    done = clineval("run", "suite.yaml", "--store", "sqlite:///made.db", "--allow-degraded", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(tmp_path / "made.db")
    try:
        (run_id,) = conn.execute("SELECT run_id FROM runs").fetchone()
    finally:
        conn.close()  # its -wal and -shm go with it
    folder = tmp_path / "media"
    folder.mkdir()
    shutil.copy2(tmp_path / "made.db", folder / "runs.db")
    assert [p.name for p in folder.iterdir()] == ["runs.db"]
    real = engine.writable_folder
    monkeypatch.setattr(engine, "writable_folder", lambda p: real(p) and folder not in p.absolute().parents)
    return folder, str(run_id)


def test_every_read_command_reads_read_only_media_and_writes_nothing(
    media: tuple[Path, str], tmp_path: Path
) -> None:
    folder, run_id = media
    url = f"sqlite:///{folder / 'runs.db'}"
    before = _fingerprint(folder)
    runner = CliRunner()
    for args, needle in [
        (["runs", "--store", url], run_id),
        (["results", "--store", url], "eval_results: 4 rows, newest first"),
        (["report", run_id[:8], "--out", str(tmp_path / "o"), "--store", url], "reports:"),
        (["compare", run_id, run_id, "--store", url], "accuracy"),
        (["db", "current", "--store", url], "(head"),
        (["feedback", run_id, "--store", url], '"withheld_heldout": 0'),
    ]:
        done = runner.invoke(app, args, env={"COLUMNS": "200"})
        assert done.exit_code == 0, (args, done.output)
        assert needle in done.output, (args, done.output)
    assert _fingerprint(folder) == before  # no -wal, -shm or .migrate.lock; the database untouched
    assert (tmp_path / "o" / "report.json").is_file()


def test_the_viewer_serves_read_only_media(media: tuple[Path, str]) -> None:
    folder, run_id = media
    before = _fingerprint(folder)
    client = TestClient(
        create_app(f"sqlite:///{folder / 'runs.db'}", read_only=True), base_url="http://127.0.0.1"
    )
    page = client.get("/")
    assert page.status_code == 200 and run_id[:12] in page.text
    assert client.get(f"/run?run={run_id}").status_code == 200
    assert _fingerprint(folder) == before


def test_a_read_only_store_refuses_writes_and_an_old_one_is_named(media: tuple[Path, str]) -> None:
    folder, _ = media
    store = ResultStore(f"sqlite:///{folder / 'runs.db'}", read_only=True)
    try:
        with pytest.raises(OperationalError, match="readonly database"), store.engine.begin() as conn:
            conn.execute(text("UPDATE runs SET suite_name = 'x'"))
    finally:
        store.close()
    shutil.copy2(folder / "runs.db", folder / "old.db")
    raw = sqlite3.connect(folder / "old.db")  # sqlite3 itself: the patch fools only clineval
    try:
        raw.execute("UPDATE alembic_version SET version_num = '0006'")
        raw.commit()
    finally:
        raw.close()
    with pytest.raises(UserInputError) as err:
        ResultStore(f"sqlite:///{folder / 'old.db'}", read_only=True)
    assert re.search(
        r"old\.db is read-only and at schema revision 0006, older than this clineval's", str(err.value)
    )


def test_a_write_ahead_log_beside_the_database_is_read(media: tuple[Path, str], tmp_path: Path) -> None:
    """Media copied while a writer held the store: rows committed to the -wal only are read too."""
    folder, run_id = media
    writer = sqlite3.connect(tmp_path / "made.db")
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("UPDATE runs SET suite_name = 'renamed-in-wal'")
        writer.commit()
        for name in ("made.db", "made.db-wal", "made.db-shm"):
            shutil.copy2(tmp_path / name, folder / name.replace("made", "walled"))
    finally:
        writer.close()
    assert (folder / "walled.db-wal").stat().st_size > 0
    store = ResultStore(f"sqlite:///{folder / 'walled.db'}", read_only=True)
    try:
        assert store.get_run(run_id).suite.name == "small" and store.list_runs()[0].run_id == run_id
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT suite_name FROM runs")).scalar() == "renamed-in-wal"
    finally:
        store.close()
