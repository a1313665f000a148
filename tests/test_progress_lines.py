"""Progress in a CI log: when stderr is not a terminal, a plain line every N seconds and one per finished
task, with done/total, rate, failures by kind, retries and cache hits; ``--quiet`` and ``--version``."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from clineval.cli.progress import LineProgress
from clineval.core import CaseResult, SystemOutput
from clineval.runner.engine import TaskStats
from clineval.testing import Reply, Rule, Script
from tests.conftest import StartServer
from tests.test_live_run import write_live_suite

LINE = re.compile(
    r"progress live: (\d+)/(\d+) \(([\d.]+)%\) ([\d.]+) cases/s, failed (\d+)(?: \(([^)]*)\))?, "
    r"retries (\d+), cache hits (\d+)(, done in [\d.]+ s)?$"
)


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command, stdout and stderr captured: neither is a terminal, as in CI."""
    return subprocess.run(
        [sys.executable, "-m", "clineval", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_counts_from_finished_cases() -> None:
    stream = io.StringIO()
    hooks = LineProgress(stream, interval_s=3600)  # no periodic line: only the final one
    outputs = [
        SystemOutput(text="A"),
        SystemOutput(text="B", attempts=3),  # answered on the third attempt: 2 retries
        SystemOutput.failure("timeout", "slow", attempts=4),  # 3 retries, then failed
        SystemOutput.failure("http_500", "boom", attempts=2),
        SystemOutput.failure("timeout", "slow", attempts=2).model_copy(update={"cached": True}),  # no call
        SystemOutput(text="C", cached=True, attempts=2),
    ]
    with hooks:
        hooks.task_started("live", total=10, already_done=4)
        for i, output in enumerate(outputs):
            hooks.case_finished("live", CaseResult(task_id="live", case_id=str(i), output=output))
        hooks.task_finished("live", TaskStats())
    lines = stream.getvalue().splitlines()
    assert lines[0] == "live: 4 cases already stored, resuming the rest"
    match = LINE.match(lines[1])
    assert match is not None and len(lines) == 2, lines
    done, total, share, _rate, failed, kinds, retries, hits, final = match.groups()
    assert (done, total, share, failed) == ("10", "10", "100.0", "3")
    assert kinds == "timeout 2, http_500 1" and retries == "6" and hits == "2" and final


def script_with_failures() -> Script:
    """24 questions, 0.2 s each; Q1 fails once then answers (1 retry), Q3 always 500 (2 attempts), Q4 too
    slow for the 0.5 s timeout (2 attempts), Q5 always a malformed body (2 attempts)."""
    rules = [
        Rule(match="Q1?", replies=[Reply(status=500), Reply()]),
        Rule(match="Q3?", replies=[Reply(status=500)]),
        Rule(match="Q4?", replies=[Reply(delay=3.0)]),
        Rule(match="Q5?", replies=[Reply(body="<html>bad gateway</html>")]),
    ]
    return Script(latency_s=0.2, rules=rules)


def test_plain_progress_lines_in_a_log(tmp_path: Path, start_server: StartServer) -> None:
    server = start_server(script_with_failures())
    suite = write_live_suite(tmp_path, server.base_url, 24)
    args = ["run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", "--concurrency", "2"]
    args += ["--timeout", "0.5", "--max-retries", "1", "--cache-path", str(tmp_path / "cache.sqlite")]
    first = cli(
        *args, "--out", str(tmp_path / "out"), cwd=tmp_path, env={"CLINEVAL_PROGRESS_INTERVAL": "0.5"}
    )
    assert first.returncode == 0, first.stderr
    progress = [LINE.match(line) for line in first.stderr.splitlines() if line.startswith("progress ")]
    assert len(progress) >= 2 and all(progress), first.stderr  # at least one periodic line and the final one
    done = [int(m.group(1)) for m in progress if m]
    assert done == sorted(done) and done[-1] == 24
    last = progress[-1]
    assert last is not None and last.group(9)  # "done in ... s" closes the task
    assert last.group(5, 6, 7, 8) == ("3", "http_500 1, malformed_response 1, timeout 1", "4", "0")
    # the 4 retries counted are the calls beyond one per case; + 1: the pre-flight probe, not a case
    assert server.stats["total"] == 24 + 4 + 1
    assert "accuracy" in first.stdout  # the summary is still printed

    # Again (successes from the cache), --quiet: no progress, no summary, the reports still written, exit 0.
    quiet = cli("--quiet", *args, "--out", str(tmp_path / "quiet"), cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == "" and "progress" not in quiet.stderr
    assert sorted(p.name for p in (tmp_path / "quiet").iterdir()) == [
        "report.html",
        "report.json",
        "report.md",
        "results.jsonl",
    ]
    cached = cli(*args, cwd=tmp_path, env={"CLINEVAL_PROGRESS_INTERVAL": "0.5"})
    lines = [line for line in cached.stderr.splitlines() if line.startswith("progress ")]
    final = LINE.match(lines[-1])
    # 21 from the cache; the 3 failures were never cached (issue 23): called again, 1 retry each
    assert final is not None and final.group(1, 5, 7, 8) == ("24", "3", "3", "21")


def test_version_and_quiet_on_the_command(tmp_path: Path) -> None:
    shown = cli("--version", cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout == f"clineval {version('clineval')}\n"
    demo = cli(
        "demo", "--quiet", "--out", str(tmp_path / "d"), "--store", f"sqlite:///{tmp_path}/d.db", cwd=tmp_path
    )
    assert demo.returncode == 0, demo.stderr
    assert demo.stdout == "" and (tmp_path / "d" / "report.json").exists()
    bad = cli("--progress-interval", "soon", "runs", cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
