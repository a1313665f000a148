"""Token usage per task and its cost from a price table: stored with the run, shown in every report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clineval.analysis.usage import Price, UsageTotals, cost, load_prices
from clineval.core.errors import DataFileError
from clineval.core.output import Usage
from clineval.report.formats.html import render_html
from clineval.report.formats.json_report import build_report
from clineval.report.formats.markdown import render_markdown
from clineval.runs import run as api
from clineval.testing import Reply, Rule, Script
from tests.cli_helpers import clineval
from tests.conftest import StartServer
from tests.test_live_run import write_live_suite
from tests.test_tier4_judge import ITEMS, SCRIPTED, grade, hb_row, write_suite

ANSWER = '{"answer_choice": "A"}'


def reply(usage: dict[str, int] | None) -> Reply:
    """A chat completion with exactly this ``usage`` (none at all when None)."""
    body: dict[str, Any] = {"choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER}}]}
    if usage is not None:
        body["usage"] = usage
    return Reply(json_body=body)


USAGES = {  # question -> what its endpoint reports
    "Q0?": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    "Q1?": {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500},
    "Q2?": None,  # reports no usage: counted as a call, never as tokens
    "Q3?": {"prompt_tokens": 50, "completion_tokens": 5},  # no total: prompt + completion
}
PROMPT, COMPLETION = 100 + 1200 + 50, 10 + 300 + 5  # 1,350 and 315
PRICES = "scripted-model: {prompt_per_1k: 0.5, completion_per_1k: 1.5, currency: USD}\n"
COST = PROMPT / 1000 * 0.5 + COMPLETION / 1000 * 1.5  # 0.675 + 0.4725 = 1.1475
LINE = (
    "prompt 1,350 · completion 315 · 3 of 4 calls reported usage · "
    "cost $1.15 for the 3 that reported (prices.yaml)"
)


def scripted_run(tmp_path: Path, start_server: StartServer, prices: str | None) -> api.RunResult:
    rules = [Rule(match=q, replies=[reply(u)]) for q, u in USAGES.items()]
    server = start_server(Script(latency_s=0.0, rules=rules))
    suite = write_live_suite(tmp_path, server.base_url, 4)
    price_file = None
    if prices is not None:
        price_file = tmp_path / "prices.yaml"
        price_file.write_text(prices)
    request = api.RunRequest(
        suite_path=suite, store_url=f"sqlite:///{tmp_path}/s.db", cache_path=None, prices=price_file
    )
    return api.run_suite(request)


def test_totals_the_mix_of_calls_and_the_cost_are_stored_and_shown(
    tmp_path: Path, start_server: StartServer
) -> None:
    run = scripted_run(tmp_path, start_server, PRICES)
    entry = run.info.provenance["usage"]["tasks"]["live"]
    system = entry["system"]
    assert {k: system[k] for k in ("calls", "calls_with_usage", "cached")} == {
        "calls": 4,
        "calls_with_usage": 3,
        "cached": 0,
    }
    assert system["prompt_tokens"] == PROMPT and system["completion_tokens"] == COMPLETION
    assert system["total_tokens"] == 110 + 1500 + 55
    assert system["cost"] == pytest.approx(COST) and system["currency"] == "USD"
    assert system["model"] == "scripted-model" and entry["judge"] is None
    assert run.info.provenance["usage"]["prices_file"] == "prices.yaml"

    assert f"Tokens (live): {LINE}" in render_markdown(run)
    assert f"Tokens (live): {LINE}" in render_html(run)
    report = build_report(run)
    assert report["usage_lines"] == {"live": [LINE]}
    assert report["usage"]["tasks"]["live"]["system"]["prompt_tokens"] == PROMPT

    out = tmp_path / "out"
    done = clineval(
        "report", run.run_id, "--out", str(out), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert LINE in " ".join(done.stdout.split())  # the console summary (rich may wrap the line)
    assert LINE in (out / "report.md").read_text(encoding="utf-8")
    stored = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert stored["usage_lines"] == {"live": [LINE]}


def test_no_price_table_or_no_price_for_the_model_shows_no_cost(
    tmp_path: Path, start_server: StartServer
) -> None:
    run = scripted_run(tmp_path, start_server, None)
    system = run.info.provenance["usage"]["tasks"]["live"]["system"]
    assert system["cost"] is None and system["currency"] is None
    text = render_markdown(run)
    assert "Tokens (live): prompt 1,350 · completion 315 · 3 of 4 calls reported usage\n" in text.replace(
        "  \n", "\n"
    )
    assert "cost" not in text.split("Tokens (live):")[1].split("\n")[0]


def test_a_model_missing_from_the_table_is_said_not_priced(tmp_path: Path, start_server: StartServer) -> None:
    run = scripted_run(tmp_path, start_server, "other-model: {prompt_per_1k: 1, completion_per_1k: 2}\n")
    assert run.info.provenance["usage"]["tasks"]["live"]["system"]["cost"] is None
    assert "no price for scripted-model in prices.yaml" in render_markdown(run)


def test_the_default_server_reports_usage_on_every_call(tmp_path: Path, start_server: StartServer) -> None:
    server = start_server(Script(latency_s=0.0))
    suite = write_live_suite(tmp_path, server.base_url, 3)
    run = api.run_suite(
        api.RunRequest(suite_path=suite, store_url=f"sqlite:///{tmp_path}/s.db", cache_path=None)
    )
    system = run.info.provenance["usage"]["tasks"]["live"]["system"]
    by_case = [r.output.usage for r in run.results]
    assert all(u is not None for u in by_case)
    assert system["prompt_tokens"] == sum(u.prompt_tokens or 0 for u in by_case if u is not None)
    assert system["calls_with_usage"] == system["calls"] == 3
    assert "3 of 3 calls reported usage" in render_markdown(run)


def test_cached_replies_add_no_tokens() -> None:
    totals = UsageTotals()
    totals.add(Usage(prompt_tokens=10, completion_tokens=2), cached=False)
    totals.add(Usage(prompt_tokens=99, completion_tokens=99), cached=True)
    totals.add(None)
    assert (totals.calls, totals.calls_with_usage, totals.cached) == (2, 1, 1)
    assert (totals.prompt_tokens, totals.completion_tokens, totals.total_tokens) == (10, 2, 12)
    assert cost(totals, Price(prompt_per_1k=3.0, completion_per_1k=6.0)) == pytest.approx(0.03 + 0.012)


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        (
            "m1: {prompt_per_1k: 1, completion_per_1k: 2}\nm2: {prompt_per_1k: -1, completion_per_1k: 2}\n",
            2,
            "m2",
        ),
        ("m1:\n  prompt_per_1k: 1\n  completion_per_1k: 2\n  currency: dollars\n", 4, "currency"),
        ("m1:\n  prompt_per_1k: 1\n  completion_per_1k: 2\n  discount: 3\n", 4, "unknown key"),
        ("m1:\n  prompt_per_1k: 1\n", 2, "completion_per_1k missing"),
        ("m1: 0.5\n", 1, "not a mapping"),
        ("- m1\n", 1, "not a mapping"),
        ("m1: {prompt_per_1k: 1}\nm1: {prompt_per_1k: 2}\n", 2, "m1"),  # a duplicate key (safe_yaml)
        ("m1: [unclosed\n", 2, "invalid YAML"),
    ],
)
def test_a_bad_price_file_is_one_line_naming_file_and_line(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(DataFileError) as caught:
        load_prices(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: ") and problem in message and "\n" not in message


def test_a_bad_price_file_stops_the_run_before_it_is_stored(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("m1: {prompt_per_1k: x, completion_per_1k: 1}\n")
    request = api.RunRequest(
        suite_path=tmp_path / "none.yaml", store_url=f"sqlite:///{tmp_path}/s.db", prices=prices
    )
    with pytest.raises(DataFileError, match=r"prices\.yaml:1: "):
        api.run_suite(request)
    assert not (tmp_path / "s.db").exists()


def test_a_good_price_table_loads(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "gpt-4o-mini: {prompt_per_1k: 0.00015, completion_per_1k: 0.0006}\n"
        "x: {prompt_per_1k: 1, completion_per_1k: 0, currency: EUR}\n"
    )
    table = load_prices(path)
    assert table.source == "p.yaml"
    assert table.prices["gpt-4o-mini"] == Price(0.00015, 0.0006, "USD")
    assert table.prices["x"].currency == "EUR"


def test_the_judge_tokens_are_counted_apart(tmp_path: Path, start_server: StartServer) -> None:
    rows = [hb_row(f"c{i}", f"Question {i} about chest pain?", ITEMS, "emergency") for i in range(2)]
    outputs = {"c0": "Exclude ACS with an ECG.", "c1": "Differential: ACS, PE. Urgent ECG."}
    rules = [Rule(match=f'Dimension: "{d}"', replies=[grade(g) for g in gs]) for d, gs in SCRIPTED.items()]
    judge = start_server(Script(latency_s=0.0, model="judge-model", rules=rules))
    suite = write_suite(tmp_path, "dims", rows, outputs, "judge_dimensions", judge.base_url)
    prices = tmp_path / "prices.yaml"
    prices.write_text("judge-model: {prompt_per_1k: 1, completion_per_1k: 0}\n")
    store, cache = f"sqlite:///{tmp_path}/s.db", tmp_path / "cache.sqlite"
    request = api.RunRequest(suite_path=suite, store_url=store, cache_path=cache, prices=prices)
    first = api.run_suite(request).info.provenance["usage"]["tasks"]["dims"]
    calls = judge.stats["total"]
    assert first["system"]["calls_with_usage"] == 0  # replayed predictions report no usage
    assert first["judge"]["calls"] == first["judge"]["calls_with_usage"] == calls == 2 * 4 * 3
    assert first["judge"]["prompt_tokens"] > 0
    assert first["judge"]["cost"] == pytest.approx(first["judge"]["prompt_tokens"] / 1000)
    second = api.run_suite(request)  # every judge reply from the cache: no new tokens
    again = second.info.provenance["usage"]["tasks"]["dims"]["judge"]
    assert (again["calls"], again["cached"], again["prompt_tokens"]) == (0, calls, 0)
    assert (
        f"judge: 0 of 0 judge calls reported usage · {calls} cached replies not counted"
        in render_markdown(second)
    )
