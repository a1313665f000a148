"""A command that fails before its run starts writes nothing to ``--out`` and names the user's options, never
a file it generated; once its run has started, what it wrote stays (``clineval.cli.run_guard``)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clineval.cli.run_guard import OutGuard, guarded_out
from clineval.core.errors import SuiteError, UserInputError
from clineval.testing import Script, running_server_process
from tests.cli_helpers import clineval
from tests.test_interrupted import case_ids
from tests.test_live_run import write_live_suite
from tests.test_store_errors import run_printed_command


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_a_grader_that_is_the_model_under_test_is_named_by_its_options(tmp_path: Path) -> None:
    done = clineval(
        "eval", "healthbench", "--model", "vllm/m", "--grader", "vllm/M", "--limit", "2",
        "--out", "hb", "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path,
    )  # fmt: skip
    line = _one_error_line(done)
    assert line == (
        "error: --grader vllm/M is the model under test (--model vllm/m): it would grade its own answers "
        "— pass another model as --grader"
    )
    assert (
        ".yaml" not in line and "allow_same_model" not in line
    )  # before: eval-<hash>.yaml:21 and a YAML key
    assert not (tmp_path / "hb").exists()  # before: the generated suite was left in --out


def test_a_failing_eval_or_run_leaves_no_out_folder(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/s.db"
    bad_data = clineval(
        "eval", "healthbench", "--model", "vllm/m", "--grader", "vllm/g", "--data", str(tmp_path / "none"),
        "--out", "a/deeper", "--store", store, cwd=tmp_path,
    )  # fmt: skip
    assert "not found" in _one_error_line(bad_data)
    assert not (tmp_path / "a").exists()  # nor the parent folder the command created
    no_suite = clineval("run", "missing.yaml", "--out", "b/c", "--store", store, cwd=tmp_path)
    assert "suite file not found" in _one_error_line(no_suite)
    assert not (tmp_path / "b").exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine")
    again = clineval("run", "missing.yaml", "--out", "kept", "--store", store, cwd=tmp_path)
    assert again.returncode == 2
    assert [p.name for p in kept.iterdir()] == ["notes.txt"]  # a folder that existed stays, with its files


def test_the_guard_removes_only_what_it_wrote_before_the_run_started(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(SuiteError), guarded_out(out) as guard:
        suite = guard.generated(out / "eval-1.yaml")
        suite.write_text("name: x\n")
        raise SuiteError("bad", path=tmp_path / "other.yaml")  # an error elsewhere: kept as it is
    assert not out.exists()
    out.mkdir()
    existing = out / "eval-2.yaml"
    existing.write_text("name: y\n")
    with pytest.raises(KeyboardInterrupt), guarded_out(out) as guard:
        guard.generated(existing)
        raise KeyboardInterrupt  # a suite file that was there before is not the command's to remove
    assert existing.is_file()
    with pytest.raises(KeyboardInterrupt), guarded_out(out) as guard:
        new = guard.generated(out / "eval-3.yaml")
        new.write_text("name: z\n")
        guard.start("run-id")
        raise KeyboardInterrupt  # interrupted after the run was stored: its suite is what --resume needs
    assert new.is_file()


def test_an_error_in_the_generated_suite_is_worded_as_the_command(tmp_path: Path) -> None:
    guard = OutGuard(tmp_path)
    suite = guard.generated(tmp_path / "eval-abc.yaml")
    err = SuiteError("unknown prompt 'x'", path=suite, line=21, hint="use one of: a, b")
    reworded = guard.reword(err, "clineval eval medqa")
    assert isinstance(reworded, UserInputError) and reworded.path is None
    assert str(reworded) == (
        "clineval eval medqa: unknown prompt 'x' — use one of: a, b; --print-suite shows the suite these "
        "options make"
    )
    elsewhere = SuiteError("bad", path=tmp_path / "data.jsonl", line=3)
    assert guard.reword(elsewhere, "clineval eval medqa") is elsewhere


def test_the_resume_command_printed_on_sigterm_keeps_out(tmp_path: Path) -> None:
    n = 40
    with running_server_process(Script(latency_s=0.2)) as server:
        write_live_suite(tmp_path, server.base_url, n)
        db = tmp_path / "store.db"
        store = f"sqlite:///{db}"
        args = ["suite.yaml", "--store", store, "--concurrency", "2", "--no-cache", "--out", "reports"]
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
        with sqlite3.connect(db) as conn:
            [(rid,)] = conn.execute("SELECT run_id FROM runs").fetchall()
        last = stderr.strip().splitlines()[-1]
        assert last == (
            "interrupted: finished cases are stored; complete the run with: clineval run suite.yaml "
            f"--resume {rid} --store {store} --out reports"
        )
        assert not (tmp_path / "reports" / "report.json").exists()
        resumed = run_printed_command(last, tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        assert (tmp_path / "reports" / "report.json").is_file()  # before: the resumed run wrote no report
