"""Every storage error path through the real CLI: one line, exit 2, no traceback, no case text or output.

Read commands on a store that does not exist; unsupported dialects and missing drivers; a PostgreSQL
database that does not exist; the store filling up or turning read-only mid-run (an injected failing
writer, and a real full tmpfs where this machine lets root mount one), then ``--resume`` completing the
run with every case stored exactly once; report folders that cannot be written; a response cache that
fills up (one warning for the run, not one per case).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from clineval.testing import Script
from clineval.testing.openai_server import ServerHandle
from tests.cli_helpers import MEDQA_ROW, clineval, write_small_suite
from tests.test_live_run import write_live_suite

FAULTS = Path(__file__).parent / "store_faults.py"
SECRET_Q = "SECRETCASETEXT"
SECRET_A = "MODELOUTPUTTEXT"


def error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a failed command printed besides the run announcement and progress lines."""
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = [
        line
        for line in result.stderr.splitlines()
        if line.strip() and not re.match(r"(run [0-9a-f]{32}$|progress )", line)
    ]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


def write_suite(folder: Path, n: int, *, pad: int = 0) -> Path:
    """n MedQA questions answered by a predictions file; each question and answer holds a marker text."""
    folder.mkdir(parents=True, exist_ok=True)
    rows, predictions = [], []
    for i in range(n):
        row = json.loads(MEDQA_ROW.format(i=i, gold="ABCD"[i % 4]))
        row["question"] = f"{SECRET_Q} {i} {'x' * pad}?"
        rows.append(json.dumps(row))
        predictions.append(json.dumps({"id": str(i), "output": f"{SECRET_A} {'y' * pad} answer: A"}))
    (folder / "q.jsonl").write_text("\n".join(rows) + "\n")
    (folder / "p.jsonl").write_text("\n".join(predictions) + "\n")
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: errors\ntasks:\n  - id: t\n    dataset: {format: medqa, path: q.jsonl}\n"
        "    system: {type: predictions, path: p.jsonl}\n    scorers: [mcq]\n"
    )
    return suite


def stored(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT case_id FROM case_results ORDER BY id")]


def with_fault(fault: str, keep: int, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(FAULTS), fault, str(keep), "--", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_printed_command(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the `clineval run ... --resume ID ...` command an error or Ctrl-C message printed."""
    command = line.split("complete the run with: ", 1)[1]
    words = shlex.split(command)
    assert words[:2] == ["clineval", "run"], command
    return clineval(*words[1:], cwd=cwd)


# -- read commands never create a store ------------------------------------------------------------------
READ_COMMANDS = [
    ["runs"],
    ["report", "abc", "--out", "o"],
    ["compare", "abc", "def"],
    ["results"],
    ["baseline", "list"],
    ["baseline", "show", "main"],
    ["baseline", "history", "main"],
    ["feedback", "abc"],
    ["db", "current"],
    ["combined-score", "abc", "--weights", "safety=1"],
    ["gate", "abc", "--baseline", "main"],
    ["baseline", "promote", "abc", "--name", "main"],
]


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_read_command_on_a_missing_store_creates_nothing(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "nowhere" / "store.db"
    result = clineval(*command, "--store", f"sqlite:///{db}", cwd=tmp_path)
    assert result.returncode == 2
    assert error_line(result) == (f"error: no store at {db} — run `clineval run` first or pass --store")
    assert not db.parent.exists()


def test_the_default_store_is_not_created_by_runs(tmp_path: Path) -> None:
    result = clineval("runs", cwd=tmp_path)
    assert result.returncode == 2
    assert "no store at .clineval/clineval.db" in error_line(result)
    assert list(tmp_path.iterdir()) == []


def test_a_missing_postgresql_database_is_one_line(tmp_path: Path) -> None:
    url = os.environ.get("CLINEVAL_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("no PostgreSQL server: set CLINEVAL_TEST_POSTGRES_URL")
    name = f"clineval_missing_{uuid.uuid4().hex[:8]}"
    missing = make_url(url).set(database=name).render_as_string(hide_password=False)
    result = clineval("runs", "--store", missing, cwd=tmp_path)
    assert result.returncode == 2
    line = error_line(result)
    assert f"no PostgreSQL database '{name}'" in line and f"create it (createdb {name})" in line


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mysql+pymysql://u@db.example/evals", "the mysql dialect is not supported"),
        ("mssql+pyodbc://u@db.example/evals", "the mssql dialect is not supported"),
        ("postgresql+asyncpg://u@db.example/evals", "postgresql+asyncpg is an asyncio driver"),
        ("postgresql+psycopg2://u@h/db", "driver 'psycopg2' is not installed — pip install psycopg2-binary"),
        ("postgresql+pg8000://u@h/db", "driver 'pg8000' is not installed — pip install pg8000"),
    ],
)
def test_unsupported_dialects_and_missing_drivers(tmp_path: Path, url: str, expected: str) -> None:
    result = clineval("runs", "--store", url, cwd=tmp_path)
    assert result.returncode == 2
    line = error_line(result)
    assert expected in line, line
    assert "pip install 'clineval'" not in line  # the old message, with its [postgresql] eaten as markup


# -- the store refuses a write mid-run, then --resume completes the run -------------------------------------
@pytest.mark.parametrize(
    ("fault", "reason", "remedy"),
    [
        ("store_full", "disk full", "free space"),
        ("store_readonly", "read-only", "make it writable"),
        ("store_erofs", "read-only file system", "make it writable"),
    ],
)
def test_store_write_failure_mid_run_then_resume(
    tmp_path: Path, fault: str, reason: str, remedy: str
) -> None:
    n, keep = 20, 7
    suite = write_suite(tmp_path, n)
    db = tmp_path / "s.db"
    store = f"sqlite:///{db}"
    failed = with_fault(fault, keep, "run", "suite.yaml", "--store", store, cwd=tmp_path)
    assert failed.returncode == 2
    line = error_line(failed)
    run_id = re.search(r"--resume ([0-9a-f]{32})", line)
    assert run_id is not None, line
    assert line == (
        f"error: the store {db} cannot be written ({reason}): {keep} finished cases are stored — {remedy} "
        f"and complete the run with: clineval run suite.yaml --resume {run_id[1]} --store {store}"
    )
    assert SECRET_Q not in failed.stderr + failed.stdout and SECRET_A not in failed.stderr + failed.stdout
    before = stored(db)
    assert len(before) == keep

    listing = clineval("runs", "--store", store, cwd=tmp_path)
    assert re.search(rf"{run_id[1]}\s+\S+\s+interrupted\b", listing.stdout), listing.stdout  # id suite status

    resumed = run_printed_command(line, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    after = stored(db)
    assert after[:keep] == before  # the rows stored before are kept, not rewritten
    assert sorted(after, key=int) == [str(i) for i in range(n)]  # every case exactly once
    assert suite.exists()


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs (root may mount one, as in CI containers); skipped where mounting is not allowed."""
    mount_point = tmp_path / "tmpfs"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def grow(mount_point: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(mount_point)], check=True)


def test_a_real_full_disk_mid_run_then_resume_after_freeing_space(tmp_path: Path, tmpfs: Path) -> None:
    # About 3 KB of results per case: the 4 MiB store fills up part way. A replay commits in groups of a
    # few hundred cases (what arrives within the writer's linger), so the store must hold several groups.
    n = 2500
    grow(tmpfs, "4m")
    write_suite(tmp_path / "work", n, pad=1500)
    work = tmp_path / "work"
    db = tmpfs / "s.db"
    store = f"sqlite:///{db}"
    failed = clineval("run", "suite.yaml", "--store", store, "--no-cache", cwd=work)
    assert failed.returncode == 2
    line = error_line(failed)
    match = re.fullmatch(
        rf"error: the store {db} cannot be written \(disk full\): (\d+) finished cases are stored — "
        r"free space and complete the run with: clineval run suite.yaml --resume ([0-9a-f]{32}) "
        rf"--store {store}",
        line,
    )
    assert match is not None, line
    assert SECRET_Q not in failed.stderr and SECRET_A not in failed.stderr
    before = stored(db)
    assert 0 < len(before) < n and len(before) == int(match[1])

    grow(tmpfs, "32m")
    resumed = run_printed_command(line, work)
    assert resumed.returncode == 0, resumed.stderr
    after = stored(db)
    assert after[: len(before)] == before
    assert sorted(after, key=int) == [str(i) for i in range(n)]


# -- report folders -----------------------------------------------------------------------------------------
def test_unwritable_out_folders_are_one_line(tmp_path: Path) -> None:
    write_small_suite(tmp_path, predictions=['{"id": "0", "output": "A"}', '{"id": "1", "output": "B"}'], n=2)
    (tmp_path / "a_file").write_text("not a folder")
    store = f"sqlite:///{tmp_path}/s.db"
    bad_out = tmp_path / "a_file" / "reports"

    refused = clineval("run", "suite.yaml", "--store", store, "--out", str(bad_out), cwd=tmp_path)
    assert refused.returncode == 2  # before the run (tests/test_out_dir_checked_first.py): nothing stored
    assert error_line(refused) == (
        f"error: --out {bad_out} cannot be written (Not a directory) — name a folder clineval can create "
        "and write (nothing was run)"
    )
    ran = clineval("run", "suite.yaml", "--store", store, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    run_id = re.search(r"run ([0-9a-f]{32})", ran.stderr)
    assert run_id is not None
    short = run_id[1][:12]

    report = clineval("report", short, "--store", store, "--out", str(bad_out), cwd=tmp_path)
    assert report.returncode == 2
    assert error_line(report).startswith(f"error: cannot write the reports to {bad_out}: Not a directory")

    compared = clineval(
        "compare", short, short, "--store", store, "--out", str(bad_out / "c.md"), cwd=tmp_path
    )
    assert compared.returncode == 2  # after the warning that a run compared with itself has no deltas
    assert compared.stderr.strip().splitlines()[1:] == [f"error: {bad_out}: Not a directory"]

    written = clineval("report", short, "--store", store, "--out", "ok", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    assert sorted(p.name for p in (tmp_path / "ok").iterdir()) == [
        "report.html",
        "report.json",
        "report.md",
        "results.jsonl",
    ]


def test_a_full_out_folder_is_one_line_and_leaves_no_partial_file(tmp_path: Path, tmpfs: Path) -> None:
    write_suite(tmp_path / "work", 600, pad=1500)  # results.jsonl alone is over 1 MiB
    work = tmp_path / "work"
    store = f"sqlite:///{tmp_path}/s.db"
    ran = clineval("run", "suite.yaml", "--store", store, "--no-cache", "--out", str(tmpfs), cwd=work)
    assert ran.returncode == 2
    line = error_line(ran)
    assert line.startswith(f"error: cannot write the reports to {tmpfs}: No space left on device — run ")
    assert SECRET_Q not in ran.stderr and SECRET_A not in ran.stderr
    assert not [p.name for p in tmpfs.iterdir() if p.name.endswith(".partial")]
    assert "results.jsonl" not in {p.name for p in tmpfs.iterdir()}  # never a truncated file


# -- the response cache -------------------------------------------------------------------------------------
def test_a_full_response_cache_is_one_warning_and_the_run_goes_on(
    tmp_path: Path, start_server: Callable[..., ServerHandle]
) -> None:
    n, keep = 30, 5
    server = start_server(Script(latency_s=0))
    write_live_suite(tmp_path, server.base_url, n)
    db = tmp_path / "s.db"
    cache = tmp_path / "cache.sqlite"
    result = with_fault(
        "cache_full",
        keep,
        "run",
        "suite.yaml",
        "--store",
        f"sqlite:///{db}",
        "--cache-path",
        str(cache),
        "--out",
        "out",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    warnings = [line for line in result.stderr.splitlines() if "response cache" in line]
    assert warnings == [
        f"warning: the response cache {cache} could not be written (database or disk is full): the run "
        "went on without caching, so a re-run will call the system again"
    ]
    assert sorted(stored(db), key=int) == [str(i) for i in range(n)]
    with sqlite3.connect(cache) as conn:
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone() == (keep,)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert sum("response cache" in w for w in report["warnings"]) == 1


def test_a_cache_that_cannot_be_created_is_one_warning(tmp_path: Path) -> None:
    write_small_suite(tmp_path, predictions=['{"id": "0", "output": "A"}'], n=1)
    (tmp_path / "a_file").write_text("")
    cache = tmp_path / "a_file" / "cache.sqlite"
    result = clineval(
        "run", "suite.yaml", "--store", f"sqlite:///{tmp_path}/s.db", "--cache-path", str(cache), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "response cache" in line]
    assert warnings == [
        f"warning: the response cache {cache} could not be written (File exists: {cache.parent}): the run "
        "went on without caching, so a re-run will call the system again"
    ]
