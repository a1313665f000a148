"""kill -9 in the middle of a live run, then --resume: every case is scored exactly once, and no case that
was stored before the kill is called again."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from clineval.core import Case, CaseInput
from clineval.store import ResultStore
from clineval.systems.prompts import load_prompt
from clineval.testing import Script, running_server_process
from clineval.testing.script import prompt_hash
from tests.cli_helpers import clineval
from tests.test_live_run import write_live_suite

N = 60


def stored_case_ids(db: Path) -> list[str]:
    try:
        with sqlite3.connect(db) as conn:
            return [row[0] for row in conn.execute("SELECT case_id FROM case_results")]
    except sqlite3.OperationalError:  # the run has created the file but not yet its tables
        return []


def prompt_of(i: int) -> str:
    case = Case(
        id=str(i),
        input=CaseInput(question=f"Q{i}?", options={"A": "alpha", "B": "beta", "C": "gamma", "D": "delta"}),
    )
    return str(load_prompt("mcq_cot_v1").render(case)[-1]["content"])


def test_kill_minus_nine_then_resume(tmp_path: Path) -> None:
    with running_server_process(Script(latency_s=0.15)) as server:
        suite = write_live_suite(tmp_path, server.base_url, N)
        db = tmp_path / "store.db"
        args = [str(suite), "--store", f"sqlite:///{db}", "--concurrency", "3", "--no-cache"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "clineval", "run", *args],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not db.exists() or len(stored_case_ids(db)) < 15):
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        before = stored_case_ids(db)
        assert 15 <= len(before) < N, "the kill should land mid-run"

        store = ResultStore(f"sqlite:///{db}")
        [info] = store.list_runs()
        store.close()
        assert info.status == "interrupted"  # stored as running, but its process is gone

        resumed = clineval("run", *args, "--resume", info.run_id[:8], cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr

        after = stored_case_ids(db)
        assert sorted(after, key=int) == [str(i) for i in range(N)]  # each case exactly once
        calls = server.stats["by_prompt"]
        for case_id in before:  # stored before the kill: never called again
            assert calls[prompt_hash(prompt_of(int(case_id)))] == 1, case_id
        # Only the few calls in flight at the kill (at most the concurrency) were made twice; + 2: the
        # pre-flight probe of the run and of its resume (no case)
        assert N + 2 <= server.stats["total"] <= N + 3 + 2

    store = ResultStore(f"sqlite:///{db}")
    run = store.load_run(info.run_id)
    store.close()
    assert run.info.status == "finished" and run.aggregates["live"].scores["n"] == N
