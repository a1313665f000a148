"""Intervals, metric classes, task aggregation with strata, and the overall (cross-task) scores."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np
import pytest
from scipy.stats import binomtest

from clineval.core import (
    Case,
    CaseInput,
    CaseResult,
    Metric,
    Reference,
    Score,
    Scorer,
    ScoringContext,
    SystemOutput,
    TaskAggregate,
)
from clineval.mcq.scorer import MCQScorer
from clineval.metrics import (
    Accuracy,
    Count,
    LabelRate,
    MacroF1,
    aggregate_task,
    bootstrap_interval,
    overall_scores,
    wilson_interval,
)

# ---- Wilson ----------------------------------------------------------------------------------------------


def test_wilson_matches_hand_computation() -> None:
    # k = 8, n = 10, z = 1.959964, z² = 3.841459:
    # centre = (0.8 + z²/20) / (1 + z²/10) = 0.992073 / 1.384146 = 0.716740
    # half = z / (1 + z²/10) * sqrt(0.8 * 0.2 / 10 + z²/400) = 1.416010 * 0.160011 = 0.226578
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.716740 - 0.226578, abs=2e-6)
    assert hi == pytest.approx(0.716740 + 0.226578, abs=2e-6)


def _wilson_closed_form(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return centre - half, centre + half


@pytest.mark.parametrize(
    ("k", "n"), [(0, 1), (0, 10), (1, 10), (5, 10), (10, 10), (1069, 1273), (2923, 4183)]
)
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_matches_scipy_and_closed_form(k: int, n: int, confidence: float) -> None:
    lo, hi = wilson_interval(k, n, confidence)
    ref = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    assert lo == pytest.approx(ref.low, abs=1e-12)
    assert hi == pytest.approx(ref.high, abs=1e-12)
    z = {0.9: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}[confidence]
    c_lo, c_hi = _wilson_closed_form(k, n, z)
    assert lo == pytest.approx(max(0.0, c_lo), abs=1e-12)
    assert hi == pytest.approx(min(1.0, c_hi), abs=1e-12)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_wilson_edge_cases() -> None:
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == 1.0
    for bad in [(-1, 5), (6, 5), (1, -1)]:
        with pytest.raises(ValueError):
            wilson_interval(*bad)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 2, confidence=1.0)


# ---- bootstrap -------------------------------------------------------------------------------------------


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    values = [1.0] * 70 + [0.0] * 30
    a = bootstrap_interval(values, seed=7)
    assert a == bootstrap_interval(values, seed=7)  # bit for bit
    assert a == bootstrap_interval(np.array(values), seed=7)
    assert a != bootstrap_interval(values, seed=8)


def test_bootstrap_is_a_percentile_interval_of_resampled_means() -> None:
    values = np.array([1.0] * 700 + [0.0] * 300)
    lo, hi = bootstrap_interval(values, seed=0, n_resamples=4000)
    assert lo < 0.7 < hi
    w_lo, w_hi = wilson_interval(700, 1000)  # both approximate the same sampling distribution
    assert lo == pytest.approx(w_lo, abs=0.01)
    assert hi == pytest.approx(w_hi, abs=0.01)
    # independent re-computation of the same procedure with the same generator stream
    rng = np.random.default_rng(0)
    means = values[rng.integers(0, values.size, size=(4000, values.size))].mean(axis=1)
    assert (lo, hi) == tuple(np.quantile(means, [0.025, 0.975]))


def test_bootstrap_edge_cases() -> None:
    # no spread: never [0.5, 0.5]; u_3 = z²/(3 + z²) = 3.841459/6.841459 = 0.561497, so 0.5 -+ 0.5 u_3
    assert bootstrap_interval([0.5, 0.5, 0.5], seed=1) == pytest.approx((0.219251, 0.780749), abs=1e-6)
    assert all(math.isnan(v) for v in bootstrap_interval([], seed=1))
    with pytest.raises(ValueError, match="finite"):
        bootstrap_interval([1.0, math.nan], seed=1)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_interval([1.0], seed=1, n_resamples=0)


# ---- metric classes --------------------------------------------------------------------------------------


def s(value: float, label: str, gold: str | None = None, pred: str | None = None) -> Score:
    return Score(value=value, label=label, breakdown={"gold": gold, "extracted": pred})


def test_accuracy_excludes_nan_and_counts_failures_as_zero() -> None:
    scores = [s(1, "correct"), s(0, "failed"), s(0, "unparsed"), s(1, "correct"), s(math.nan, "no_reference")]
    out = Accuracy().compute(scores)
    assert out["accuracy"] == 0.5
    assert out["accuracy_ci"] == list(wilson_interval(2, 4))
    boot = Accuracy(ci="bootstrap", seed=5).compute(scores)
    # 0/1 values are a proportion: the bootstrap option gives the Wilson interval too (metrics.intervals)
    assert boot["accuracy_ci"] == list(wilson_interval(2, 4))
    graded = Accuracy(ci="bootstrap", seed=5).compute([s(0.5, "partial"), s(1.0, "correct"), s(0.0, "x")])
    assert graded["accuracy_ci"] == list(bootstrap_interval([0.5, 1.0, 0.0], seed=5))
    empty = Accuracy().compute([s(math.nan, "no_reference")])
    assert math.isnan(empty["accuracy"])  # type: ignore[arg-type]


def test_accuracy_wilson_needs_binary_values() -> None:
    with pytest.raises(ValueError, match="bootstrap"):
        Accuracy().compute([s(0.5, "partial")])
    assert Accuracy(ci="bootstrap", seed=0).compute([s(0.5, "partial")])["accuracy"] == 0.5


def test_label_rate_count_and_metric_protocol() -> None:
    scores = [
        s(0, "unparsed"),
        s(0, "failed"),
        s(1, "correct"),
        s(0, "unparsed"),
        s(math.nan, "no_reference"),
    ]
    assert LabelRate("unparsed").compute(scores) == {"unparsed_rate": 0.5}
    assert LabelRate("failed").compute(scores) == {"failed_rate": 0.25}
    assert Count().compute(scores) == {"n": 5}
    assert math.isnan(LabelRate("failed").compute([])["failed_rate"])  # type: ignore[arg-type]
    for metric in (Accuracy(), LabelRate("x"), Count(), MacroF1()):
        assert isinstance(metric, Metric)


def test_macro_f1_by_hand() -> None:
    pairs = [("A", "A"), ("A", "B"), ("A", None), ("B", "B"), ("B", "B"), ("C", "A")]
    scores = [s(float(g == p), "x", g, p) for g, p in pairs] + [s(math.nan, "no_reference", None, "A")]
    # F1_A = 2*1/(2+1+2) = 0.4; F1_B = 2*2/(4+1+0) = 0.8; F1_C = 0/(0+0+1) = 0
    assert MacroF1().compute(scores)["macro_f1"] == pytest.approx((0.4 + 0.8 + 0.0) / 3)
    assert math.isnan(MacroF1().compute([])["macro_f1"])  # type: ignore[arg-type]


# ---- aggregation -----------------------------------------------------------------------------------------

OPTIONS = {"A": "Carboplatin", "B": "Oxaliplatin", "C": "Cisplatin", "D": "Paclitaxel"}


class LengthScorer:
    """A second scorer whose ``n`` collides with the MCQ scorer's."""

    name = "len"
    metrics: Sequence[Metric] = (Count(), LabelRate("long"))

    def __call__(self, ctx: ScoringContext) -> Score:
        return Score(value=1.0, label="long" if len(ctx.output.text or "") > 3 else "short")


def _results() -> list[CaseResult]:
    rows = [  # (subject, gold, output)
        ("x", "A", SystemOutput(text="A")),  # correct
        ("x", "B", SystemOutput(text="The answer is C")),  # incorrect
        ("y", "C", SystemOutput(text="None of the above")),  # unparsed
        ("y", "D", SystemOutput.failure("timeout", "took too long")),  # failed
        (None, "A", SystemOutput(text="A")),  # correct, no subject
        ("x", None, SystemOutput(text="B")),  # no reference
    ]
    scorers: list[Scorer] = [MCQScorer(), LengthScorer()]
    results = []
    for i, (subject, gold, output) in enumerate(rows):
        meta = {} if subject is None else {"subject": subject}
        case = Case(
            id=str(i), input=CaseInput(options=OPTIONS), reference=Reference(answer=gold), metadata=meta
        )
        context = ScoringContext(case=case, output=output)
        scores = {sc.name: sc(context) for sc in scorers}
        results.append(CaseResult(task_id="t", case_id=str(i), output=output, scores=scores, metadata=meta))
    return results


def test_aggregate_task_with_strata() -> None:
    agg = aggregate_task(_results(), [MCQScorer(), LengthScorer()], ["subject"])
    sc = agg.scores
    assert (sc["n"], sc["n_failed"], sc["n_unscored"]) == (6, 1, 1)
    assert sc["accuracy"] == pytest.approx(2 / 5)
    assert sc["accuracy_ci"] == list(wilson_interval(2, 5))
    assert sc["unparsed_rate"] == pytest.approx(1 / 5)
    assert sc["failed_rate"] == pytest.approx(1 / 5)
    # gold A,B,C,D among scorable: F1_A = 1, F1_B = 0, F1_C = 0 (one FP from B's "C"), F1_D = 0
    assert sc["macro_f1"] == pytest.approx(0.25)
    assert (sc["mcq.n"], sc["len.n"]) == (6, 6)  # colliding keys are prefixed
    assert sc["long_rate"] == pytest.approx(2 / 6)
    assert "n" in sc and "mcq.long_rate" not in sc

    strata = agg.strata["subject"]
    assert list(strata) == ["(missing)", "x", "y"]
    x, y, missing = strata["x"], strata["y"], strata["(missing)"]
    assert (x["n"], x["n_failed"], x["n_unscored"], x["accuracy"]) == (3, 0, 1, 0.5)
    assert x["accuracy_ci"] == list(wilson_interval(1, 2))
    assert (y["n"], y["n_failed"], y["accuracy"], y["unparsed_rate"], y["failed_rate"]) == (
        2,
        1,
        0.0,
        0.5,
        0.5,
    )
    assert (missing["n"], missing["accuracy"]) == (1, 1.0)
    json.dumps(agg.model_dump())  # plain JSON types only


def test_aggregate_rejects_duplicate_scorer_names() -> None:
    with pytest.raises(ValueError, match="unique"):
        aggregate_task([], [MCQScorer(), MCQScorer()], [])


def test_aggregate_of_no_results() -> None:
    agg = aggregate_task([], [MCQScorer()], ["subject"])
    assert (agg.scores["n"], agg.scores["n_failed"], agg.scores["n_unscored"]) == (0, 0, 0)
    assert math.isnan(agg.scores["accuracy"])  # type: ignore[arg-type]
    assert agg.strata == {"subject": {}}


def test_overall_scores_is_the_unweighted_task_mean() -> None:
    a = TaskAggregate(
        scores={"accuracy": 0.5, "accuracy_ci": [0.4, 0.6], "macro_f1": 0.4, "only_a": 0.3, "n": 10,
                "n_failed": 1, "n_unscored": 0}
    )  # fmt: skip
    b = TaskAggregate(
        scores={"accuracy": 0.7, "accuracy_ci": [0.6, 0.8], "macro_f1": 0.6, "n": 30, "n_failed": 0,
                "n_unscored": 2}
    )  # fmt: skip
    overall = overall_scores({"a": a, "b": b})
    assert overall == {
        "accuracy": pytest.approx(0.6),  # not (0.5*10 + 0.7*30)/40 = 0.65
        "macro_f1": pytest.approx(0.5),
        "n": 40,
        "n_failed": 1,
        "n_unscored": 2,
        "n_tasks": 2,
    }
    assert overall_scores({}) == {"n_tasks": 0}
