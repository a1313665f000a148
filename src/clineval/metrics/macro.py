"""Aggregation of per-case DDx scores (``clineval.ddx.scorer``): macro means, micro ratios, class totals.

The headline DDx metrics are macro-averaged: each case's score is computed first (its recall, its
clinical reasoning quality...) and the task value is the mean over the cases where it is defined
(a case whose denominator is 0 has NaN there and is skipped), so every case weighs the same whatever
the size of its ground truth, as in the LDDx metrics guide's per-case tables and in DDXPlus's
per-patient metrics (Fansi Tchango et al. 2022). ``recall_micro`` pools the counts instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from clineval.core.helpers.columns import ScoreColumn, kept_breakdown_keys
from clineval.core.protocols import Metric
from clineval.core.run import MetricValue
from clineval.core.score import Score
from clineval.metrics.aggregate import compute_metric
from clineval.metrics.intervals import mean_interval

MACRO_KEYS = (
    "recall",
    "precision",
    "clinical_reasoning_quality",
    "diagnostic_safety",
    "system_safety_coverage",
)
CLASS_KEYS = ("TP", "FP", "FN", "CAA", "AE", "TM-SM")


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


class MacroMean:
    """``<name> = (1/n) Σ_i breakdown_i[key]`` over the n cases where the value is a finite number, and
    ``<name>_ci``: the interval of that mean of [0, 1] values (``clineval.metrics.intervals.mean_interval``:
    Wilson when every value is 0 or 1, e.g. recall with one ground-truth diagnosis per case; the no-spread
    interval when all values are equal, e.g. an all-zero recall; else the seeded percentile bootstrap of
    Efron & Tibshirani 1993). NaN and [NaN, NaN] when no case has a value."""

    def __init__(
        self,
        key: str,
        *,
        name: str | None = None,
        seed: int = 0,
        n_resamples: int = 2000,
        confidence: float = 0.95,
    ) -> None:
        self.key = key
        self.name = name or key
        self.seed = seed
        self.n_resamples = n_resamples
        self.confidence = confidence
        self.breakdown_keys: tuple[str, ...] = (key,)

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        values = [v for b in column.iter_breakdowns() if (v := _finite(b.get(self.key))) is not None]
        if not values:
            return {self.name: math.nan, f"{self.name}_ci": [math.nan, math.nan]}
        lo, hi = mean_interval(
            values, seed=self.seed, n_resamples=self.n_resamples, confidence=self.confidence
        )
        return {self.name: math.fsum(values) / len(values), f"{self.name}_ci": [lo, hi]}

    def case_values(self, column: ScoreColumn) -> dict[str, NDArray[np.float64]]:
        """Each case's finite ``breakdown[key]``, NaN where it has none."""
        found = [math.nan if (v := _finite(b.get(self.key))) is None else v for b in column.iter_breakdowns()]
        return {self.name: np.asarray(found, dtype=np.float64)}


class MicroRatio:
    """``<name> = Σ_i Σ_{k in num} breakdown_i[k] / Σ_i Σ_{k in den} breakdown_i[k]`` over the cases
    that have every key, e.g. ``recall_micro = ΣTP / Σ ground truth``. NaN when the denominator is 0."""

    def __init__(self, num: Sequence[str], den: Sequence[str], *, name: str) -> None:
        self.num = tuple(num)
        self.den = tuple(den)
        self.name = name
        self.breakdown_keys: tuple[str, ...] = tuple(dict.fromkeys((*self.num, *self.den)))

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        num = den = 0.0
        for breakdown in column.iter_breakdowns():
            got = [_finite(breakdown.get(k)) for k in (*self.num, *self.den)]
            if any(v is None for v in got):
                continue
            values = [v or 0.0 for v in got]
            num += math.fsum(values[: len(self.num)])
            den += math.fsum(values[len(self.num) :])
        return {self.name: num / den if den else math.nan}


class ClassTotals:
    """``<class>_total = Σ_i breakdown_i[<class>]`` for TP, FP, FN, CAA, AE, TM-SM (``tm_sm_total``)."""

    name = "ddx_class_totals"
    breakdown_keys: tuple[str, ...] = CLASS_KEYS

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        out: dict[str, MetricValue] = {}
        kept = list(column.iter_breakdowns())
        for cls in CLASS_KEYS:
            total = sum(int(v) for b in kept if (v := _finite(b.get(cls))) is not None)
            out[f"{cls.lower().replace('-', '_')}_total"] = total
        return out


class WhenRecorded:
    """The values of ``metrics`` when at least one case's breakdown has ``key``, nothing otherwise: e.g.
    the ``*_judged`` DDx metrics exist only for tasks run with an equivalence judge (rather than as NaN
    keys in every other task).

    ``breakdown_keys``: ``key`` and the keys of ``metrics``; None (the whole breakdown is kept) when one of
    them does not declare its keys."""

    def __init__(self, key: str, metrics: Sequence[Metric], *, name: str) -> None:
        self.key = key
        self.metrics = tuple(metrics)
        self.name = name
        inner = kept_breakdown_keys(self.metrics)
        self.breakdown_keys: tuple[str, ...] | None = (
            None if inner is None else tuple(dict.fromkeys((key, *inner)))
        )

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        if not any(self.key in b for b in column.iter_breakdowns()):
            return {}
        out: dict[str, MetricValue] = {}
        for metric in self.metrics:
            out.update(compute_metric(metric, column))
        return out

    def case_values(self, column: ScoreColumn) -> dict[str, NDArray[np.float64]]:
        """The per-case values of the inner metrics that have them, when recorded."""
        if not any(self.key in b for b in column.iter_breakdowns()):
            return {}
        out: dict[str, NDArray[np.float64]] = {}
        for metric in self.metrics:
            per_case = getattr(metric, "case_values", None)
            if callable(per_case):
                out.update(per_case(column))
        return out
