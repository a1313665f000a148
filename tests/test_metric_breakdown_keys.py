"""Each metric's ``breakdown_keys`` are exactly what it reads, and its column method equals ``compute``.

A case summary keeps only the breakdown keys a scorer's metrics declare (``kept_breakdown_keys``); a
metric reading an undeclared key would silently see nothing at aggregation. So, for every metric that
declares its keys: ``compute`` on Scores whose breakdowns also hold unrelated keys equals ``compute`` on
the same Scores reduced to the declared keys; and ``compute_column`` on a column of kept (declared,
JSON round-tripped) breakdowns, as built from stored summaries, gives the same values again.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import clineval.runs.run
from clineval.cds.guard.structural import LatencyPercentiles, _Count
from clineval.cds.retrieval.measures import MeasureMeans
from clineval.cds.rules.guidelines import RuleAdherenceRates
from clineval.config.build import load_suite
from clineval.core.helpers.columns import ScoreColumn, kept_breakdown_keys
from clineval.core.protocols import Metric
from clineval.core.score import Score
from clineval.judging.dimensions import GradeMean, SampleStats
from clineval.judging.rubric import RubricMean
from clineval.metrics.aggregate import compute_metric
from clineval.metrics.breakdown import BreakdownMean, BreakdownRate
from clineval.metrics.macro import CLASS_KEYS, ClassTotals, MacroMean, MicroRatio, WhenRecorded
from clineval.scoring.registry import SCORERS

NAN = math.nan
# unrelated keys every breakdown also carries (what the metrics must not depend on)
EXTRA: dict[str, Any] = {"noise": 1, "reasons": ["x"], "items": [{"criterion": "c"}], "explanation": "long"}


Row = tuple[float, str | None, Mapping[str, Any]]


def _scores(rows: Sequence[Row]) -> list[Score]:
    return [Score(value=v, label=label, explanation="why", breakdown={**EXTRA, **b}) for v, label, b in rows]


def _same(a: object, b: object) -> bool:
    """Equality with NaN equal to NaN (in floats, lists and dicts)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _reduced(scores: Sequence[Score], keys: Sequence[str]) -> list[Score]:
    return [
        Score(value=s.value, label=s.label, breakdown={k: v for k, v in s.breakdown.items() if k in keys})
        for s in scores
    ]


def _stored_column(scores: Sequence[Score], keys: Sequence[str]) -> ScoreColumn:
    """The column aggregation builds from stored summaries: kept keys only, JSON round trip, None when
    nothing is kept (``summarize_scores``)."""
    kept = [{k: s.breakdown[k] for k in keys if k in s.breakdown} or None for s in scores]
    kept = [None if b is None else json.loads(json.dumps(b)) for b in kept]
    breakdowns = np.empty(len(scores), dtype=object)
    breakdowns[:] = kept
    labels = np.empty(len(scores), dtype=object)
    labels[:] = [s.label for s in scores]
    values = np.asarray([s.value for s in scores], dtype=np.float64)
    return ScoreColumn(values, labels, breakdowns if any(b is not None for b in kept) else None)


DDX_ROWS: list[Row] = [
    (0.5, "found", {"recall": 0.5, "TP": 1, "FP": 2, "FN": 1, "CAA": 0, "AE": 1, "TM-SM": 0,
                    "n_ground_truth": 2, "top1": False, "top3": True}),
    (1.0, "found", {"recall": 1.0, "TP": 3, "FP": 0, "FN": 0, "CAA": 1, "AE": 0, "TM-SM": 2,
                    "n_ground_truth": 3, "top1": True, "top3": True}),
    (NAN, "no_ground_truth", {"recall": None, "TP": 0, "FP": 4, "top1": None}),
    (0.0, "failed", {"recall": 0.0, "TP": 0, "FP": 0, "FN": 2, "CAA": 0, "AE": 0, "TM-SM": 0,
                     "n_ground_truth": 2, "top1": False, "top3": False}),
    (0.25, "found", {"recall": NAN, "TP": True, "n_ground_truth": "4", "top1": 1}),
    (0.3, None, {}),
]  # fmt: skip

JUDGED_ROWS: list[Row] = [
    (0.5, "found", {"recall_judged": 0.5, "TP_judged": 1, "n_ground_truth": 2, "top1_judged": True,
                    "judge_errors": 0, "judge_pairs": 4}),
    (1.0, "found", {"recall_judged": 1.0, "TP_judged": 2, "n_ground_truth": 2, "top1_judged": False,
                    "judge_errors": 1, "judge_pairs": 3}),
    (NAN, "failed", {"n_ground_truth": 1}),
]  # fmt: skip


def _judged() -> WhenRecorded:
    inner: list[Metric] = [
        MacroMean("recall_judged", n_resamples=200),
        BreakdownRate("top1_judged", name="top1_accuracy_judged"),
        MicroRatio(("TP_judged",), ("n_ground_truth",), name="recall_micro_judged"),
        MicroRatio(("judge_errors",), ("judge_pairs",), name="judge_error_rate"),
    ]
    return WhenRecorded("recall_judged", inner, name="ddx_judged")


RULES = [
    {"rule_id": "r1", "applicable": True, "adherent": True, "found": ["a"]},
    {"rule_id": "r2", "applicable": True, "adherent": False, "missing": ["b"]},
    {"rule_id": "r3", "applicable": None, "adherent": None},
]
DIMS = {
    "coherence": {"samples": [4, 4, 5], "errors": 0, "variance": 0.22, "flips": 1, "reasons": ["r"] * 3},
    "completeness": {"samples": [3, None, 3], "errors": 1, "variance": 0.0, "flips": 0, "reasons": []},
}

CASES: list[tuple[str, Metric, list[Score]]] = [
    ("BreakdownRate", BreakdownRate("top1", name="top1_accuracy"), _scores(DDX_ROWS)),
    ("MacroMean", MacroMean("recall", n_resamples=200), _scores(DDX_ROWS)),
    ("MicroRatio", MicroRatio(("TP",), ("n_ground_truth",), name="recall_micro"), _scores(DDX_ROWS)),
    ("MicroRatio repeated key", MicroRatio(("TP",), ("TP", "FN"), name="tp_share"), _scores(DDX_ROWS)),
    ("ClassTotals", ClassTotals(), _scores(DDX_ROWS)),
    ("WhenRecorded recorded", _judged(), _scores([*DDX_ROWS, *JUDGED_ROWS])),
    ("WhenRecorded not recorded", _judged(), _scores(DDX_ROWS)),
    (
        "MeasureMeans",
        MeasureMeans("measures"),
        _scores(
            [
                (1.0, "scored", {"measures": {"ndcg@10": 0.5, "P@5": 0.2}, "by_source_type": {"r": 1.0}}),
                (0.0, "failed", {"measures": {"ndcg@10": 0.0, "P@5": NAN, "R@5": 1}}),
                (NAN, "unjudged", {"measures": None}),
            ]
        ),
    ),
    (
        "RuleAdherenceRates",
        RuleAdherenceRates(["r1", "r2", "r3", "r4"]),
        _scores(
            [
                (0.0, "non_adherent", {"rules": RULES, "applicable_rules": ["r1", "r2"]}),
                (1.0, "adherent", {"rules": RULES[:1], "adherent_rules": ["r1"]}),
                (NAN, "no_patient", {"rules_version": "1"}),
            ]
        ),
    ),
    (
        "_Count",
        _Count("red_flag_cases"),
        _scores([(1.0, "pass", {"passed": True}), (NAN, "not_applicable", {}), (0.0, "fail", {})]),
    ),
    (
        "LatencyPercentiles",
        LatencyPercentiles(),
        _scores(
            [
                (1.0, "pass", {"latency_s": {"total": 1.5, "retrieve": 0.2}}),
                (0.0, "fail", {"latency_s": {"total": 3.0, "retrieve": NAN, "generate": 2}}),
                (NAN, "not_applicable", {"latency_s": None}),
                (1.0, "pass", {"latency_s": {"total": 0.5}}),
            ]
        ),
    ),
    (
        "BreakdownMean",
        BreakdownMean("tempo_debate"),
        _scores(
            [
                (1.2, "scored", {"tempo_mean": 1.2, "tempo_debate": 1.5}),
                (1.0, "scored", {"tempo_mean": 1.0, "tempo_debate": None}),
                (NAN, "failed", {}),
                (1.1, "scored", {"tempo_debate": NAN}),
                (1.3, "scored", {"tempo_debate": 2}),
            ]
        ),
    ),
    (
        "RubricMean",
        RubricMean(0, 200),
        _scores(
            [
                (0.75, "graded", {"tag_scores": {"axis:accuracy": 0.5, "theme:x": 0.75}, "achieved": 3.0}),
                (-0.5, "graded", {"tag_scores": {"axis:accuracy": -0.5}}),
                (0.0, "failed", {"tag_scores": {"axis:accuracy": 0.0, "theme:x": 0.0}}),
                (NAN, "judge_error", {"tag_scores": {"theme:y": 1.0}}),
                (NAN, "graded", {}),
            ]
        ),
    ),
    (
        "GradeMean",
        GradeMean("coherence", 0),
        _scores(
            [
                (1.0, "graded", {"grades": {"coherence": 4, "completeness": 3}, "dimensions": DIMS}),
                (0.5, "partially_graded", {"grades": {"coherence": None, "completeness": 3}}),
                (NAN, "failed", {"injection_flagged": False}),
                (1.0, "graded", {"grades": {"coherence": 2}}),
            ]
        ),
    ),
    (
        "SampleStats",
        SampleStats(),
        _scores(
            [
                (1.0, "graded", {"grades": {"coherence": 4}, "dimensions": DIMS}),
                (NAN, "failed", {"injection_flagged": False}),
                (1.0, "graded", {"dimensions": {"coherence": {**DIMS["coherence"], "variance": None}}}),
            ]
        ),
    ),
]


@pytest.mark.parametrize(("metric", "scores"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_declared_keys_are_all_the_metric_reads(metric: Metric, scores: list[Score]) -> None:
    keys = getattr(metric, "breakdown_keys", None)
    assert keys is not None, "the metric declares its breakdown keys"
    assert all(isinstance(k, str) for k in keys) and len(set(keys)) == len(keys)
    assert not set(EXTRA) & set(keys)
    full = metric.compute(scores)
    assert full or isinstance(metric, WhenRecorded), "the case computes something"
    assert _same(full, metric.compute(_reduced(scores, keys)))


@pytest.mark.parametrize(("metric", "scores"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_column_method_equals_compute(metric: Metric, scores: list[Score]) -> None:
    keys = getattr(metric, "breakdown_keys", None)
    assert keys is not None
    assert callable(getattr(metric, "compute_column", None))
    expected = metric.compute(scores)
    assert _same(expected, compute_metric(metric, ScoreColumn.from_scores(scores)))
    assert _same(expected, compute_metric(metric, _stored_column(scores, keys)))
    empty = metric.compute([])
    assert _same(empty, compute_metric(metric, _stored_column([], keys)))


def test_when_recorded_declares_its_key_and_the_inner_keys() -> None:
    metric = _judged()
    assert metric.breakdown_keys == (
        "recall_judged",
        "top1_judged",
        "TP_judged",
        "n_ground_truth",
        "judge_errors",
        "judge_pairs",
    )

    class Undeclared:
        name = "undeclared"

        def compute(self, scores: Sequence[Score]) -> dict[str, Any]:
            return {"n_keys": sum(len(s.breakdown) for s in scores)}

    wrapped = WhenRecorded("recall_judged", [MacroMean("recall_judged"), Undeclared()], name="w")
    assert wrapped.breakdown_keys is None  # so the scorer keeps whole breakdowns
    assert kept_breakdown_keys([ClassTotals(), wrapped]) is None
    scores = _scores(JUDGED_ROWS)
    assert _same(wrapped.compute(scores), compute_metric(wrapped, ScoreColumn.from_scores(scores)))
    assert wrapped.compute(scores)["n_keys"] == sum(len(s.breakdown) for s in scores)


def test_class_totals_and_micro_ratio_keys() -> None:
    assert ClassTotals().breakdown_keys == CLASS_KEYS
    assert MicroRatio(("TP",), ("TP", "FN"), name="x").breakdown_keys == ("TP", "FN")


def _undeclared(metrics: Sequence[Metric]) -> list[str]:
    return [type(m).__name__ for m in metrics if getattr(m, "breakdown_keys", None) is None]


def test_demo_suite_scorers_declare_every_metric() -> None:
    suite = load_suite(Path(clineval.__file__).parent / "demo" / "suite.yaml")
    scorers = clineval.runs.run.scorers_for(suite.spec)
    assert scorers
    for task_id, task_scorers in scorers.items():
        for scorer in task_scorers:
            assert _undeclared(scorer.metrics) == [], (task_id, scorer.name)
            assert kept_breakdown_keys(scorer.metrics) is not None


# Scorers whose metrics intentionally keep the whole breakdown (a metric whose keys cannot be known in
# advance). None today: every registered scorer's metrics declare their keys.
WHOLE_BREAKDOWN: dict[str, str] = {}


@pytest.mark.parametrize("name", SCORERS.names())
def test_registered_scorers_declare_every_metric(name: str) -> None:
    scorer = SCORERS.get(name)({})
    if name in WHOLE_BREAKDOWN:
        assert kept_breakdown_keys(scorer.metrics) is None
    else:
        assert _undeclared(scorer.metrics) == [], name
        assert kept_breakdown_keys(scorer.metrics) is not None
