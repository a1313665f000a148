"""Finalizing a sharded run is atomic or recoverable (clineval.store.finalizing), on SQLite and PostgreSQL.

A shard killed (SIGKILL) after it claimed the finalization and before it stored the aggregates leaves the
run ``running`` with no aggregates and no ``eval_results``; re-running that shard, or ``clineval
finalize``, takes the dead claim over and completes the run with the numbers of an unsharded run. A live
claimant is waited for, a stale one taken over, and of two processes claiming at once one wins.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from clineval.core import RunResult
from clineval.runs import run as api
from clineval.store import ResultStore
from clineval.store import finalizing as finalizing_module
from clineval.store.finalizing import claim, finalize_once
from clineval.store.liveness import HOST
from clineval.store.shards import shard_run_id
from clineval.store.tables import runs, utcnow
from clineval.testing import case_records
from tests.test_store import info

DEMO = Path(str(resources.files("clineval.demo") / "suite.yaml"))
FAULTS = Path(__file__).parent / "store_faults.py"


def _shard(
    url: str, run: str, shard: str, cwd: Path, *, kill: bool = False
) -> subprocess.CompletedProcess[str]:
    args = ["run", str(DEMO), "--shard", shard, "--run-id", run, "--no-cache", "--store", url]
    command = (
        [sys.executable, str(FAULTS), "finalize_kill", "0", "--", *args]
        if kill
        else [
            sys.executable,
            "-m",
            "clineval",
            *args,
        ]
    )
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=180, check=False)


def _numbers(run: RunResult) -> tuple[Any, Any]:
    return run.overall, {t: a.model_dump(mode="json") for t, a in run.aggregates.items()}


def _metric_rows(store: ResultStore, run_id: str) -> list[tuple[str | None, str, float]]:
    return sorted(
        (r.condition, r.metric_name, round(r.metric_value, 12))
        for r in store.eval_results.query(run_id=run_id)
    )


def _killed_at_the_claim(url: str, name: str, cwd: Path) -> str:
    """Shard 0/2 of run ``name`` completes; shard 1/2 completes its cases, claims, and is killed."""
    first = _shard(url, name, "0/2", cwd)
    assert first.returncode == 0, first.stderr
    assert "waiting for shards 1/2" in first.stdout
    killed = _shard(url, name, "1/2", cwd, kill=True)
    assert killed.returncode == -9, killed.stderr  # SIGKILL, between the claim and the aggregates
    run_id = shard_run_id(name)
    with ResultStore(url) as store:
        with store.engine.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.run_id == run_id)).one()
        assert row.status == "running" and row.aggregates in (None, {})  # claimed, never finalized
        assert row.finalizer_pid is not None and row.finalizer_pid != os.getpid()  # the dead claimant
        assert store.count_results(run_id) == 400  # every case of both shards is stored
        assert store.eval_results.query(run_id=run_id) == []
        assert [r.status for r in store.shards.rows(run_id)] == ["complete", "complete"]
    return run_id


def test_a_shard_killed_at_the_claim_is_finalized_by_its_rerun_and_by_finalize(
    store_url: str, tmp_path: Path
) -> None:
    whole = api.run_suite(api.RunRequest(suite_path=DEMO, store_url=store_url, cache_path=None))
    with ResultStore(store_url) as store:
        expected_rows = _metric_rows(store, whole.run_id)
    assert expected_rows  # the unsharded run has eval_results rows to compare with

    # 1. the killed shard is run again (an Airflow retry): it takes the dead claim over
    run_id = _killed_at_the_claim(store_url, "killed-r", tmp_path)
    again = _shard(store_url, "killed-r", "1/2", tmp_path)
    assert again.returncode == 0, again.stderr
    assert "finalized already" not in again.stdout  # the run had no aggregates: never reported done
    assert f"shard 1/2 of run {run_id}: complete, " in again.stdout
    with ResultStore(store_url) as store:
        finished = store.load_run(run_id)
        assert finished.info.status == "finished"
        assert case_records(finished) == case_records(whole)
        assert _numbers(finished) == _numbers(whole)
        assert _metric_rows(store, run_id) == expected_rows
    once_more = _shard(store_url, "killed-r", "0/2", tmp_path)  # now it is finalized: said so, exit 0
    assert once_more.returncode == 0 and "finalized already" in once_more.stdout

    # 2. the same kill, then `clineval finalize`
    run_id = _killed_at_the_claim(store_url, "killed-f", tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "clineval", "--quiet", "finalize", "killed-f", "--store", store_url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with ResultStore(store_url) as store:
        finished = store.load_run(run_id)
        assert finished.info.status == "finished"
        assert _numbers(finished) == _numbers(whole)
        assert _metric_rows(store, run_id) == expected_rows


@pytest.fixture
def store(store_url: str) -> Any:
    with ResultStore(store_url) as opened:
        opened.create_run(info("run-1"))
        yield opened


def _set_claimant(store: ResultStore, pid: int | None, host: str | None, age_s: float) -> None:
    beat = utcnow() - timedelta(seconds=age_s)
    with store.engine.begin() as conn:
        conn.execute(
            update(runs)
            .where(runs.c.run_id == "run-1")
            .values(finalizer_pid=pid, finalizer_host=host, finalizer_beat=beat)
        )


def test_a_live_claim_is_respected_and_a_dead_or_stale_one_taken_over(store: ResultStore) -> None:
    engine = store.engine
    _set_claimant(store, 4242, "another-host", age_s=1)  # another machine, beat fresh: alive
    got = claim(engine, "run-1")
    assert got.state == "busy" and got.holder is not None and got.holder.pid == 4242
    _set_claimant(store, 4242, "another-host", age_s=120)  # beat 2 minutes old: dead
    assert claim(engine, "run-1").state == "claimed"
    with store.engine.connect() as conn:
        row = conn.execute(
            select(runs.c.finalizer_pid, runs.c.finalizer_host).where(runs.c.run_id == "run-1")
        ).one()
    assert tuple(row) == (os.getpid(), HOST)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    _set_claimant(store, int(dead.stdout), HOST, age_s=0)  # this host, its process gone: dead at once
    assert claim(engine, "run-1").state == "claimed"
    assert claim(engine, "run-1", force=True).state == "claimed"
    store.finish_run("run-1", {}, {})
    assert claim(engine, "run-1").state == "done"


def test_of_two_processes_claiming_a_dead_claim_one_wins(store: ResultStore) -> None:
    _set_claimant(store, 4242, "another-host", age_s=120)
    barrier = threading.Barrier(2)
    states: list[str] = []

    def take() -> None:
        barrier.wait()
        states.append(claim(store.engine, "run-1").state)

    threads = [threading.Thread(target=take) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(states) == ["busy", "claimed"]


def test_a_waiting_process_returns_once_the_live_claimant_has_finalized(
    store: ResultStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(finalizing_module, "POLL_S", 0.05)
    claimed = threading.Event()
    calls: list[str] = []

    def slow() -> str:
        claimed.set()
        time.sleep(0.6)
        store.finish_run("run-1", {}, {"accuracy": 0.5})
        calls.append("first")
        return "first"

    first = threading.Thread(target=lambda: finalize_once(store.engine, "run-1", slow))
    first.start()
    assert claimed.wait(10)
    waited: list[int | None] = []
    started = time.monotonic()
    second = finalize_once(
        store.engine, "run-1", lambda: calls.append("second"), on_wait=lambda h: waited.append(h.pid)
    )
    first.join()
    assert second is None and calls == ["first"]  # it waited, and did not finalize a second time
    assert waited == [os.getpid()] and time.monotonic() - started >= 0.3
    assert store.get_run("run-1").status == "finished"


def test_a_failed_finalization_gives_its_claim_up(store: ResultStore) -> None:
    def broken() -> None:
        raise RuntimeError("aggregation failed")

    with pytest.raises(RuntimeError):
        finalize_once(store.engine, "run-1", broken)
    with store.engine.connect() as conn:
        row = conn.execute(select(runs.c.finalizer_pid, runs.c.status).where(runs.c.run_id == "run-1")).one()
    assert tuple(row) == (None, "running")
    assert claim(store.engine, "run-1").state == "claimed"  # the next process need not wait
