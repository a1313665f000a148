"""The circuit breaker: an outage pauses the calls (costing no retry) instead of failing cases, a dead
endpoint still ends the run (``circuit_open``), and one case failing on its own cannot hold the run.

The first tests drive ``call_system`` with an in-memory system whose outage is a window of loop time; the
last ones run a live suite against the scripted server in another process, killed and restarted mid-run.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from clineval.core import Case, CaseInput, ComponentSpec, SystemOutput
from clineval.core.errors import RetryableCallError
from clineval.runner.breaker import breaker_for
from clineval.runner.calls import call_system
from clineval.runner.policy import CallPolicy
from clineval.runs import run as api
from clineval.testing import Script
from clineval.testing.process import OutageHooks, start_server_process, stop_server_process
from tests.cli_helpers import clineval
from tests.test_live_run import write_live_suite

FAST = CallPolicy(backoff_base_s=0.01, backoff_max_s=0.02, breaker_base_s=0.05, breaker_max_s=0.2)


class Flaky:
    """A live system that is down (connection refused) while ``down()`` is true; ``poison`` cases always
    get HTTP 500. Counts the real attempts per case."""

    live = True

    def __init__(self, down: Any, poison: frozenset[str] = frozenset()) -> None:
        self.spec = ComponentSpec(type="flaky", args={"model": "m"})
        self.down, self.poison = down, poison
        self.attempts: dict[str, int] = {}

    async def start(self, concurrency: int) -> None:
        return None

    async def close(self) -> None:
        return None

    def cache_key(self, case: Case) -> str | None:
        return None

    async def call(self, case: Case) -> SystemOutput:
        self.attempts[case.id] = self.attempts.get(case.id, 0) + 1
        await asyncio.sleep(0.001)
        if self.down():
            raise RetryableCallError("connection", "Cannot connect to host")
        if case.id in self.poison:
            raise RetryableCallError("http_500", "HTTP 500: boom", status=500)
        return SystemOutput(text="A")


def cases(n: int) -> list[Case]:
    return [Case(id=f"c{i}", input=CaseInput(question=f"Q{i}?")) for i in range(n)]


async def run_all(system: Flaky, policy: CallPolicy, n: int, concurrency: int) -> list[SystemOutput]:
    queue = iter(cases(n))
    outputs: list[SystemOutput] = []

    async def worker() -> None:
        for case in queue:
            outputs.append(await call_system(system, case, policy, None))

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return outputs


def outage(seconds: float) -> Any:
    """``down()`` is true for ``seconds`` after the first call."""
    start: list[float] = []

    def down() -> bool:
        now = time.monotonic()
        start.append(now) if not start else None
        return now - start[0] < seconds

    return down


@pytest.mark.parametrize("breaker_window", [20, 0])
def test_an_outage_longer_than_the_retry_budget_fails_no_case_with_the_breaker(breaker_window: int) -> None:
    # Retries alone last 0.01 + 0.02 + 0.02 s; the outage lasts 1 s. With the breaker every case waits for
    # it (a probe at 0.05, 0.15, 0.35 s, then every 0.2 s: each a different case, charged one attempt);
    # without it (window 0) every case of the first wave fails.
    system = Flaky(outage(1.0))
    policy = replace(FAST, max_retries=3, breaker_window=breaker_window)

    async def go() -> tuple[list[SystemOutput], list[str]]:
        outputs = await run_all(system, policy, 40, 10)
        breaker = breaker_for(system, policy)
        return outputs, breaker.events if breaker else []

    outputs, events = asyncio.run(go())
    failed = [o for o in outputs if o.failed]
    assert len(outputs) == 40
    if breaker_window:
        # the outage outlasts every case's retry budget thirty times over: waiting cost them no retry
        assert failed == []
        assert events[0].startswith("circuit open: ") and "recent calls failed (connection)" in events[0]
        assert any(e.startswith("circuit closed: probe succeeded") for e in events)
    else:
        # at least the whole first wave: its 4 attempts end within ~0.06 s of a 1 s outage
        assert len(failed) >= 10 and {o.error.kind for o in failed if o.error} == {"connection"}
        assert events == []


def test_a_dead_endpoint_ends_the_run_with_every_case_circuit_open() -> None:
    system = Flaky(lambda: True)
    policy = replace(FAST, max_retries=3, max_outage_s=0.3)

    async def go() -> tuple[list[SystemOutput], list[str]]:
        outputs = await run_all(system, policy, 30, 5)
        breaker = breaker_for(system, policy)
        assert breaker is not None
        return outputs, breaker.events

    outputs, events = asyncio.run(go())
    assert len(outputs) == 30
    assert {o.error.kind for o in outputs if o.error} == {"circuit_open"}
    assert all(o.failed for o in outputs)
    # the 25 cases started after the breaker died were never sent
    assert sum(1 for o in outputs if o.attempts == 0) >= 25
    assert sum(system.attempts.values()) < 30
    assert "max outage of 0.3 s; last error: connection" in str(outputs[-1].error)
    assert events[-1].startswith("circuit open for good:")


def test_one_case_failing_on_its_own_cannot_hold_the_run() -> None:
    # Concurrency 1: the poison case's failures fill the small window and open the breaker, it is then
    # the probe; a failed probe is a real attempt, so it fails after its 3 attempts and the run goes on.
    system = Flaky(lambda: False, poison=frozenset({"c1"}))
    policy = replace(FAST, max_retries=2, breaker_window=4, breaker_min_calls=2)

    async def go() -> tuple[list[SystemOutput], str]:
        outputs = await run_all(system, policy, 6, 1)
        breaker = breaker_for(system, policy)
        assert breaker is not None
        return outputs, breaker.state.value

    outputs, state = asyncio.run(go())
    by_id = {f"c{i}": o for i, o in enumerate(outputs)}
    assert [cid for cid, o in by_id.items() if o.failed] == ["c1"]
    error = by_id["c1"].error
    assert error is not None and error.kind == "http_500" and error.attempts == 3
    assert state == "closed"


# --- live: the scripted server in another process, killed and restarted on the same port mid-run ----


def test_live_run_rides_out_an_endpoint_restart(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    script_path = tmp_path / "script.json"
    script_path.write_text(Script(latency_s=0.05).model_dump_json(by_alias=True))
    server = start_server_process(script_path)
    hooks = OutageHooks(server, script_path, at=60, gap_s=3.0)
    suite = write_live_suite(tmp_path, server.base_url, 200)
    request = api.RunRequest(
        suite_path=suite,
        store_url=f"sqlite:///{tmp_path}/store.db",
        concurrency=50,
        cache_path=None,
        policy=CallPolicy(timeout_s=5, breaker_base_s=0.25, breaker_max_s=1.0),
    )
    try:
        with caplog.at_level(logging.WARNING, logger="clineval.runner.breaker"):
            run = api.run_suite(request, hooks=hooks)
    finally:
        if hooks.thread is not None:
            hooks.thread.join(30)
        for proc in [server, *hooks.restarted]:
            stop_server_process(proc)
    assert hooks.restarted, "the server was never killed and restarted"
    assert len(run.results) == 200
    assert [r.case_id for r in run.results if r.failed] == []
    assert all(r.scores["mcq"].label != "unparsed" for r in run.results)
    lines = [r.getMessage() for r in caplog.records]
    assert any(line.startswith("circuit open: ") for line in lines)
    assert any(line.startswith("circuit closed: ") for line in lines)


def test_cli_run_against_a_dead_endpoint_ends_with_circuit_open(tmp_path: Path) -> None:
    suite = write_live_suite(tmp_path, "http://127.0.0.1:9/v1", 40)  # port 9 (discard): refused
    store = f"sqlite:///{tmp_path}/store.db"
    args = ["run", str(suite), "--store", store, "--no-cache", "--out", "out", "--concurrency", "8"]
    done = clineval(*args, "--max-outage", "0.5", "--no-preflight", cwd=tmp_path)  # the breaker's test
    assert "Traceback" not in done.stderr
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 40
    assert {row["error"]["kind"] for row in rows} == {"circuit_open"}
    assert "max outage of 0.5 s; last error: connection" in rows[0]["error"]["message"]
    assert "circuit open: 5/5 recent calls failed (connection)" in done.stderr
    assert "circuit open for good" in done.stderr
    # every breaker line and the failure name the endpoint (issue 23: they said only "[openai m]")
    breaker_lines = [line for line in done.stderr.splitlines() if line.startswith("circuit open")]
    assert breaker_lines and all(
        line.endswith("[openai scripted-model at http://127.0.0.1:9/v1]") for line in breaker_lines
    )
    assert rows[0]["error"]["message"].startswith("the endpoint http://127.0.0.1:9/v1 was down longer")


class Unhashable(Flaky):
    __hash__ = None  # type: ignore[assignment]  # like a non-frozen dataclass


def test_one_breaker_per_system_and_run() -> None:
    system, policy = Unhashable(lambda: False), CallPolicy()

    async def twice() -> tuple[Any, Any]:
        return breaker_for(system, policy), breaker_for(system, policy)

    first, again = asyncio.run(twice())
    assert first is not None and first is again  # shared by every call of the run
    later, _ = asyncio.run(twice())
    assert later is not None and later is not first  # a new run starts closed
    replay = Flaky(lambda: False)
    replay.live = False  # type: ignore[misc]

    async def for_replay() -> Any:
        return breaker_for(replay, policy), breaker_for(system, replace(policy, breaker_window=0))

    assert asyncio.run(for_replay()) == (None, None)
