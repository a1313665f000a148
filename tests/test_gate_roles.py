"""Every gate metric has a direction and a role; untiered quality metrics gate; a gate that gates nothing is
an error. End to end on the MIRAGE pair: GPT-4 (baseline) vs GPT-3.5 (candidate) chain-of-thought answers
to the first 200 MedQA test questions, through the ``clineval`` command (exit codes included)."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clineval.analysis.gate_roles import RoleChoice, default_role, direction_of, is_gate_metric
from clineval.core import GateDecision, GateDecisionRow, RunInfo, RunResult, SuiteSpec
from clineval.core.errors import UserInputError
from clineval.releases import gate as releases
from clineval.report import render_markdown
from clineval.runs import run as api
from tests.cli_helpers import clineval

DEMO = Path(__file__).resolve().parents[1] / "src" / "clineval" / "demo" / "data"
QUESTIONS = DEMO / "medqa_test_first200.jsonl"
GPT4 = DEMO / "medqa_cot_gpt-4-32k_first200.jsonl"
GPT35 = DEMO / "medqa_cot_gpt-35-turbo-16k_first200.jsonl"


# -- the role table ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("key", "tier", "direction", "role"),
    [
        ("accuracy", None, "higher", "gate"),  # MCQ: the regression was only tracked
        ("mcq_accuracy", None, "higher", "gate"),
        ("ddx.recall", None, "higher", "gate"),  # prefixed when two scorers share a key
        ("top1_accuracy", None, "higher", "gate"),
        ("type_aware_accuracy", None, "higher", "gate"),
        ("clinical_reasoning_quality", None, "higher", "gate"),
        ("diagnostic_safety", None, "higher", "gate"),
        ("unparsed_rate", None, "lower", "track"),
        ("failed_rate", None, "lower", "track"),
        ("ddx_failed_rate", None, "lower", "track"),
        ("judge_error_rate", None, "lower", "track"),
        ("ambiguous_rate", None, "lower", "track"),  # CDS: lower is better, accuracy already gates
        ("in_differential_rate", None, "higher", "track"),  # gameable by listing every option
        ("rubric_empty_rate", 4, "lower", "track"),
        ("macro_f1", None, "higher", "track"),
        ("recall_micro", None, "higher", "track"),
        ("top1_accuracy_judged", None, "higher", "track"),
        ("schema_pass_rate", 1, "higher", "gate"),  # tier semantics unchanged
        ("latency_p95_total", 1, "lower", "track"),
        ("nDCG@10", 2, "higher", "gate"),
        ("guideline_adherence", 3, "higher", "gate"),
        ("adherence_pe_stable", 3, "higher", "track"),
        ("judge_coherence", 4, "higher", "track"),
        ("rubric_score", 4, "higher", "track"),
        ("n", None, "higher", "never"),
        ("n_applicable_pe_stable", 3, "higher", "never"),
        ("accuracy_ci", None, "higher", "never"),
    ],
)
def test_role_table(key: str, tier: int | None, direction: str, role: str) -> None:
    assert (direction_of(key), default_role(key, tier)) == (direction, role)


def test_counts_and_intervals_are_never_rows() -> None:
    assert is_gate_metric("accuracy", 0.8) and is_gate_metric("unparsed_rate", 0.01)
    assert not is_gate_metric("n", 200) and not is_gate_metric("accuracy_ci", [0.7, 0.9])
    assert not is_gate_metric("tp_total", 12.0)  # a count even when stored as a float


def test_named_metrics_override_the_defaults() -> None:
    only = RoleChoice.of(["accuracy,unparsed_rate"])
    assert only.gate == ("accuracy", "unparsed_rate")
    assert [only.role(k, None) for k in ("accuracy", "unparsed_rate", "macro_f1")] == [
        "gate",
        "gate",
        "track",
    ]
    assert only.role("schema_pass_rate", 1) == "track"  # named: only these gate
    assert only.role("n", None) == "never"
    demoted = RoleChoice.of(track=["accuracy"])
    assert demoted.role("accuracy", None) == "track" and demoted.role("recall", None) == "gate"
    # a gate's own names replace the baseline's gate list; tracked names add up
    merged = RoleChoice.of(["recall"]).over(RoleChoice.of(["accuracy"], ["macro_f1"]))
    assert (merged.gate, merged.track) == (("recall",), ("macro_f1",))
    with pytest.raises(UserInputError, match="both to gate and to track"):
        RoleChoice.of(["accuracy"], ["accuracy"])


# -- MIRAGE GPT-4 vs GPT-3.5, end to end ---------------------------------------------------------------------
def _letters(path: Path) -> dict[int, str | None]:
    """Case index -> the letter in MIRAGE's ``"answer_choice": "B. ..."`` (None: no output or no letter).
    A regex of our own, independent of clineval's answer extraction."""
    found: dict[int, str | None] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        text = row["raw_output"][0] if row["raw_output"] else ""
        match = re.search(r'"answer_choice"\s*:\s*"\s*([A-D])\b', text)
        found[int(row["id"])] = match.group(1) if match else None
    return found


GOLD = [json.loads(line)["answer_idx"] for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
RIGHT4 = {i for i, a in _letters(GPT4).items() if a == GOLD[i]}
RIGHT35 = {i for i, a in _letters(GPT35).items() if a == GOLD[i]}
EMPTY35 = sum(1 for line in GPT35.read_text().splitlines() if not json.loads(line)["raw_output"])


def _mcnemar(b: int, c: int) -> float:
    """Exact two-sided McNemar: 2 · P(X <= min(b, c)), X ~ Binomial(b + c, 1/2), capped at 1."""
    n = b + c
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n)


def _suite(folder: Path, name: str, predictions: Path, task: str = "medqa") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        f"name: {name}\ntasks:\n  - id: {task}\n"
        f"    dataset: {{format: medqa, path: {QUESTIONS}}}\n"
        f"    system: {{type: predictions, path: {predictions}, output_field: raw_output,"
        " numeric_ids: true}\n"
        "    scorers: [mcq]\n    stratify: [meta_info]\n"
    )
    return path


@pytest.fixture(scope="module")
def mirage(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, str]:
    """(folder, store URL, GPT-4 run, GPT-3.5 run); GPT-4 promoted as baseline ``gpt4``."""
    folder = tmp_path_factory.mktemp("mirage")
    url = f"sqlite:///{folder / 'store.db'}"

    def run(name: str, predictions: Path) -> str:
        request = api.RunRequest(suite_path=_suite(folder, name, predictions), store_url=url, cache_path=None)
        return api.run_suite(request).run_id

    gpt4, gpt35 = run("gpt4", GPT4), run("gpt35", GPT35)
    promoted = clineval("baseline", "promote", gpt4, "--name", "gpt4", "--store", url, cwd=folder)
    assert promoted.returncode == 0, promoted.stderr
    return folder, url, gpt4, gpt35


def _gate(mirage: tuple[Path, str, str, str], run: str, *args: str) -> tuple[int, str, str]:
    folder, url, _, _ = mirage
    proc = clineval("gate", run, "--baseline", "gpt4", "--store", url, *args, cwd=folder)
    return proc.returncode, proc.stdout, proc.stderr


def test_independent_counts_match_the_published_gap() -> None:
    # 166/200 vs 141/200 on these 200 questions (MIRAGE's full-set figures: 82.9% vs 64.3%)
    assert (len(RIGHT4), len(RIGHT35), EMPTY35) == (166, 141, 1)


@pytest.mark.parametrize("mode", ["strict", "statistical"])
def test_gpt35_against_gpt4_is_a_regression(mirage: tuple[Path, str, str, str], mode: str) -> None:
    _, url, _, gpt35 = mirage
    code, out, err = _gate(mirage, gpt35, "--mode", mode)
    assert code == 1, out + err
    delta = (len(RIGHT35) - len(RIGHT4)) / 200
    assert re.search(
        rf"medqa\s+accuracy\b.*{len(RIGHT4) / 200:.4f}.*{len(RIGHT35) / 200:.4f}.*{delta:+.4f}", out
    )
    assert "REGRESSION: 1 of 1 gating metric regressed; 3 tracked" in out
    decision = releases.gate_decisions(url, gpt35)[-1]
    assert (decision.mode, decision.passed) == (mode, False)
    rows = {r.metric: r for r in decision.rows}
    acc = rows["accuracy"]
    assert (acc.role, acc.direction, acc.status) == ("gate", "higher", "fail")
    assert acc.baseline == len(RIGHT4) / 200 and acc.candidate == len(RIGHT35) / 200
    assert acc.delta == pytest.approx(delta, abs=1e-12)
    assert {(m, r.role, r.direction) for m, r in rows.items() if m != "accuracy"} == {
        ("unparsed_rate", "track", "lower"),
        ("failed_rate", "track", "lower"),
        ("macro_f1", "track", "higher"),
    }
    assert rows["failed_rate"].candidate == EMPTY35 / 200
    if mode == "statistical":  # one paired test, so Holm changes nothing
        p = _mcnemar(len(RIGHT4 - RIGHT35), len(RIGHT35 - RIGHT4))
        assert acc.p == pytest.approx(p, rel=1e-9) and p < 0.05
        assert acc.ci is not None and acc.ci[1] < 0


@pytest.mark.parametrize("mode", ["strict", "statistical"])
def test_gpt4_against_itself_passes(mirage: tuple[Path, str, str, str], mode: str) -> None:
    code, out, err = _gate(mirage, mirage[2], "--mode", mode)
    assert code == 0, out + err
    assert "PASS: 1 gating metric, none regressed; 3 tracked" in out


def test_named_metrics_gate_with_their_direction(mirage: tuple[Path, str, str, str]) -> None:
    gpt35 = mirage[3]
    # failed_rate is lower-is-better: 0 -> 1/200 is worse (strict blocks it), one discordant case is not
    # significant (statistical passes it: McNemar p = 1)
    code, out, _ = _gate(mirage, gpt35, "--metrics", "failed_rate")
    assert code == 1 and "REGRESSION: 1 of 1 gating metric regressed; 3 tracked" in out
    code, out, _ = _gate(mirage, gpt35, "--metrics", "failed_rate", "--mode", "statistical")
    assert code == 0 and "PASS: 1 gating metric, none regressed; 3 tracked" in out
    # unparsed_rate 3/200 -> 2/200 is better when lower is better; accuracy is tracked when not named
    code, out, _ = _gate(mirage, gpt35, "--metrics", "unparsed_rate")
    assert code == 0 and "PASS: 1 gating metric, none regressed; 3 tracked" in out
    code, out, _ = _gate(mirage, gpt35, "--metrics", "unparsed_rate,accuracy")
    assert code == 1 and "REGRESSION: 1 of 2 gating metrics regressed; 2 tracked" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--metrics", "acuracy"), "metric 'acuracy' is not a gate metric of the baseline gpt4 v1"),
        (("--metrics", "n"), "(a count or an interval: never gated)"),
        (("--metrics", "accuracy", "--track", "accuracy"), "named both to gate and to track"),
        (("--track", "accuracy"), "gates nothing: every one of its 4 metric(s) is tracked"),
    ],
)
def test_bad_names_and_empty_gates_exit_2(
    mirage: tuple[Path, str, str, str], args: tuple[str, ...], message: str
) -> None:
    _, url, _, gpt35 = mirage
    before = len(releases.gate_decisions(url, gpt35))
    code, out, err = _gate(mirage, gpt35, *args)
    assert code == 2, out + err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    if args[1] == "acuracy":
        assert "did you mean 'accuracy'?" in err
        assert "metrics there: accuracy, failed_rate, macro_f1, unparsed_rate" in err
    assert len(releases.gate_decisions(url, gpt35)) == before  # nothing decided, nothing stored


def test_a_candidate_of_other_tasks_exits_2(mirage: tuple[Path, str, str, str]) -> None:
    folder, url, _, _ = mirage
    suite = _suite(folder, "elsewhere", GPT35, task="medqa-other")
    other = api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id
    code, out, err = _gate(mirage, other)
    assert code == 2 and "differ from the baseline's" in err and "PASS" not in out


def test_baseline_stores_the_metrics_to_gate(mirage: tuple[Path, str, str, str]) -> None:
    folder, url, gpt4, gpt35 = mirage
    store = ("--store", url)
    promoted = clineval(
        "baseline",
        "promote",
        gpt4,
        "--name",
        "lenient",
        "--gate-metrics",
        "unparsed_rate",
        *store,
        cwd=folder,
    )
    assert promoted.returncode == 0, promoted.stderr
    shown = clineval("baseline", "show", "lenient", "--json", *store, cwd=folder)
    snapshot = json.loads(shown.stdout)["snapshot"]
    assert (snapshot["gate_metrics"], snapshot["track_metrics"]) == (["unparsed_rate"], [])
    lenient = ("gate", gpt35, "--baseline", "lenient", *store)
    passed = clineval(*lenient, cwd=folder)
    assert passed.returncode == 0 and "PASS: 1 gating metric, none regressed; 3 tracked" in passed.stdout
    overridden = clineval(*lenient, "--metrics", "accuracy", cwd=folder)  # the gate's option wins
    assert overridden.returncode == 1 and "REGRESSION: 1 of 1 gating metric" in overridden.stdout
    bad = clineval("baseline", "promote", gpt4, "--name", "x", "--gate-metrics", "recall", *store, cwd=folder)
    assert bad.returncode == 2 and "metric 'recall' is not a gate metric of the run" in bad.stderr


def test_reports_say_which_way_is_better() -> None:
    row = GateDecisionRow(
        task="t",
        metric="failed_rate",
        baseline=0.0,
        candidate=0.2,
        delta=0.2,
        status="fail",
        direction="lower",
    )
    created = datetime(2024, 5, 1, tzinfo=UTC)
    decision = GateDecision(
        baseline_name="b",
        baseline_version=1,
        tenant="x",
        mode="strict",
        passed=False,
        created_at=created,
        rows=[row],
    )
    info = RunInfo(run_id="r", suite=SuiteSpec(name="s", tasks=[]), status="finished", created_at=created)
    md = render_markdown(RunResult(info=info, results=[], aggregates={}), [decision])
    assert "| FAIL | t | failed_rate (lower is better) | (all) | 0.0000 | 0.2000 | +0.2000 | n/a |" in md
    assert row.model_dump()["role"] == "gate"
