"""Shared by the issue-23 tests: the real `clineval` in a subprocess (with its own environment, timed), a
small MedQA data folder laid out like ../shared/data, a free loopback port, the rows of a cache file."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.cli_helpers import MEDQA_ROW

MEDQA_FILE = Path("medqa_usmle_4opt") / "phrases_no_exclude_test.jsonl"
# keys and URLs of the developer's environment must not reach the command under test
CLEARED = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CLINEVAL_DATA", "COLUMNS")


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python -m clineval ARGS``: the completed process and its wall time in seconds."""
    environ = {k: v for k, v in os.environ.items() if k not in CLEARED}
    environ.update(env or {})
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "clineval", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done, time.perf_counter() - started


def error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("error:")]


def medqa_data(folder: Path, n: int = 40) -> Path:
    """A data folder holding ``n`` MedQA questions where the catalogue looks for them (``--data``)."""
    path = folder / MEDQA_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(MEDQA_ROW.format(i=i, gold="ABCD"[i % 4]) for i in range(n)) + "\n")
    return folder


def free_port() -> int:
    """A loopback port nothing listens on (bound, then closed): a connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cache_rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def stored_runs(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
