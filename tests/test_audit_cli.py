"""``clineval audit``: exit codes, --out files, an 80-column console; and the audit of a user's own scorer
and stand-in through ``clineval.testing.audit`` and the registry."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clineval.audit import STANDINS, StandIn, Variant, register_standin, text_output
from clineval.cli.main import app
from clineval.core import Case, CaseInput, Metric, Reference, Score, ScoringContext
from clineval.metrics.basic import Accuracy
from clineval.scoring.registry import SCORERS
from clineval.testing.audit import assert_not_inflated, audit_scorers, inflated
from tests.audit_suites import BY_NAME
from tests.helpers import SHARED_DATA, shared_data

runner = CliRunner()


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "80"})
    return result.exit_code, result.output


def test_exit_0_with_reports(tmp_path: Path) -> None:
    shared_data()
    suite = BY_NAME["mcq"].write(tmp_path, SHARED_DATA)
    code, out = _invoke(
        "audit", str(suite), "--limit", "30", "--tasks", "medqa", "--out", str(tmp_path / "a")
    )
    assert code == 0, out
    assert "no gating metric is inflated by any stand-in" in out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    data = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert [t["task_id"] for t in data["tasks"]] == ["medqa"] and data["inflated_gating"] == []
    (metric,) = data["tasks"][0]["metrics"]
    assert metric["metric"] == "accuracy" and metric["baseline_from"].startswith("constant ('")
    assert "| accuracy | gate |" in (tmp_path / "a" / "audit.md").read_text()


class WordyScorer:
    """A user's own gameable scorer, registered for a suite: an answer is 'thorough' past five words."""

    name = "wordy"
    metrics: Sequence[Metric] = (Accuracy(name="wordiness"),)

    def __call__(self, ctx: ScoringContext) -> Score:
        return Score(value=1.0 if len((ctx.output.text or "").split()) > 5 else 0.0)


def test_exit_1_when_a_gating_metric_is_inflated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # registered for this test only (the registry is global: other tests list its names)
    monkeypatch.setitem(SCORERS._factories, "audit_test_wordy", lambda options: WordyScorer())
    rows = [{"id": str(i), "question": f"Q{i}?", "options": ["yes", "no"], "answer": "A"} for i in range(30)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: wordy\ntasks:\n  - id: wordy\n    dataset: {format: jsonl, path: cases.jsonl}\n"
        "    system: {type: http, url: 'http://127.0.0.1:9/predict'}\n    scorers: [audit_test_wordy]\n"
    )
    code, out = _invoke("audit", str(suite), "--standins", "hedge")
    assert code == 1, out
    assert "inflated (gating): wordy wordiness by hedge" in " ".join(out.split())
    assert all(len(line) <= 80 for line in out.splitlines()), out


def test_a_tracked_inflation_is_listed_with_exit_0(tmp_path: Path) -> None:
    """Escalating every case raises the recall figures (tracked); the balanced accuracy that gates holds."""
    suite = BY_NAME["four_tier"].write(tmp_path, SHARED_DATA)
    code, out = _invoke("audit", str(suite), "--limit", "20", "--standins", "escalate_everything")
    assert code == 0, out
    flat = " ".join(out.split())
    assert "inflated (tracked): golden guardrail_recall by escalate_everything" in flat
    assert "no gating metric is inflated by any stand-in" in flat
    assert all(len(line) <= 80 for line in out.splitlines()), out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.yaml"], "missing.yaml"),
        (["SUITE", "--standins", "empty,nonsense"], "unknown stand-in 'nonsense'"),
        (["SUITE", "--tasks", "nope"], "no task 'nope' in the suite"),
    ],
)
def test_exit_2_on_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    suite = BY_NAME["four_tier"].write(tmp_path, SHARED_DATA)
    code, out = _invoke(
        "audit",
        *[str(suite) if a == "SUITE" else str(tmp_path / a) if a.endswith(".yaml") else a for a in args],
    )
    assert code == 2, out
    assert message in out and "Traceback" not in out


class LengthScorer:
    """A user's own (gameable) scorer: an answer is 'thorough' when it is long."""

    name = "thoroughness"
    metrics: Sequence[Metric] = (Accuracy(name="thoroughness"),)

    def __call__(self, ctx: ScoringContext) -> Score:
        text = ctx.output.text or ""
        return Score(value=1.0 if len(text) > 80 else 0.0)


def _cases() -> list[Case]:
    return [
        Case(
            id=str(i),
            input=CaseInput(question=f"Question {i}: which drug lowers potassium fastest in an emergency?"),
            reference=Reference(answer_text="insulin"),
        )
        for i in range(40)
    ]


def test_a_users_scorer_is_audited() -> None:
    audit = audit_scorers(_cases(), [LengthScorer()])
    (metric,) = audit.metrics
    assert metric.metric == "thoroughness" and metric.role == "gate"  # no rule names it: it gates
    assert metric.baseline.value == 0.0 and metric.inflated == ["hedge"]
    assert inflated(audit) == {("task", "thoroughness", "hedge")}
    expected = "thoroughness (gate) inflated by hedge: 1.0000 > bound 0.0876"
    with pytest.raises(AssertionError, match=re.escape(expected)):
        assert_not_inflated(audit)
    assert_not_inflated(audit, allowed={("task", "thoroughness", "hedge")})


def _long_answers(context: object) -> list[Variant]:
    long = text_output("A long answer " * 10)
    return [Variant("long", lambda case: long)]


def test_a_users_standin_is_registered_and_run() -> None:
    if "long_answer" not in STANDINS:
        register_standin(StandIn("long_answer", "a long answer to everything", _long_answers))
    with pytest.raises(ValueError, match="registered twice"):
        register_standin(StandIn("long_answer", "again", _long_answers))
    audit = audit_scorers(_cases(), [LengthScorer()], standins=["long_answer"])
    assert audit.standins == ["empty", "constant", "long_answer"]  # the baselines always run
    (metric,) = audit.metrics
    assert metric.reached["long_answer"].value == 1.0 and metric.inflated == ["long_answer"]
    assert math.isclose(metric.bound, 0.0876, abs_tol=1e-4)  # Wilson upper bound of 0 in 40
