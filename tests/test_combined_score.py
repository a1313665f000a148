"""The combined score: every mapped metric enters its category (hand-computed values), scale rules,
warnings for a weighted category with no metric (an error with strict), the bootstrap by an independent
re-implementation, and the suite, reports and CLI."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import norm

from clineval.cds.retrieval.measures import MeasureMeans
from clineval.core import CaseResult, Metric, Score, SystemOutput
from clineval.core.errors import UserInputError
from clineval.core.helpers.columns import ScoreColumn
from clineval.ddx.scorer import DdxScorer
from clineval.metrics.basic import Accuracy, LabelRate
from clineval.metrics.breakdown import BreakdownRate
from clineval.metrics.combine import Combined, refuse_missing
from clineval.metrics.combined import (
    CombinedSpec,
    combined_for_task,
    load_categories,
    load_category_map,
    parse_weights,
)
from clineval.metrics.macro import MacroMean, MicroRatio, WhenRecorded
from tests.cli_helpers import clineval, write_small_suite

CATS = {
    "accuracy": "diagnostics",
    "recall": "diagnostics",
    "schema_pass_rate": "safety",
    "diagnostic_safety": "safety",
    "system_safety_coverage": "safety",
    "clinical_reasoning_quality": "communication",
    "reasoning_quality": "communication",
    "judge_coherence": "communication",
}


@dataclass
class Stub:
    name: str
    metrics: tuple[Metric, ...]


MCQ = Stub("mcq", (Accuracy(), LabelRate("unparsed")))
SCHEMA = Stub("schema", (Accuracy(name="schema_pass_rate"),))


def results(values: dict[str, list[Any]]) -> list[CaseResult]:
    """One case per position; a value is a float (the score's value) or a (value, breakdown) pair."""
    n = len(next(iter(values.values())))

    def score(v: Any) -> Score:
        return Score(value=v[0], breakdown=v[1]) if isinstance(v, tuple) else Score(value=v)

    return [
        CaseResult(
            task_id="t",
            case_id=str(i),
            output=SystemOutput(text="x"),
            scores={s: score(v[i]) for s, v in values.items()},
        )
        for i in range(n)
    ]


def spec(renormalize: bool = True, **weights: float) -> CombinedSpec:
    return CombinedSpec(weights=weights, renormalize=renormalize, categories=CATS, n_resamples=200)


def test_weighted_sum_by_hand() -> None:
    # diagnostics: mcq mean = 3/4; safety: schema mean = 1/3 (the NaN case is not scorable).
    r = results({"mcq": [1.0, 1.0, 1.0, 0.0], "schema": [1.0, 0.0, math.nan, 0.0]})
    out = combined_for_task(r, [MCQ, SCHEMA], spec(diagnostics=0.6, safety=0.4))
    assert out.scores["combined_score"] == pytest.approx(0.6 * 0.75 + 0.4 / 3)
    assert out.scores["combined_score[diagnostics]"] == 0.75
    assert out.scores["combined_score[safety]"] == pytest.approx(1 / 3)
    assert out.entered == {"diagnostics": ["accuracy"], "safety": ["schema_pass_rate"]}
    assert out.warnings == [] and out.missing == []
    lo, hi = out.scores["combined_score_ci"]  # type: ignore[misc]
    assert lo <= out.scores["combined_score"] <= hi


def _ddx(recall: float, safety: float, coverage: float, crq: float) -> tuple[float, dict[str, Any]]:
    breakdown = {
        "recall": recall,
        "diagnostic_safety": safety,
        "system_safety_coverage": coverage,
        "clinical_reasoning_quality": crq,
    }
    return recall, breakdown


def test_every_mapped_metric_of_a_ddx_task_enters_its_category() -> None:
    """Before: only the scorer's primary metric (recall) entered, so safety and communication were absent
    and the score renormalised to recall alone."""
    cases = [_ddx(1.0, 0.5, 1.0, 0.8), _ddx(0.5, 1.0, 0.5, 0.4), _ddx(0.0, 0.25, 0.0, 0.3)]
    r = results({"ddx": cases})
    out = combined_for_task(r, [DdxScorer()], spec(diagnostics=0.4, safety=0.4, communication=0.2))
    recall, safety, coverage, crq = (sum(c[1][k] for c in cases) / 3 for k in cases[0][1])
    assert out.entered == {
        "diagnostics": ["recall"],
        "safety": ["diagnostic_safety", "system_safety_coverage"],
        "communication": ["clinical_reasoning_quality"],
    }
    assert out.scores["combined_score[safety]"] == pytest.approx((safety + coverage) / 2)
    expected = 0.4 * recall + 0.4 * (safety + coverage) / 2 + 0.2 * crq
    assert out.scores["combined_score"] == pytest.approx(expected)
    assert out.warnings == []


def test_missing_category_is_a_warning_renormalised_or_zero_and_strict_refuses() -> None:
    r = results({"mcq": [1.0, 0.0, 1.0, 1.0]})  # diagnostics only; no safety or communication metric
    weights = {"diagnostics": 0.4, "safety": 0.3, "communication": 0.3}
    renorm = combined_for_task(r, [MCQ], spec(**weights))
    assert renorm.scores["combined_score"] == pytest.approx(0.75)  # (0.4 / 0.4) * 0.75
    assert renorm.missing == ["safety", "communication"]
    assert renorm.warnings == [
        "combined_score: no metric for the weighted categories safety (weight 0.3), communication "
        "(weight 0.3): the score is renormalised over diagnostics"
    ]
    fixed = combined_for_task(r, [MCQ], spec(renormalize=False, **weights))
    assert fixed.scores["combined_score"] == pytest.approx(0.4 * 0.75 / 1.0)  # missing categories count as 0
    assert fixed.warnings[0].endswith("they count as 0 (renormalize: false)")
    strict = CombinedSpec(weights=weights, categories=CATS, strict=True)
    with pytest.raises(
        UserInputError, match=r"task t has no metric for the weighted categories safety, comm"
    ):
        refuse_missing(Combined({}, {}, missing={"t": renorm.missing}), strict)
    refuse_missing(Combined({}, {}, missing={"t": renorm.missing}), spec(**weights))  # not strict: no error


def test_no_category_present_is_nan_with_a_warning_and_bootstrap_is_seeded() -> None:
    r = results({"mcq": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]})
    none = combined_for_task(r, [MCQ], spec(safety=1.0))
    assert math.isnan(none.scores["combined_score"])  # type: ignore[arg-type]
    assert none.warnings == [
        "combined_score: no metric for any weighted category (safety (weight 1)): no score"
    ]
    a = combined_for_task(r, [MCQ], spec(diagnostics=1.0))
    b = combined_for_task(r, [MCQ], spec(diagnostics=1.0))
    assert a.scores["combined_score_ci"] == b.scores["combined_score_ci"]


def test_bootstrap_equals_an_independent_resampling() -> None:
    acc = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    schema = [1.0, 1.0, math.nan, 0.0, 1.0, 1.0, 1.0, 1.0]
    r = results({"mcq": acc, "schema": schema})
    s = CombinedSpec(weights={"diagnostics": 0.7, "safety": 0.3}, categories=CATS, n_resamples=500, seed=4)
    out = combined_for_task(r, [MCQ, SCHEMA], s)
    rng = np.random.default_rng(4)
    idx = rng.integers(0, 8, size=(500, 8))
    a, b = np.asarray(acc)[idx], np.asarray(schema)[idx]
    m_a = a.mean(axis=1)
    m_b = np.array([np.mean(row[~np.isnan(row)]) if (~np.isnan(row)).any() else np.nan for row in b])
    combined = np.where(np.isnan(m_b), m_a, 0.7 * m_a + 0.3 * m_b)  # renormalised when schema is absent
    expected = [float(np.percentile(combined, 2.5)), float(np.percentile(combined, 97.5))]
    assert out.scores["combined_score_ci"] == pytest.approx(expected, abs=1e-12)


def test_no_spread_interval_reflects_n() -> None:
    """Every case the same: the resamples cannot vary; the interval is the no-spread interval at n."""
    r = results({"mcq": [1.0] * 50, "schema": [0.0] * 50})
    out = combined_for_task(r, [MCQ, SCHEMA], spec(diagnostics=0.5, safety=0.5))
    c, z2 = 0.5, float(norm.ppf(0.975)) ** 2
    u = z2 / (50 + z2)
    assert out.scores["combined_score"] == c
    assert out.scores["combined_score_ci"] == pytest.approx([c - u * c, c + u * (1 - c)], abs=1e-12)


def test_metrics_on_another_scale_are_refused_or_normalised(tmp_path: Path) -> None:
    grades = Stub("judge", (MacroMean("judge_coherence"),))
    r = results(
        {"judge": [(math.nan, {"judge_coherence": g}) for g in (4.0, 5.0, 2.0)], "mcq": [1.0, 1.0, 0.0]}
    )
    refused = combined_for_task(r, [grades, MCQ], spec(diagnostics=0.5, communication=0.5))
    assert refused.left_out == {
        "judge_coherence": "values from 2 to 5, not on [0, 1]: give its bounds in the categories file to "
        "normalise it"
    }
    assert any("judge_coherence left out (communication)" in w for w in refused.warnings)
    assert refused.missing == ["communication"]
    mapping = tmp_path / "cats.yaml"
    mapping.write_text(
        "categories:\n  accuracy: diagnostics\n  judge_coherence: {category: communication, bounds: [1, 5]}\n"
    )
    cmap = load_category_map(mapping)
    assert cmap.bounds == {"judge_coherence": (1.0, 5.0)}
    s = CombinedSpec(
        weights={"diagnostics": 0.5, "communication": 0.5}, categories=cmap.categories, bounds=cmap.bounds
    )
    out = combined_for_task(r, [grades, MCQ], s)
    normalised = ((4 - 1) / 4 + (5 - 1) / 4 + (2 - 1) / 4) / 3  # (x - 1) / (5 - 1)
    assert out.scores["combined_score[communication]"] == pytest.approx(normalised)
    assert out.scores["combined_score"] == pytest.approx(0.5 * 2 / 3 + 0.5 * normalised)
    # TempoScore may never be mapped, in the packaged file or one's own
    mapping.write_text("categories:\n  tempo_mean: process\n")
    with pytest.raises(
        ValueError, match=r"tempo_mean cannot enter the combined score: TempoScore is 1 to 2\.5"
    ):
        load_category_map(mapping)


def test_a_pooled_metric_is_left_out_with_why() -> None:
    pooled = Stub("ddx", (MicroRatio(("TP",), ("n_ground_truth",), name="recall_micro"),))
    r = results({"ddx": [(1.0, {"TP": 1, "n_ground_truth": 2})], "mcq": [1.0]})
    cats = {**CATS, "recall_micro": "diagnostics"}
    out = combined_for_task(r, [pooled, MCQ], CombinedSpec(weights={"diagnostics": 1.0}, categories=cats))
    assert out.left_out == {"recall_micro": "not a mean of per-case values: it cannot be resampled by case"}
    assert out.entered == {"diagnostics": ["accuracy"]}


def test_case_values_average_to_the_metric() -> None:
    """For every metric class that gives per-case values: their NaN-skipping mean is its task value."""
    rows = [
        (1.0, "correct", {"recall": 0.5, "top1": True, "measures": {"nDCG@10": 0.3, "P@5": 0.2}, "x": 1}),
        (
            0.0,
            "unparsed",
            {"recall": None, "top1": False, "measures": {"nDCG@10": 0.9}, "recall_judged": 1.0},
        ),
        (math.nan, "no_reference", {"recall": 1.0, "top1": None}),
        (1.0, "correct", {"recall": 0.25, "measures": {"P@5": 0.6}, "recall_judged": 0.5}),
    ]
    column = ScoreColumn.from_scores([Score(value=v, label=lab, breakdown=b) for v, lab, b in rows])
    metrics: list[Any] = [
        Accuracy(ci="bootstrap"),
        LabelRate("unparsed"),
        BreakdownRate("top1", name="top1_accuracy"),
        MacroMean("recall"),
        MeasureMeans("measures"),
        WhenRecorded("recall_judged", [MacroMean("recall_judged")], name="judged"),
    ]
    for metric in metrics:
        values = metric.compute_column(column)
        per_case = metric.case_values(column)
        assert per_case, type(metric).__name__
        for key, case in per_case.items():
            assert case.shape == (4,)
            assert float(np.nanmean(case)) == pytest.approx(values[key]), key


def test_packaged_categories() -> None:
    assert parse_weights("diagnostics=0.4, safety=0.3") == {"diagnostics": 0.4, "safety": 0.3}
    with pytest.raises(ValueError):
        parse_weights("diagnostics")
    with pytest.raises(ValueError):
        CombinedSpec(weights={"safety": -1.0})
    packaged = load_category_map()
    assert packaged.categories["accuracy"] == "diagnostics"
    assert packaged.categories["contraindications_specific_rate"] == "safety"
    assert "guardrail_recall" not in packaged.categories  # 1.0 for a system that escalates everyone
    assert "summarization" not in set(packaged.categories.values()) and "rouge_l" not in packaged.categories
    assert "process" not in set(packaged.categories.values()) and "tempo_mean" in packaged.refused
    assert load_categories() == dict(packaged.categories)


def test_every_packaged_mapping_names_a_metric_a_builtin_scorer_emits() -> None:
    from tests.test_gate_role_coverage import KEYS

    emitted = {k for keys in KEYS.values() for k in keys}
    assert sorted(set(load_category_map().categories) - emitted) == []


def test_only_gating_metrics_enter_the_packaged_combined_score() -> None:
    """A tracked metric is one a degenerate stand-in can raise (docs/runs/audit.md) or a component of one that
    gates: weighting it into the headline would let the headline be raised the same way."""
    from clineval.analysis.gate_roles import rule_for

    tracked = {k: rule_for(k).why for k in load_category_map().categories if rule_for(k).role != "gate"}
    assert tracked == {}


def _mcq_suite(tmp_path: Path, combined: str) -> Path:
    predictions = [
        f'{{"id": "{i}", "output": "Answer: {"ABCD"[i % 4] if i % 3 else "A"}"}}' for i in range(12)
    ]
    suite = write_small_suite(tmp_path, predictions=predictions, n=12)
    suite.write_text(suite.read_text().replace("tasks:\n", f"combined_score:\n{combined}tasks:\n", 1))
    return suite


MISSING_SAFETY = (
    "combined_score: task t: no metric for the weighted category safety (weight 0.3): the score is "
    "renormalised over diagnostics"
)


def test_suite_report_warnings_and_cli_recompute(tmp_path: Path) -> None:
    suite = _mcq_suite(tmp_path, "  weights: {diagnostics: 0.7, safety: 0.3}\n")
    store = f"sqlite:///{tmp_path}/s.db"
    result = clineval("run", str(suite), "--store", store, "--out", "o", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"warning: {MISSING_SAFETY}" in " ".join(result.stderr.split())
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    accuracy = report["task_scores"]["t"]["accuracy"]
    assert report["task_scores"]["t"]["combined_score"] == pytest.approx(accuracy)  # only diagnostics present
    assert report["overall_scores"]["combined_score"] == pytest.approx(accuracy)
    assert MISSING_SAFETY in report["warnings"]
    markdown = (tmp_path / "o" / "report.md").read_text()
    assert "**combined_score =" in markdown and f"> **Warning:** {MISSING_SAFETY}" in markdown
    html = (tmp_path / "o" / "report.html").read_text()
    assert 'class="combined"' in html and 'class="combined-warnings"' in html
    assert "no metric for the weighted category safety" in html
    run_id = report["run_id"]
    again = clineval(
        "combined-score",
        run_id[:8],
        "--weights",
        "diagnostics=0.5,safety=0.5",
        "--no-renormalize",
        "--store",
        store,
        "--out",
        "o2",
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    recomputed = json.loads((tmp_path / "o2" / "report.json").read_text())
    assert recomputed["task_scores"]["t"]["combined_score"] == pytest.approx(0.5 * accuracy)
    # the recomputed score's warning replaces the suite's, once
    assert [w for w in recomputed["warnings"] if w.startswith("combined_score")] == [
        "combined_score: task t: no metric for the weighted category safety (weight 0.5): they count as 0 "
        "(renormalize: false)"
    ]
    strict = clineval(
        "combined-score", run_id[:8], "--weights", "diagnostics=0.5,safety=0.5", "--strict", "--store", store,
        cwd=tmp_path,
    )  # fmt: skip
    assert strict.returncode == 2 and strict.stdout == ""
    assert [line for line in strict.stderr.splitlines() if line.strip()] == [
        "error: combined_score (strict): task t has no metric for the weighted category safety — weigh only "
        "categories the task's scorers emit (docs/engine/report_format.md#combined-score), or drop strict to "
        "renormalise with a warning"
    ]
    bad = clineval("combined-score", run_id[:8], "--weights", "diagnostics", "--store", store, cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_strict_suite_is_refused_before_the_run(tmp_path: Path) -> None:
    suite = _mcq_suite(tmp_path, "  weights: {diagnostics: 0.7, safety: 0.3}\n  strict: true\n")
    refused = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert refused.returncode == 2
    assert "combined_score (strict): task t has no metric for the weighted category safety" in refused.stderr
    assert "run " not in refused.stderr.split("error:")[0]  # nothing was stored or called
    ok = _mcq_suite(tmp_path, "  weights: {diagnostics: 1}\n  strict: true\n")
    assert clineval("run", str(ok), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path).returncode == 0
