"""call_system (timeouts, retries, Retry-After, cache) and ResponseCache, against the scripted server."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import time
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from clineval.core import Case, CaseInput, ComponentSpec, DataFileError, RetryableCallError, SystemOutput
from clineval.core.protocols import System
from clineval.runner.cache import ResponseCache
from clineval.runner.calls import call_system
from clineval.runner.policy import CallPolicy
from clineval.systems import build_system
from clineval.testing import Reply, Rule, Script
from tests.conftest import StartServer

T = TypeVar("T")
FAST = CallPolicy(timeout_s=5.0, max_retries=3, backoff_base_s=0.001, backoff_max_s=0.01)
ANSWER_A = '{"step_by_step_thinking": "Scripted answer.", "answer_choice": "A"}'


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def case(question: str, case_id: str = "1") -> Case:
    return Case(id=case_id, input=CaseInput(question=question, options={"A": "Aspirin", "B": "Heparin"}))


def openai(base_url: str, **options: Any) -> System:
    return build_system("openai", {"base_url": base_url, "model": "m", **options}, Path("."))


async def call_all(
    system: System,
    cases: Sequence[Case],
    policy: CallPolicy = FAST,
    cache: ResponseCache | None = None,
    *,
    retry_failed: bool = False,
) -> list[SystemOutput]:
    await system.start(8)
    try:
        return list(
            await asyncio.gather(
                *(call_system(system, c, policy, cache, retry_failed=retry_failed) for c in cases)
            )
        )
    finally:
        await system.close()


def rules(**by_match: list[Reply]) -> Script:
    return Script(latency_s=0.0, rules=[Rule(match=m, replies=r) for m, r in by_match.items()])


# --- retries and timeouts against the server ---------------------------------------------------------------


def test_500_then_success_takes_two_attempts(start_server: StartServer) -> None:
    srv = start_server(rules(flaky=[Reply(status=500), Reply()]))
    [out] = run(call_all(openai(srv.base_url), [case("flaky question")]))
    assert (out.failed, out.text, out.attempts) == (False, ANSWER_A, 2)
    assert out.latency_s is not None and out.latency_s < 1.0
    assert srv.stats["by_rule"] == {"flaky": 2}


def test_429_retry_after_is_honoured(start_server: StartServer) -> None:
    srv = start_server(rules(busy=[Reply(status=429, retry_after=1), Reply()]))
    started = time.perf_counter()
    [out] = run(call_all(openai(srv.base_url), [case("busy question")]))  # backoff alone would be 1 ms
    elapsed = time.perf_counter() - started
    assert not out.failed and out.attempts == 2
    assert 1.0 <= elapsed < 2.0


def test_retry_after_is_capped(start_server: StartServer) -> None:
    srv = start_server(rules(busy=[Reply(status=503, retry_after=3600), Reply()]))
    policy = CallPolicy(backoff_base_s=0.001, retry_after_cap_s=0.05)
    started = time.perf_counter()
    [out] = run(call_all(openai(srv.base_url), [case("busy question")], policy))
    assert not out.failed and out.attempts == 2 and time.perf_counter() - started < 1.0


def test_persistent_500_fails_after_max_retries_plus_one(start_server: StartServer) -> None:
    srv = start_server(rules(down=[Reply(status=500)]))
    [out] = run(call_all(openai(srv.base_url), [case("down question")]))
    assert out.error is not None and out.error.kind == "http_500"
    assert out.attempts == out.error.attempts == FAST.max_retries + 1 == 4
    assert "gave up after 4 attempts" in out.error.message
    assert srv.stats["by_rule"] == {"down": 4}


def test_timeout_is_retried_then_recorded(start_server: StartServer) -> None:
    srv = start_server(rules(slow=[Reply(delay=5)]))
    policy = CallPolicy(timeout_s=0.2, max_retries=1, backoff_base_s=0.001)
    started = time.perf_counter()
    [out] = run(call_all(openai(srv.base_url), [case("slow question")], policy))
    assert out.error is not None and (out.error.kind, out.attempts) == ("timeout", 2)
    assert time.perf_counter() - started < 1.5
    assert srv.stats["by_rule"] == {"slow": 2}


@pytest.mark.parametrize("reply", [Reply(body="not json"), Reply(json_body={"object": "chat.completion"})])
def test_malformed_body_is_retried_then_recorded(start_server: StartServer, reply: Reply) -> None:
    srv = start_server(rules(weird=[reply]))
    [out] = run(call_all(openai(srv.base_url), [case("weird question")]))
    assert out.error is not None and (out.error.kind, out.attempts) == ("malformed_response", 4)
    assert srv.stats["total"] == FAST.max_retries + 1 == 4


def test_connection_refused_is_retryable() -> None:
    with socket.socket() as sock:  # a loopback port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    policy = CallPolicy(max_retries=2, backoff_base_s=0.001)
    [out] = run(call_all(openai(f"http://127.0.0.1:{port}/v1"), [case("q")], policy))
    assert out.error is not None and (out.error.kind, out.attempts) == ("connection", 3)


# --- call_system with fake systems ------------------------------------------------------------------------


class FakeSystem:
    """Raises the scripted exceptions in order, then answers."""

    live = True

    def __init__(self, *errors: BaseException) -> None:
        self.spec = ComponentSpec(type="fake")
        self.errors = list(errors)
        self.calls = 0

    async def start(self, concurrency: int) -> None: ...

    async def close(self) -> None: ...

    def cache_key(self, case: Case) -> str | None:
        return f"fake:{case.id}"

    async def call(self, case: Case) -> SystemOutput:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return SystemOutput(text="done")


def test_a_bug_in_a_system_is_recorded_not_raised() -> None:
    out = run(call_system(FakeSystem(ZeroDivisionError("division by zero")), case("q"), FAST, None))
    assert out.error is not None and (out.error.kind, out.error.message) == (
        "exception",
        "ZeroDivisionError: division by zero",
    )


def test_an_adapter_bug_quoting_a_secret_is_recorded_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("MY_SERVICE_API_KEY", secret)
    out = run(call_system(FakeSystem(RuntimeError(f"auth failed for {secret}")), case("q"), FAST, None))
    assert out.error is not None and out.error.message == "RuntimeError: auth failed for ***"


def test_retry_after_from_the_system_wins_over_backoff() -> None:
    system = FakeSystem(RetryableCallError("http_429", "slow down", retry_after=0.3))
    started = time.perf_counter()
    out = run(call_system(system, case("q"), CallPolicy(backoff_base_s=0.0), None))
    assert out.text == "done" and out.attempts == 2 and time.perf_counter() - started >= 0.3


def test_cancellation_propagates() -> None:
    async def go() -> None:
        task = asyncio.create_task(call_system(FakeSystem(), case("q"), FAST, None))
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        run(go())


def test_replayed_outputs_get_no_measured_latency(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_text('{"id": "1", "output": "A"}\n', encoding="utf-8")
    system = build_system("predictions", {"path": "p.jsonl"}, tmp_path)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        out = run(call_system(system, case("q"), FAST, cache))
    assert (out.text, out.latency_s, out.attempts, out.cached) == ("A", None, 1, False)


def test_backoff_schedule_and_validation() -> None:
    policy = CallPolicy()
    assert [policy.backoff_s(n) for n in range(8)] == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert policy.backoff_s(0, retry_after=7.0) == 7.0 and policy.backoff_s(5, retry_after=600) == 60.0
    with pytest.raises(ValueError, match="timeout_s"):
        CallPolicy(timeout_s=0)
    with pytest.raises(ValueError, match="max_retries"):
        CallPolicy(max_retries=-1)


# --- the cache ------------------------------------------------------------------------------------------


def test_second_pass_makes_zero_calls_and_returns_identical_outputs(
    start_server: StartServer, tmp_path: Path
) -> None:
    srv = start_server(Script(latency_s=0.01, answers_by_substring={"question 3": "C"}))
    cases = [case(f"question {i}?", str(i)) for i in range(5)]
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        first = run(call_all(openai(srv.base_url), cases, cache=cache))
        assert srv.stats["total"] == 5 and len(cache) == 5
    with ResponseCache(tmp_path / "cache.sqlite") as cache:  # reopened: it persisted
        second = run(call_all(openai(srv.base_url), cases, cache=cache))
    assert srv.stats["total"] == 5  # zero new calls
    assert all(out.cached for out in second) and not any(out.cached for out in first)
    assert [out.model_copy(update={"cached": False}) for out in second] == first
    assert '"answer_choice": "C"' in (second[3].text or "")


def test_failures_are_never_cached_so_the_next_pass_calls_them_again(
    start_server: StartServer, tmp_path: Path
) -> None:
    """Issue 23: a failed call is not cached (no flag needed to call it again); its success then is."""
    srv = start_server(rules(weird=[Reply(status=400), Reply()]))  # a 400 is final: not retried
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        [first] = run(call_all(openai(srv.base_url), [case("weird question")], cache=cache))
        assert first.failed and len(cache) == 0 and srv.stats["total"] == 1
        [again] = run(call_all(openai(srv.base_url), [case("weird question")], cache=cache))
        assert (again.failed, again.cached, srv.stats["total"], len(cache)) == (False, False, 2, 1)
        [final] = run(call_all(openai(srv.base_url), [case("weird question")], cache=cache))
        assert final.cached and final.text == ANSWER_A and srv.stats["total"] == 2


def test_an_answer_the_caller_cannot_use_is_not_cached(tmp_path: Path) -> None:
    """A judge reply its parser cannot read (``usable`` false) is asked again on the next run, and a cache
    entry written before this rule is a miss, not a replay."""
    system = FakeSystem()
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        unreadable = run(call_system(system, case("q"), FAST, cache, usable=lambda out: False))
        assert (unreadable.text, len(cache), system.calls) == ("done", 0, 1)
        cache.put("fake:1", SystemOutput(text="done"))  # as an older clineval cached it
        again = run(call_system(system, case("q"), FAST, cache, usable=lambda out: False))
        assert (again.cached, system.calls) == (False, 2)
        readable = run(call_system(system, case("q"), FAST, cache, usable=lambda out: out.text == "done"))
        assert (readable.cached, system.calls) == (True, 2)


def test_api_key_is_sent_but_never_stored(
    start_server: StartServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-SECRET-0123456789"
    monkeypatch.setenv("CLINEVAL_TEST_API_KEY", secret)
    srv = start_server(Script(latency_s=0.0, require_api_key=secret))
    system = openai(srv.base_url, api_key_env="CLINEVAL_TEST_API_KEY")
    cache = ResponseCache(tmp_path / "cache.sqlite")
    outs = run(call_all(system, [case(f"q{i}", str(i)) for i in range(3)], cache=cache))
    assert not any(o.failed for o in outs) and srv.stats["with_auth_header"] == 3
    files = sorted(tmp_path.glob("cache.sqlite*"))  # the database and its WAL, before and after closing
    assert secret.encode() not in b"".join(f.read_bytes() for f in files)
    cache.close()
    assert secret.encode() not in b"".join(f.read_bytes() for f in sorted(tmp_path.glob("cache.sqlite*")))
    assert secret not in json.dumps(system.spec.model_dump())


def test_wrong_api_key_is_terminal_and_redacted(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLINEVAL_TEST_API_KEY", "sk-wrong-ABCDEFGH")
    srv = start_server(Script(latency_s=0.0, require_api_key="sk-right"))  # the server echoes the key it got
    [out] = run(call_all(openai(srv.base_url, api_key_env="CLINEVAL_TEST_API_KEY"), [case("q")]))
    assert out.error is not None and (out.error.kind, out.attempts) == ("http_401", 1)
    assert "sk-wrong-ABCDEFGH" not in out.error.message
    assert "Incorrect API key provided: ***" in out.error.message


def test_no_authorization_header_without_a_key(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLINEVAL_TEST_API_KEY", raising=False)
    srv = start_server(Script(latency_s=0.0))
    [out] = run(call_all(openai(srv.base_url, api_key_env="CLINEVAL_TEST_API_KEY"), [case("q")]))
    assert not out.failed and srv.stats["with_auth_header"] == 0


def test_cache_file_is_wal_and_replaces_on_put(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "cache.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k", SystemOutput(text="one"))
        cache.put("k", SystemOutput(text="two"))
        cache.put("k", SystemOutput.failure("http_500", "down", attempts=4))  # never written
        got = cache.get("k")
        assert got is not None and (got.text, got.error) == ("two", None)
        assert cache.get("x") is None
        assert len(cache) == 1
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_corrupt_cache_file_is_a_data_file_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(DataFileError, match="not a usable response cache"):
        ResponseCache(path)
