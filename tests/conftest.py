"""Fixtures for the scripted OpenAI-compatible server (loopback only)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from clineval.testing import Script
from clineval.testing.openai_server import ServerHandle, running_server
from tests.backends import BACKENDS, backend_url

StartServer = Callable[..., ServerHandle]


@pytest.fixture
def start_server() -> Iterator[StartServer]:
    """``srv = start_server(Script(...))`` serves on 127.0.0.1 in a background thread until the test ends."""
    with ExitStack() as stack:

        def start(script: Script | None = None) -> ServerHandle:
            return stack.enter_context(running_server(script or Script(latency_s=0.01)))

        yield start


@pytest.fixture
def openai_server(start_server: StartServer) -> ServerHandle:
    """A default scripted server: answers choice "A" in MIRAGE JSON after 10 ms."""
    return start_server()


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store URL on each backend: a SQLite file, and a fresh PostgreSQL schema where a server is set up."""
    with backend_url(request.param, tmp_path) as url:
        yield url
