"""SIGTERM (what CI runners and Airflow send on a timeout) stops ``clineval run`` like Ctrl-C: the run is
stored as ``interrupted``, the resume command is printed, and the exit code is 143 (it was 143 with no
resume line and a run left ``running``)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clineval.runs.interrupts import Terminated, sigterm_as_interrupt
from clineval.testing import Script, running_server_process
from tests.test_interrupted import case_ids, stored_status
from tests.test_live_run import write_live_suite
from tests.test_store_errors import run_printed_command


def test_sigterm_stores_the_run_interrupted_and_resume_completes_it(tmp_path: Path) -> None:
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
            while time.monotonic() < deadline and len(case_ids(db)) < 4:
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 143, stderr
        assert "Traceback" not in stderr
        with sqlite3.connect(db) as conn:
            [(rid,)] = conn.execute("SELECT run_id FROM runs").fetchall()
        last = stderr.strip().splitlines()[-1]
        assert last == (
            "interrupted: finished cases are stored; complete the run with: clineval run suite.yaml "
            f"--resume {rid} --store {store}"
        )
        assert stored_status(db, rid) == "interrupted"
        before = case_ids(db)
        assert 4 <= len(before) < n

        resumed = run_printed_command(last, tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        after = case_ids(db)
        assert sorted(after, key=int) == [str(i) for i in range(n)]  # every case once
        assert stored_status(db, rid) == "finished"
        # the resume called only the cases not stored: at most the 2 in flight at SIGTERM were called twice
        # (+ 2: the pre-flight probes of the run and of its resume, no case)
        assert n + 2 <= server.stats["total"] <= n + 2 + 2


def test_sigterm_before_any_run_exits_143_with_one_line() -> None:
    with pytest.raises(Terminated) as err, sigterm_as_interrupt():
        signal.raise_signal(signal.SIGTERM)
        time.sleep(5)  # interrupted at once
    assert err.value.exit_code == 143 and err.value.resume_command is None


def test_the_handler_is_restored_and_ctrl_c_stays_130() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt) as err, sigterm_as_interrupt():
        signal.raise_signal(signal.SIGINT)
        time.sleep(5)
    assert not isinstance(err.value, Terminated)
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigterm_stops_a_process_that_ignores_ctrl_c() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a shell's background job
    try:
        with pytest.raises(Terminated), sigterm_as_interrupt():
            signal.raise_signal(signal.SIGTERM)
            time.sleep(5)
    finally:
        signal.signal(signal.SIGINT, previous)
