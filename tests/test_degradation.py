"""Degradation is loud, nonsense is an error: a component failing on too many cases gives a warning in the
console and every report and exit code 3 (unless --allow-degraded); an empty dataset, predictions matching
no case and an unknown combined-score category are one-line errors (exit 2). Counts are exact."""

from __future__ import annotations

import json
import math
import socket
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from clineval.analysis.degradation import assess, failure_lines, judge_error_kind
from clineval.core import CaseResult, Score, SystemOutput
from clineval.pipelines import run_pipeline
from clineval.store import ResultStore
from clineval.testing.openai_server import serving_in_thread
from tests.cli_helpers import MEDQA_ROW, clineval, write_small_suite
from tests.test_cli_bad_input import assert_one_line_error

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "cds_recommender"))

from recommender import app  # noqa: E402


def _result(
    case: int, *, error: str | None = None, scores: dict[str, Score] | None = None, **raw: object
) -> CaseResult:
    output = SystemOutput.failure(error, "why") if error else SystemOutput(text="x", raw=dict(raw) or None)
    return CaseResult(task_id="t", case_id=str(case), output=output, scores=scores or {})


def _judged(*errors: str | None) -> list[dict[str, object]]:
    return [{"equivalent": None if e else True, "error": e} for e in errors]


def test_counts_kinds_and_threshold_by_hand() -> None:
    ok = Score(value=1.0, label="correct")
    boom = Score(value=math.nan, label="scorer_error", explanation="KeyError: 'x'")
    results = [
        # system: 3 of 10 failed (two kinds) -> 30% > 20%
        _result(0, error="http_500"),
        _result(1, error="http_500"),
        _result(2, error="timeout"),
        # judge: ran on the 7 cases that did not fail; failed on 2 of them (3 of 14 calls)
        _result(3, scores={"s": ok}, equivalence_judge=_judged(None, "connection: refused")),
        _result(4, scores={"s": ok}, equivalence_judge=_judged("empty reply", "http_503: busy")),
        _result(5, scores={"s": boom}, equivalence_judge=_judged(None, None)),
        _result(6, scores={"s": ok}, equivalence_judge=_judged(None, None)),
        _result(7, scores={"s": ok}, equivalence_judge=_judged(None, None)),
        _result(8, scores={"s": ok}, equivalence_judge=_judged(None, None)),
        _result(9, scores={"s": ok}, equivalence_judge=_judged(None, None)),
    ]
    found = assess(results, 0.2)
    assert found["warnings"] == [
        "task t: system failed on 3/10 cases (30%): http_500 2, timeout 1",
        "task t: judge failed on 2/7 cases (29%; 3/14 calls): connection 1, http_503 1, unusable_reply 1",
    ]
    rows = {c["component"]: c for c in found["components"]}
    assert rows["scorer s"] == {
        "task": "t",
        "component": "scorer s",
        "failed": 1,
        "total": 7,
        "fraction": 1 / 7,
        "calls_failed": 1,
        "calls_total": 7,
        "kinds": {"KeyError": 1},
        "degraded": False,  # 1/7 = 14% <= 20%: listed, not a warning
    }
    assert found["degraded"] is True
    # At 0.3 the system (exactly 30%) is not over the threshold, the judge (2/7 = 28.6%) is not either.
    assert assess(results, 0.28)["warnings"] == found["warnings"]
    assert assess(results, 0.3) == {
        **found,
        "threshold": 0.3,
        "degraded": False,
        "warnings": [],
        "components": [{**c, "degraded": False} for c in found["components"]],
    }
    assert failure_lines({"degradation": found}) == [
        "task t: failures: system 3/10 (http_500 2, timeout 1); judge 2/7 cases, 3/14 calls "
        "(connection 1, http_503 1, unusable_reply 1); scorer s 1/7 (KeyError 1)",
        "  http_500: why",  # each failed system call's kind with its (most frequent) message
        "  timeout: why",
    ]
    # Without the system's failures the judge's warning stands alone.
    assert assess(results[3:], 0.2)["warnings"] == found["warnings"][1:]
    assert assess(results[3:], 0.2)["components"] == [rows["judge"], rows["scorer s"]]


def test_judge_error_kinds() -> None:
    assert judge_error_kind("connection: cannot connect to 127.0.0.1:9") == "connection"
    assert judge_error_kind("http_500: Internal Server Error") == "http_500"
    assert judge_error_kind("no JSON object with 'grade' in the reply: 'hmm'") == "unusable_reply"
    assert judge_error_kind("'equivalent' is 'yes', not a JSON boolean") == "unusable_reply"
    assert judge_error_kind("a name is longer than 300 characters: not sent to the judge") == "not_sent"


# -- through the CLI ---------------------------------------------------------------------------------------


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed): connections to it are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def recommender() -> Iterator[int]:
    with serving_in_thread(app(), "example-recommender") as port:
        yield port


def _four_tier_suite(folder: Path, recommender_port: int, judge_port: int) -> Path:
    text = (ROOT / "examples" / "four_tier_cds.yaml").read_text()
    text = text.replace("http://127.0.0.1:8003", f"http://127.0.0.1:{recommender_port}")
    text = text.replace("http://127.0.0.1:8000/v1", f"http://127.0.0.1:{judge_port}/v1")
    text = text.replace("../data/golden_set", str(ROOT / "data" / "golden_set"))
    suite = folder / "four_tier.yaml"
    suite.write_text(text)
    return suite


def test_judge_down_is_degraded_exit_3_and_warned_everywhere(
    tmp_path: Path, recommender: int, closed_port: int
) -> None:
    suite = _four_tier_suite(tmp_path, recommender, closed_port)
    # --max-outage 0: the circuit breaker gives the dead judge up at once (calls then fail as circuit_open);
    # --no-preflight: the pre-flight would stop the run before it starts (exit 2, tests/test_preflight.py)
    args = ["run", str(suite), "--limit", "10", "--max-retries", "0", "--max-outage", "0", "--no-cache"]
    args.append("--no-preflight")
    result = clineval(*args, "--store", f"sqlite:///{tmp_path}/s.db", "--out", "o", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    (judge,) = report["provenance"]["degradation"]["components"]
    kinds = judge.pop("kinds")
    # 10 cases x 4 dimensions x 3 samples = 120 judge calls, every one refused or cut by the open circuit.
    assert judge == {
        "task": "golden",
        "component": "judge",
        "failed": 10,
        "total": 10,
        "fraction": 1.0,
        "calls_failed": 120,
        "calls_total": 120,
        "degraded": True,
    }
    assert set(kinds) <= {"connection", "circuit_open"} and kinds["connection"] >= 1
    assert sum(kinds.values()) == 120
    shown = ", ".join(f"{k} {n}" for k, n in kinds.items())
    warning = f"task golden: judge failed on 10/10 cases (100%; 120/120 calls): {shown}"
    assert f"warning: {warning}" in result.stderr
    assert f"task golden: failures: judge 10/10 cases, 120/120 calls ({shown})" in result.stderr
    assert "exit 3" in result.stderr.splitlines()[-1]
    assert report["status"] == "finished" and report["warnings"] == [warning]
    assert report["provenance"]["warnings"] == [warning]
    scores = report["task_scores"]["golden"]
    assert scores["n"] == 10 and scores["n_failed"] == 0 and scores["judge_coherence"] is None
    # The judge failed on more than half the cases: a loud banner first, then the run's warnings.
    assert report["banners"] == [warning]
    markdown = (tmp_path / "o" / "report.md").read_text()
    assert markdown.split("\n")[2:8] == [
        "> **⚠ FAILED ON MOST CASES: the affected numbers are not meaningful.**",
        ">",
        f"> - **{warning}**",
        "",
        "> **Warning: 1 problem(s) with this run; read its numbers with care.**",
        ">",
    ]
    html = (tmp_path / "o" / "report.html").read_text()
    loud = html.index('<div class="banner" role="alert" id="failure-banner">')
    banner = html.index('<div class="warnings" role="alert">')
    assert loud < banner < html.index("<h2>Headline</h2>") and f"<li>{warning}</li>" in html
    assert html.count(f"<li>{warning}</li>") == 2  # in the banner and in the warnings
    assert "FAILED ON MOST CASES: " + warning in " ".join(result.stdout.split())

    allowed = clineval(*args, "--store", f"sqlite:///{tmp_path}/s.db", "--allow-degraded", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert "warning: task golden: judge failed on 10/10 cases (100%; 120/120 calls): " in allowed.stderr


def _live_suite(folder: Path, base_url: str, n: int) -> Path:
    (folder / "q.jsonl").write_text("\n".join(MEDQA_ROW.format(i=i, gold="A") for i in range(n)) + "\n")
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: live\ntasks:\n  - id: live\n    dataset: {format: medqa, path: q.jsonl}\n"
        f"    system: {{type: openai, base_url: '{base_url}', model: m}}\n    scorers: [mcq]\n"
    )
    return suite


def test_unreachable_system_exit_3_with_its_reason(tmp_path: Path, closed_port: int) -> None:
    suite = _live_suite(tmp_path, f"http://127.0.0.1:{closed_port}/v1", 5)
    result = clineval(
        "run",
        str(suite),
        "--max-retries",
        "0",
        "--no-cache",
        "--no-preflight",  # else exit 2 before the first case (tests/test_preflight.py)
        "--store",
        f"sqlite:///{tmp_path}/s.db",
        cwd=tmp_path,
    )
    assert result.returncode == 3, result.stderr
    assert "warning: task live: system failed on 5/5 cases (100%): connection 5" in result.stderr
    assert "task live: failures: system 5/5 (connection 5)" in result.stderr


def _ten_cases_one_missing(folder: Path) -> Path:
    predictions = [f'{{"id": "{i}", "output": "Answer: {"ABCD"[i % 4]}"}}' for i in range(9)]
    return write_small_suite(folder, predictions=predictions, n=10)  # case 9 has no prediction


def test_ten_percent_failures_exit_0_with_kinds_listed(tmp_path: Path) -> None:
    suite = _ten_cases_one_missing(tmp_path)
    store = f"sqlite:///{tmp_path}/s.db"
    result = clineval("run", str(suite), "--store", store, "--out", "o", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "task t: failures: system 1/10 (missing_prediction 1)" in result.stderr
    assert "warning:" not in result.stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["warnings"] == [] and "Warning" not in (tmp_path / "o" / "report.md").read_text()
    assert report["provenance"]["degradation"]["components"] == [
        {
            "task": "t",
            "component": "system",
            "failed": 1,
            "total": 10,
            "fraction": 0.1,
            "calls_failed": 1,
            "calls_total": 10,
            "kinds": {"missing_prediction": 1},
            "degraded": False,
            "messages": {"missing_prediction": "no prediction with id 9 in p.jsonl"},
        }
    ]
    strict = clineval("run", str(suite), "--store", store, "--degraded-threshold", "0.05", cwd=tmp_path)
    assert strict.returncode == 3, strict.stderr
    assert "warning: task t: system failed on 1/10 cases (10%): missing_prediction 1" in strict.stderr


def test_degraded_pipeline_step_is_a_warning_not_an_error(tmp_path: Path) -> None:
    predictions = ['{"id": "0", "output": "A"}']  # 2 of 3 cases have no prediction
    write_small_suite(tmp_path, predictions=predictions)
    config = tmp_path / "pipeline.yaml"
    config.write_text("name: p\nweekly:\n  - name: tracked\n    suite: suite.yaml\n")
    result = run_pipeline("weekly", config, store_url=f"sqlite:///{tmp_path}/s.db")
    (step,) = result.steps
    assert step.status == "tracked" and result.passed
    assert step.warnings == ["task t: system failed on 2/3 cases (67%): missing_prediction 2"]
    assert result.to_dict()["steps"][0]["warnings"] == step.warnings
    assert "    warning: task t: system failed on 2/3 cases" in result.summary()


def test_empty_dataset_is_an_error(tmp_path: Path) -> None:
    suite = write_small_suite(tmp_path, predictions=['{"id": "0", "output": "A"}'], n=0)
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "suite.yaml: task t: dataset q.jsonl (medqa) has no cases")


def test_predictions_matching_no_case_are_an_error(tmp_path: Path) -> None:
    padded = [f'{{"id": "000{i}", "output": "A"}}' for i in range(3)]
    suite = write_small_suite(tmp_path, predictions=padded)
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(
        result,
        "p.jsonl: none of the 3 predictions matches a case id (e.g. prediction id '0000', case id '0') "
        "— set numeric_ids: true",
    )
    other = [f'{{"id": "q{i}", "output": "A"}}' for i in range(3)]
    suite = write_small_suite(tmp_path, predictions=other)
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "(e.g. prediction id 'q0', case id '0') — check the system's id_field")


def test_unknown_weight_category_is_an_error(tmp_path: Path) -> None:
    suite = _ten_cases_one_missing(tmp_path)
    store = f"sqlite:///{tmp_path}/s.db"
    assert clineval("run", str(suite), "--store", store, "--out", "o", cwd=tmp_path).returncode == 0
    run_id = json.loads((tmp_path / "o" / "report.json").read_text())["run_id"]
    result = clineval("combined-score", run_id, "--weights", "diagnostic=1", "--store", store, cwd=tmp_path)
    assert_one_line_error(result, "unknown category 'diagnostic' in the weights; known categories: ")
    assert "diagnostics, " in result.stderr and "safety" in result.stderr
    # The same typo in a suite is refused before any case runs.
    suite.write_text(suite.read_text() + "combined_score:\n  weights: {diagnostic: 1}\n")
    refused = clineval("run", str(suite), "--store", store, cwd=tmp_path)
    assert_one_line_error(refused, "suite.yaml: combined_score: unknown category 'diagnostic'")
    with closing(ResultStore(store)) as stored:
        assert len(stored.list_runs_with_counts()) == 1  # nothing was stored for the refused run
