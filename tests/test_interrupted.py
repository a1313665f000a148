"""Runs whose process died show as ``interrupted``; a live run cannot be resumed by a second process;
Ctrl-C stores ``interrupted`` and prints the real resume command; ``--resume`` refuses a changed
``--seed`` / ``--limit`` and otherwise uses the stored ones."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import select, text, update

from clineval.store import ResultStore
from clineval.store import liveness as liveness_module
from clineval.store import writer as writer_module
from clineval.store.liveness import HOST, STALE_AFTER_S, Owner, shown_status
from clineval.store.migrate import _config, current_revision
from clineval.store.tables import runs, utcnow
from clineval.testing import Script, running_server_process
from tests.cli_helpers import clineval, write_small_suite
from tests.test_live_run import write_live_suite
from tests.test_store import info, result
from tests.test_store_errors import error_line, run_printed_command

PREDICTIONS = [f'{{"id": "{i}", "output": "{"ABCD"[i % 4]}"}}' for i in range(6)]


def case_ids(db: Path) -> list[str]:
    try:
        with sqlite3.connect(db) as conn:
            return [row[0] for row in conn.execute("SELECT case_id FROM case_results")]
    except sqlite3.OperationalError:  # the file exists, its tables not yet
        return []


def stored_status(db: Path, run_id: str) -> str:
    with sqlite3.connect(db) as conn:
        return str(conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0])


# -- the rules ----------------------------------------------------------------------------------------------
def test_the_liveness_rules() -> None:
    now = utcnow()
    fresh, stale = now - timedelta(seconds=2), now - timedelta(seconds=STALE_AFTER_S + 1)
    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    gone = int(dead_pid.stdout)  # a pid that existed and has exited (reaped by subprocess.run)
    assert shown_status("running", Owner(123, "other-host", fresh), "r", now) == "running"
    assert shown_status("running", Owner(123, "other-host", stale), "r", now) == "interrupted"
    assert shown_status("running", Owner(gone, HOST, fresh), "r", now) == "interrupted"  # known at once
    assert shown_status("running", Owner(None, None, None), "r", now) == "interrupted"  # pre-heartbeat
    assert shown_status("finished", Owner(gone, HOST, stale), "r", now) == "finished"
    # this very process: alive only while it has the run's writer open
    me = Owner(os.getpid(), HOST, fresh)
    assert shown_status("running", me, "mine", now) == "interrupted"
    liveness_module.mark_active("mine", True)
    try:
        assert shown_status("running", me, "mine", now) == "running"
    finally:
        liveness_module.mark_active("mine", False)


def test_the_writer_keeps_the_heartbeat_fresh(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer_module, "HEARTBEAT_S", 0.05)
    with ResultStore(store_url) as store:
        store.create_run(info("beating"))
        with store.engine.connect() as conn:
            created = conn.execute(select(runs.c.heartbeat_at).where(runs.c.run_id == "beating")).scalar()
        with store.writer("beating") as writer:
            assert store.get_run("beating").status == "running"
            time.sleep(0.3)  # idle: the thread wakes for the heartbeat alone
            writer.put(result("c1"))
            writer.flush()
        with store.engine.connect() as conn:
            beat = conn.execute(select(runs.c.heartbeat_at).where(runs.c.run_id == "beating")).scalar()
        assert beat > created
        # writer closed, run never finalised: no process is running it any more
        assert store.get_run("beating").status == "interrupted"


def test_interrupted_is_a_stored_status_and_the_downgrade_maps_it_back(store_url: str) -> None:
    with ResultStore(store_url) as store:
        store.create_run(info("stopped"))
        with store.engine.begin() as conn:
            conn.execute(update(runs).where(runs.c.run_id == "stopped").values(status="interrupted"))
            command.downgrade(_config(conn), "0002")
            assert current_revision(conn) == "0002"
            status = conn.execute(text("SELECT status FROM runs WHERE run_id = 'stopped'")).scalar()
        assert status == "running"  # the old schema has no 'interrupted'; its processes stay unknown
    with ResultStore(store_url) as again:  # upgraded on open
        assert again.get_run("stopped").status == "interrupted"  # running, with no heartbeat


# -- through the CLI ----------------------------------------------------------------------------------------
def test_resume_refuses_another_seed_or_limit_and_uses_the_stored_ones(tmp_path: Path) -> None:
    write_small_suite(tmp_path, predictions=PREDICTIONS, n=6)
    store = f"sqlite:///{tmp_path}/s.db"
    first = clineval("run", "suite.yaml", "--store", store, "--limit", "4", "--seed", "3", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    run_id = re.search(r"run ([0-9a-f]{32})", first.stderr)
    assert run_id is not None
    rid = run_id[1]

    seed = clineval("run", "suite.yaml", "--store", store, "--resume", rid, "--seed", "4", cwd=tmp_path)
    assert seed.returncode == 2
    assert error_line(seed) == (
        f"error: --resume {rid[:12]}: the run was made with --seed 3, not --seed 4 — omit --seed (the "
        "stored one is used), or start a new run"
    )
    limit = clineval("run", "suite.yaml", "--store", store, "--resume", rid, "--limit", "5", cwd=tmp_path)
    assert limit.returncode == 2
    assert "the run was made with --limit 4, not --limit 5" in error_line(limit)

    same = clineval(
        "run",
        "suite.yaml",
        "--store",
        store,
        "--resume",
        rid[:8],
        "--limit",
        "4",
        "--seed",
        "3",
        cwd=tmp_path,
    )
    assert same.returncode == 0, same.stderr
    omitted = clineval("run", "suite.yaml", "--store", store, "--resume", rid[:8], cwd=tmp_path)
    assert omitted.returncode == 0, omitted.stderr
    with ResultStore(store) as opened:
        run = opened.load_run(rid)
    assert (run.info.suite.limit, run.info.suite.seed, len(run.results)) == (4, 3, 4)

    full = clineval("run", "suite.yaml", "--store", store, cwd=tmp_path)
    full_id = re.search(r"run ([0-9a-f]{32})", full.stderr)
    assert full_id is not None
    limited = clineval(
        "run", "suite.yaml", "--store", store, "--resume", full_id[1], "--limit", "2", cwd=tmp_path
    )
    assert limited.returncode == 2
    assert "the run was made with --limit none, not --limit 2" in error_line(limited)


def test_a_run_owned_elsewhere_is_running_until_its_heartbeat_is_stale(tmp_path: Path) -> None:
    write_small_suite(tmp_path, predictions=PREDICTIONS, n=6)
    db = tmp_path / "s.db"
    store = f"sqlite:///{db}"
    first = clineval("run", "suite.yaml", "--store", store, cwd=tmp_path)
    rid = re.search(r"run ([0-9a-f]{32})", first.stderr)
    assert rid is not None
    with sqlite3.connect(db) as conn:  # as if another host were running it now
        conn.execute(
            "UPDATE runs SET status = 'running', owner_pid = 4242, owner_host = 'build-7', heartbeat_at = ?",
            (utcnow().strftime("%Y-%m-%d %H:%M:%S.%f"),),
        )
    listing = clineval("runs", "--store", store, cwd=tmp_path)
    assert re.search(rf"{rid[1]}\s+small\s+running\b", listing.stdout), listing.stdout  # id suite status
    refused = clineval("run", "suite.yaml", "--store", store, "--resume", rid[1], cwd=tmp_path)
    assert refused.returncode == 2
    assert re.fullmatch(
        rf"error: run {rid[1]} is still running \(pid 4242 on build-7, heartbeat \d+ s ago\) — wait for it "
        "to finish, or stop that process before resuming",
        error_line(refused),
    )

    old = utcnow() - timedelta(seconds=STALE_AFTER_S + 5)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET heartbeat_at = ?", (old.strftime("%Y-%m-%d %H:%M:%S.%f"),))
    listing = clineval("runs", "--store", store, cwd=tmp_path)
    assert re.search(rf"{rid[1]}\s+small\s+interrupted\b", listing.stdout), listing.stdout  # id suite status
    resumed = clineval("run", "suite.yaml", "--store", store, "--resume", rid[1], cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert stored_status(db, rid[1]) == "finished"


def test_a_live_run_cannot_be_resumed_and_ctrl_c_prints_the_real_command(tmp_path: Path) -> None:
    n = 40
    with running_server_process(Script(latency_s=0.2)) as server:
        write_live_suite(tmp_path, server.base_url, n)
        db = tmp_path / "store.db"
        store = f"sqlite:///{db}"
        args = ["suite.yaml", "--store", store, "--concurrency", "2", "--no-cache"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "clineval", "run", *args],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(case_ids(db)) < 6:
                time.sleep(0.05)
            with sqlite3.connect(db) as conn:
                [(rid,)] = conn.execute("SELECT run_id FROM runs").fetchall()

            second = clineval("run", *args, "--resume", rid[:10], cwd=tmp_path)
            assert second.returncode == 2
            assert re.fullmatch(
                rf"error: run {rid} is still running \(pid {proc.pid} on {re.escape(HOST)}, heartbeat \d+ s "
                r"ago\) — wait for it to finish, or stop that process before resuming",
                error_line(second),
            )

            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 130, stderr
        assert "Traceback" not in stderr
        last = stderr.strip().splitlines()[-1]
        assert last == (
            "interrupted: finished cases are stored; complete the run with: clineval run suite.yaml "
            f"--resume {rid} --store {store}"
        )
        assert stored_status(db, rid) == "interrupted"
        before = case_ids(db)
        assert 6 <= len(before) < n

        resumed = run_printed_command(last, tmp_path)
        assert resumed.returncode == 0, resumed.stderr
    after = case_ids(db)
    assert sorted(after, key=int) == [str(i) for i in range(n)]
    assert stored_status(db, rid) == "finished"
