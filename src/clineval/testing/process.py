"""Run the scripted server as a subprocess: its CPU stays off the client's event loop, and it can be killed.

Used by benchmarks (timings not disturbed by the server) and by crash/resume tests (``kill -9`` the server
or the client). Talks to the server with urllib only, over loopback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from clineval.testing.script import Script


class ServerProcess:
    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process = process
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.base_url = f"{self.url}/v1"

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/stats", timeout=10) as resp:
            data: dict[str, Any] = json.load(resp)
        return data

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.url}/reset", data=b"{}", method="POST")
        with urllib.request.urlopen(request, timeout=10):
            pass


def start_server_process(script_path: Path, *, port: int = 0) -> ServerProcess:
    """Start ``python -m clineval.testing.openai_server`` and wait for its ``PORT <n>`` line."""
    command = [
        sys.executable,
        "-m",
        "clineval.testing.openai_server",
        "--script",
        str(script_path),
        "--port",
        str(port),
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline() if process.stdout else ""
    if not line.startswith("PORT "):
        process.kill()
        process.wait()
        raise RuntimeError(f"test server did not start (got {line!r}, exit code {process.returncode})")
    return ServerProcess(process, int(line.split()[1]))


def stop_server_process(server: ServerProcess, *, timeout_s: float = 5.0) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
    if server.process.stdout:
        server.process.stdout.close()


@contextmanager
def running_server_process(script: Script | None = None, *, port: int = 0) -> Iterator[ServerProcess]:
    """Serve ``script`` from a child process until the block exits (then SIGTERM, SIGKILL if needed)."""
    fd, name = tempfile.mkstemp(prefix="clineval-script-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write((script or Script()).model_dump_json(by_alias=True))
        server = start_server_process(Path(name), port=port)
        try:
            yield server
        finally:
            stop_server_process(server)
    finally:
        os.unlink(name)


class OutageHooks:
    """Progress hooks that make an endpoint outage mid-run: SIGKILL the server when the ``at``-th case
    finishes (in-flight requests are cut), and start it again on the same port ``gap_s`` seconds later
    (never, with ``gap_s=None``). ``servers`` holds every process started, the first included, so the
    caller can stop them all after joining ``thread``."""

    def __init__(self, server: ServerProcess, script_path: Path, at: int, gap_s: float | None) -> None:
        self.server, self.script_path, self.at, self.gap_s = server, script_path, at, gap_s
        self.finished = 0
        self.servers = [server]
        self.thread: threading.Thread | None = None

    @property
    def restarted(self) -> list[ServerProcess]:
        return self.servers[1:]

    def task_started(self, task_id: str, total: int, already_done: int) -> None:
        return None

    def task_finished(self, task_id: str, stats: Any) -> None:
        return None

    def case_finished(self, task_id: str, result: Any) -> None:
        self.finished += 1
        if self.gap_s is not None and self.finished == self.at:
            self.server.process.kill()
            self.server.process.wait()
            self.thread = threading.Thread(target=self._restart, args=(self.gap_s,), daemon=True)
            self.thread.start()

    def _restart(self, gap_s: float) -> None:
        time.sleep(gap_s)
        self.servers.append(start_server_process(self.script_path, port=self.server.port))
