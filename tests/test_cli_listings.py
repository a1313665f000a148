"""What the listing commands print, read as a user reads them: ``clineval runs`` and ``clineval results`` at
80 columns (piped: rich assumes 80), ``compare`` of a run with itself, and the token usage lines."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from clineval.runs import run as api
from tests.cli_helpers import write_small_suite

DEMO = Path(str(resources.files("clineval.demo") / "suite.yaml"))


def cli80(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "clineval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[str]]:
    """Two demo runs (two systems each) and a one-task callable run, oldest first."""
    folder = tmp_path_factory.mktemp("listings")
    url = f"sqlite:///{folder}/s.db"
    ids = [
        api.run_suite(api.RunRequest(suite_path=DEMO, store_url=url, cache_path=None)).run_id for _ in "ab"
    ]
    suite = write_small_suite(folder, predictions=[])
    (folder / "answers.py").write_text("def answer(case):\n    return 'A'\n")
    suite.write_text(
        suite.read_text()
        .replace("name: small", "name: a-much-longer-suite-name-that-tables-cut")
        .replace(
            "      type: predictions\n      path: p.jsonl\n",
            '      type: callable\n      target: "answers:answer"\n',
        )
    )
    ids.append(api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id)
    return folder, url, ids


def test_runs_at_80_columns_shows_suite_system_tasks_headline_and_status(
    store: tuple[Path, str, list[str]],
) -> None:
    folder, url, ids = store
    done = cli80("runs", "--store", url, cwd=folder)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, done.stdout
    assert [
        line.split()[0] for line in lines if line.startswith("  ") and not line.startswith("    ")
    ] == ids[::-1]
    callable_run = done.stdout.index(ids[2])
    block = done.stdout[callable_run : done.stdout.index(ids[1])]
    assert "a-much-longer-suite-name-that-tables-cut" in block  # before: cut to 7 characters
    assert "finished" in block and "1 task, 3 cases, 0 failed" in block
    assert "accuracy 33.33%  answers:answer" in block  # gold is A, B, C: one right
    demo = done.stdout[done.stdout.index(ids[0]) :]
    assert "demo-medqa-gpt4-vs-gpt35" in demo and "2 tasks, 400 cases, 1 failed" in demo
    assert "accuracy 83.00%  medqa_cot_gpt-4-32k_first200" in demo  # each system's own headline
    assert "accuracy 70.50%  medqa_cot_gpt-35-turbo-16k_first200" in demo


def test_results_lists_the_newest_rows_first_and_says_how_many_of_how_many(
    store: tuple[Path, str, list[str]],
) -> None:
    folder, url, ids = store
    conn = sqlite3.connect(folder / "s.db")
    try:
        total = conn.execute("SELECT count(*) FROM eval_results").fetchone()[0]
    finally:
        conn.close()
    assert total > 10
    done = cli80("results", "--store", url, "--limit", "10", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.splitlines()[0] == f"eval_results: 10 of {total} rows, newest first (--limit N for more)"
    )
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    as_json = cli80("results", "--store", url, "--limit", "10", "--json", cwd=folder)
    rows = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert len(rows) == 10 and rows[0]["run_id"] == ids[2]  # before: the oldest 10 (the first demo run's)
    assert [r["timestamp"] for r in rows] == sorted((r["timestamp"] for r in rows), reverse=True)
    everything = cli80("results", "--store", url, "--limit", "100000", cwd=folder)
    assert everything.stdout.splitlines()[0] == f"eval_results: {total} rows, newest first"


def test_compare_of_a_run_with_itself_warns(store: tuple[Path, str, list[str]]) -> None:
    folder, url, ids = store
    done = cli80("compare", ids[0][:8], ids[0], "--store", url, cwd=folder)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"warning: {ids[0][:8]} and {ids[0]} are the same run ({ids[0][:12]}): every delta is 0 — name two "
        "runs (`clineval runs` lists them)"
    ]
    other = cli80("compare", ids[0], ids[1], "--store", url, cwd=folder)
    assert other.returncode == 0 and "warning" not in other.stderr


def test_usage_lines_only_where_a_call_was_made(store: tuple[Path, str, list[str]]) -> None:
    folder, url, ids = store
    replayed = cli80("report", ids[0], "--out", "demo", "--store", url, cwd=folder)
    assert replayed.returncode == 0, replayed.stderr
    assert "reported usage" not in replayed.stdout  # before: "tokens: 0 of 200 calls reported usage" twice
    assert "Tokens" not in (folder / "demo" / "report.md").read_text()
    called = cli80("report", ids[2], "--out", "called", "--store", url, cwd=folder)
    assert "t tokens: 0 of 3 calls reported usage" in called.stdout  # a callable was called 3 times
    assert "Tokens (t): 0 of 3 calls reported usage" in (folder / "called" / "report.md").read_text()
