"""A live evaluation against the scripted OpenAI-compatible server, through the real suite runner.

Every kind of failure is recorded with its reason, and a re-run is answered from the cache with zero calls
and the same scores.
"""

from __future__ import annotations

import time
from pathlib import Path

from clineval.runner.policy import CallPolicy
from clineval.runs import run as api
from clineval.testing import Reply, Rule, Script
from tests.cli_helpers import MEDQA_ROW
from tests.conftest import StartServer

GOLD = "ABCD"


def write_live_suite(folder: Path, base_url: str, n: int) -> Path:
    (folder / "q.jsonl").write_text(
        "\n".join(MEDQA_ROW.format(i=i, gold=GOLD[i % 4]) for i in range(n)) + "\n"
    )
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: live\n"
        "tasks:\n"
        "  - id: live\n"
        "    dataset: {format: medqa, path: q.jsonl}\n"
        f"    system: {{type: openai, base_url: '{base_url}', model: scripted-model}}\n"
        "    scorers: [mcq]\n"
        "    stratify: [meta_info]\n"
    )
    return suite


def script_for_twelve() -> Script:
    # Q<i>? is question i; gold is GOLD[i % 4]. Answers: right for 0, 1, 2, 7, 8; wrong for 9, 10, 11.
    answers = {
        "Q0?": "A",
        "Q1?": "B",
        "Q2?": "C",
        "Q7?": "D",
        "Q8?": "A",
        "Q9?": "C",
        "Q10?": "A",
        "Q11?": "A",
    }
    rules = [
        Rule(match="Q1?", replies=[Reply(status=500), Reply()]),  # retried, then right
        Rule(match="Q2?", replies=[Reply(status=429, retry_after=0.4), Reply()]),  # Retry-After honoured
        Rule(match="Q3?", replies=[Reply(status=500)]),  # always 500 -> failed
        Rule(match="Q4?", replies=[Reply(delay=3.0)]),  # always too slow -> timeout
        Rule(match="Q5?", replies=[Reply(body="<html>bad gateway</html>")]),  # malformed body
        Rule(match="Q6?", replies=[Reply(content="I cannot decide between these.")]),  # unparsed
    ]
    return Script(latency_s=0.01, answers_by_substring=answers, rules=rules)


def test_live_run_records_failures_and_reruns_successes_from_cache(
    tmp_path: Path, start_server: StartServer
) -> None:
    server = start_server(script_for_twelve())
    suite = write_live_suite(tmp_path, server.base_url, 12)
    request = api.RunRequest(
        suite_path=suite,
        store_url=f"sqlite:///{tmp_path}/store.db",
        concurrency=4,
        cache_path=tmp_path / "cache.sqlite",
        policy=CallPolicy(timeout_s=0.5, max_retries=1, backoff_base_s=0.01, backoff_max_s=0.05),
    )
    started = time.perf_counter()
    first = api.run_suite(request)
    elapsed = time.perf_counter() - started
    assert elapsed >= 0.4  # the 429's Retry-After of 0.4 s was waited out

    by_case = {r.case_id: r for r in first.results}
    assert len(first.results) == 12 and first.info.status == "finished"
    errors = {
        cid: (r.output.error.kind, r.output.error.attempts) for cid, r in by_case.items() if r.output.error
    }
    assert errors == {"3": ("http_500", 2), "4": ("timeout", 2), "5": ("malformed_response", 2)}
    labels = {cid: r.scores["mcq"].label for cid, r in by_case.items()}
    assert labels == {
        "0": "correct",
        "1": "correct",
        "2": "correct",
        "3": "failed",
        "4": "failed",
        "5": "failed",
        "6": "unparsed",
        "7": "correct",
        "8": "correct",
        "9": "incorrect",
        "10": "incorrect",
        "11": "incorrect",
    }
    assert by_case["1"].output.attempts == 2 and by_case["2"].output.attempts == 2
    scores = first.aggregates["live"].scores
    assert scores["accuracy"] == 5 / 12 and scores["failed_rate"] == 3 / 12
    assert scores["unparsed_rate"] == 1 / 12 and scores["n_failed"] == 3 and scores["n"] == 12
    # Calls: 7 cases answered first time + Q1 (2) + Q2 (2) + Q3 (2) + Q4 (2, timed out) + Q5 (2, retried).
    calls = server.stats["total"]
    assert calls == 7 + 2 + 2 + 2 + 2 + 2

    second = api.run_suite(request)
    # issue 23: only successes are cached: the 9 answered cases come from it, the 3 failures are called again
    # (2 attempts each, failing the same way here)
    assert server.stats["total"] == calls + 3 * 2
    assert second.run_id != first.run_id
    assert second.aggregates["live"].scores == scores
    assert {r.case_id for r in second.results if not r.output.cached} == {"3", "4", "5"}
