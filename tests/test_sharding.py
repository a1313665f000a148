"""Sharded runs (issue 16): the partition, 4 real shard processes into one run on SQLite and PostgreSQL
equal to an unsharded run case for case and in the aggregates, finalize refusing missing shards, re-runs
adding nothing twice, a different suite refused."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from clineval.config import load_suite
from clineval.core import UserInputError
from clineval.runs import run as api
from clineval.runs.shards import shard_suite
from clineval.store import ResultStore
from clineval.store.shards import parse_shard, shard_of, shard_run_id
from clineval.testing import case_records

DEMO = Path(str(resources.files("clineval.demo") / "suite.yaml"))
CLINEVAL = [sys.executable, "-m", "clineval"]
STORE = ["--no-cache", "--store"]
PARTIAL = shard_run_id("partial-r")


def _run_shards(url: str, run_id: str, shards: list[int], n: int, cwd: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    procs = [
        subprocess.Popen(
            [*CLINEVAL, "--quiet", "run", str(DEMO), "--shard", f"{k}/{n}", "--run-id", run_id, *STORE, url],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in shards
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err


def test_partition_is_deterministic_and_covers_every_case_once() -> None:
    # fixed values: the same on every machine and Python version (sha256, not hash())
    assert [shard_of("t", str(i), 4) for i in range(8)] == [shard_of("t", str(i), 4) for i in range(8)]
    assert shard_of("task", "case-1", 1) == 0
    assert shard_run_id("nightly") == shard_run_id("nightly") != shard_run_id("nightly2")
    assert shard_run_id("0" * 32) == "0" * 32
    suite = load_suite(DEMO, limit=None, seed=0)
    for n in (1, 2, 3, 4, 7):
        parts = [shard_suite(suite, k, n) for k in range(n)]
        for i, task in enumerate(suite.tasks):
            ids = [c.id for part in parts for c in part.tasks[i].cases]
            assert sorted(ids) == sorted(c.id for c in task.cases)  # every case exactly once
    assert parse_shard("3/4") == (3, 4)
    for bad in ("4/4", "-1/4", "1", "a/b", "0/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def test_partition_values_are_pinned() -> None:
    """The formula itself (docs/runs/sharding.md): a change here re-partitions every stored sharded run."""
    import hashlib

    digest = hashlib.sha256(b"medqa\x0042").hexdigest()
    assert shard_of("medqa", "42", 10) == int(digest[:16], 16) % 10


def test_four_shard_processes_equal_an_unsharded_run(store_url: str, tmp_path: Path) -> None:
    whole = api.run_suite(api.RunRequest(suite_path=DEMO, store_url=store_url, cache_path=None))
    _run_shards(store_url, "sharded-r", [0, 1, 2, 3], 4, tmp_path)
    with ResultStore(store_url) as store:
        sharded = store.load_run(shard_run_id("sharded-r"))
        rows = store.shards.rows(shard_run_id("sharded-r"))
    assert sharded.info.status == "finished"  # the last shard finalized it
    assert [(r.shard, r.of, r.status) for r in rows] == [(k, 4, "complete") for k in range(4)]
    assert sum(r.cases for r in rows) == len(whole.results) == 400
    assert case_records(sharded) == case_records(whole)
    assert sharded.overall == whole.overall
    assert {t: a.model_dump(mode="json") for t, a in sharded.aggregates.items()} == {
        t: a.model_dump(mode="json") for t, a in whole.aggregates.items()
    }
    again = api.finalize("sharded-r", store_url)  # finalize on demand gives the same numbers
    assert again.overall == whole.overall


def test_finalize_names_the_missing_shard_and_a_rerun_adds_nothing(store_url: str, tmp_path: Path) -> None:
    _run_shards(store_url, "partial-r", [0, 2, 3], 4, tmp_path)
    with pytest.raises(UserInputError, match=r"1 of 4 shards not complete: 1/4"):
        api.finalize("partial-r", store_url)
    result = subprocess.run(
        [*CLINEVAL, "finalize", "partial-r", "--store", store_url],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert "1/4" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    with ResultStore(store_url) as store:
        before = store.case_counts([PARTIAL])[PARTIAL]
    _run_shards(store_url, "partial-r", [2], 4, tmp_path)  # a re-run of a complete shard: nothing new
    with ResultStore(store_url) as store:
        assert store.case_counts([PARTIAL])[PARTIAL] == before
        assert store.get_run(PARTIAL).status != "finished"
    _run_shards(store_url, "partial-r", [1], 4, tmp_path)  # the missing one: the run is finalized
    with ResultStore(store_url) as store:
        run = store.load_run(PARTIAL)
        assert run.info.status == "finished" and len(run.results) == 400
        assert len({(r.task_id, r.case_id) for r in run.results}) == 400


def test_a_different_suite_or_shard_count_is_refused(store_url: str, tmp_path: Path) -> None:
    _run_shards(store_url, "other-r", [0], 2, tmp_path)
    other = tmp_path / "other.yaml"
    other.write_text(DEMO.read_text().replace("name: demo-medqa", "name: other-medqa"))
    for data in (DEMO.parent / "data").iterdir():
        (tmp_path / "data").mkdir(exist_ok=True)
        (tmp_path / "data" / data.name).write_bytes(data.read_bytes())
    with pytest.raises(UserInputError, match="different suite"):
        api.run_suite(
            api.RunRequest(
                suite_path=other, store_url=store_url, cache_path=None, shard=(1, 2), run_id="other-r"
            )
        )
    with pytest.raises(UserInputError, match="has 2 shards, not 3"):
        api.run_suite(
            api.RunRequest(
                suite_path=DEMO, store_url=store_url, cache_path=None, shard=(1, 3), run_id="other-r"
            )
        )
    with pytest.raises(UserInputError, match="go together"):
        api.RunRequest(suite_path=DEMO, shard=(0, 2))
