"""Every example suite whose header comment starts a stand-in server succeeds when its commands are run as
written (exit 0): before, the four-tier example's judge failed 1,224 of 1,224 calls and the Open-XDDx
example's stand-in read a file nobody has (``--reports my_reports.json``), then scored every DDx case 0.

The commands are read from the comments themselves, so a comment and this test cannot drift. They run in a
copy of the repository layout (``examples/``, ``data/``, ``../shared``) so that the store, the cache and
the reports they write stay in the test's folder; the fixed ports of the comments are replaced by free
ones, in the commands and in the suite alike. ``run_four_tier.py`` writes no tracked file unless asked.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
COMMAND = re.compile(r"^#\s{2,}((?:python|clineval) .*)$")
PORT = re.compile(r"(?:--port |127\.0\.0\.1:)(80\d\d)\b")


def documented_commands(suite: Path) -> list[str]:
    """The command lines of the suite's header comment (``\\``-continued lines joined)."""
    lines: list[str] = []
    for line in suite.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        if lines and lines[-1].endswith("\\"):
            lines[-1] = lines[-1][:-1].rstrip() + " " + line.lstrip("# ").strip()
            continue
        found = COMMAND.match(line)
        if found:
            lines.append(found.group(1).strip())
    return lines


STAND_IN_SUITES = sorted(
    p.name
    for p in (ROOT / "examples").glob("*.yaml")
    if any(c.split("#")[0].strip().endswith("&") for c in documented_commands(p))
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[str], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the stand-in exited ({process.returncode}): {process.communicate()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port}")


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    return (
        [sys.executable, *words[1:]]
        if words[0] == "python"
        else [sys.executable, "-m", "clineval", *words[1:]]
    )


def test_the_stand_in_suites_are_found() -> None:
    assert STAND_IN_SUITES == ["cds_pipeline_medqa.yaml", "ddx_open_xddx.yaml", "four_tier_cds.yaml"]


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/data beside the repository")
@pytest.mark.parametrize("name", STAND_IN_SUITES)
def test_an_example_runs_as_its_comment_says(name: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples", repo / "examples")
    shutil.copytree(ROOT / "data", repo / "data")
    (tmp_path / "shared").symlink_to(SHARED)  # examples/../../shared, as beside the real repository
    suite = repo / "examples" / name
    commands = documented_commands(suite)
    ports = {old: str(_free_port()) for old in PORT.findall("\n".join([*commands, suite.read_text()]))}
    suite.write_text(PORT.sub(lambda m: m.group(0).replace(m.group(1), ports[m.group(1)]), suite.read_text()))
    commands = [PORT.sub(lambda m: m.group(0).replace(m.group(1), ports[m.group(1)]), c) for c in commands]
    env = {**os.environ, "COLUMNS": "100"}
    servers: list[subprocess.Popen[str]] = []
    try:
        for command in commands:
            line = command.split(" #")[0].strip()
            if line.endswith("&"):
                argv = _argv(line[:-1])
                servers.append(
                    subprocess.Popen(
                        argv, cwd=repo, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
                    )
                )
                _wait_for(int(argv[argv.index("--port") + 1]), servers[-1])
                continue
            done = subprocess.run(
                _argv(line), cwd=repo, env=env, capture_output=True, text=True, timeout=600, check=False
            )
            assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
            assert "warning:" not in done.stderr, done.stderr  # not degraded, nothing failing quietly
    finally:
        for server in servers:
            server.terminate()
            server.communicate(timeout=30)


def test_run_four_tier_writes_no_tracked_file_unless_asked(tmp_path: Path) -> None:
    doc = ROOT / "docs" / "cds" / "four_tier_example.md"
    before = hashlib.sha256(doc.read_bytes()).hexdigest()
    script = ROOT / "examples" / "cds_recommender" / "run_four_tier.py"
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    written = tmp_path / "four-tier-example" / "four_tier_example.md"
    assert written.read_text().startswith(
        "# Four-tier evaluation of the example recommender on the golden set"
    )
    assert (
        hashlib.sha256(doc.read_bytes()).hexdigest() == before
    )  # before: docs/cds/four_tier_example.md rewritten
    assert done.stderr.strip().splitlines()[-1] == "written: four-tier-example/four_tier_example.md"
