"""A truncated or garbled reply (``malformed_response``) is retried like a 5xx: 2% of such replies cost
~2.3% of the cases for good when it was final. It is no outage: an endpoint that always garbles its replies
still ends each case as ``malformed_response`` after its retries, not held by the circuit breaker."""

from __future__ import annotations

import time
from pathlib import Path

from clineval.runner.policy import CallPolicy
from clineval.runs import run as api
from clineval.testing import Reply, Rule, Script
from tests.conftest import StartServer
from tests.test_calls_and_cache import ANSWER_A, call_all, case, openai, rules, run
from tests.test_live_run import write_live_suite

TRUNCATED = Reply(body='{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "mess')


def test_a_truncated_reply_is_retried_and_the_case_succeeds(start_server: StartServer) -> None:
    srv = start_server(rules(cut=[TRUNCATED, Reply()]))
    [out] = run(call_all(openai(srv.base_url), [case("cut question")]))
    assert (out.failed, out.text, out.attempts) == (False, ANSWER_A, 2)
    assert srv.stats["by_rule"] == {"cut": 2}


def test_an_http_system_retries_a_truncated_reply(start_server: StartServer) -> None:
    from clineval.systems import build_system

    srv = start_server(rules(cut=[TRUNCATED, Reply()]))
    system = build_system("http", {"url": f"{srv.base_url.removesuffix('/v1')}/predict"}, Path("."))
    [out] = run(call_all(system, [case("cut question")]))
    assert (out.failed, out.attempts) == (False, 2)


def test_an_always_malformed_endpoint_ends_as_malformed_response_not_circuit_open(
    start_server: StartServer,
) -> None:
    srv = start_server(rules(bad=[TRUNCATED]))
    policy = CallPolicy(timeout_s=5.0, max_retries=2, backoff_base_s=0.001, backoff_max_s=0.01)
    cases = [case(f"bad question {i}", str(i)) for i in range(12)]  # enough to open a breaker (5 of 20)
    started = time.perf_counter()
    outs = run(call_all(openai(srv.base_url), cases, policy))
    elapsed = time.perf_counter() - started
    assert {(o.error.kind if o.error else None, o.attempts) for o in outs} == {("malformed_response", 3)}
    assert all("gave up after 3 attempts" in (o.error.message if o.error else "") for o in outs)
    assert srv.stats["total"] == 12 * 3
    assert elapsed < 5  # never paused by the breaker (its first pause alone is 1 s, then 2, 4...)


def test_a_run_with_some_truncated_replies_scores_every_case(
    tmp_path: Path, start_server: StartServer
) -> None:
    # every 5th question's first reply is cut short; each is retried once and answered
    cut = [Rule(match=f"Q{i}?", replies=[TRUNCATED, Reply()]) for i in range(0, 20, 5)]
    server = start_server(Script(latency_s=0.0, rules=cut))
    suite = write_live_suite(tmp_path, server.base_url, 20)
    request = api.RunRequest(
        suite_path=suite,
        store_url=f"sqlite:///{tmp_path}/store.db",
        cache_path=None,
        policy=CallPolicy(timeout_s=5.0, max_retries=3, backoff_base_s=0.001, backoff_max_s=0.01),
    )
    result = api.run_suite(request)
    attempts = {r.case_id: r.output.attempts for r in result.results}
    assert not any(r.output.failed for r in result.results)
    assert attempts == {str(i): 2 if i % 5 == 0 else 1 for i in range(20)}
    assert result.aggregates["live"].scores["failed_rate"] == 0.0
    assert server.stats["total"] == 20 + 4
