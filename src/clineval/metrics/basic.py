"""Metrics over one scorer's per-case scores: accuracy (with interval), label rates, count, macro-F1.

Every metric skips scores whose value is NaN ("not scorable", e.g. a case without a reference) unless
its docstring says otherwise; those are reported by the aggregation as ``n_unscored``. Outputs are plain
JSON types (float, int, list of two floats); NaN only where the quantity is undefined (no scores).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from clineval.core.helpers.columns import ScoreColumn
from clineval.core.run import MetricValue
from clineval.core.score import Score
from clineval.metrics.intervals import mean_interval, wilson_interval

CiMethod = Literal["wilson", "bootstrap"]


def scorable(scores: Sequence[Score]) -> list[Score]:
    """The scores whose value is not NaN."""
    return [s for s in scores if s.value == s.value]  # NaN != NaN


class Accuracy:
    """``accuracy = (1/n) Σ value_i`` over the n scorable scores, and ``accuracy_ci``.

    Failed and unparsed cases are in the denominator with value 0 (a wrong answer and no answer both
    count against the system), as in MIRAGE (Xiong et al. 2024) and the PubMedQA evaluation script.
    ``accuracy_ci`` is the 95% (``confidence``) Wilson score interval of k = Σ value_i successes in n
    trials (values must be 0/1), or with ``ci="bootstrap"`` (any values in [0, 1]) the interval of a
    bounded mean, ``clineval.metrics.intervals.mean_interval``: Wilson when every value is 0 or 1, the
    no-spread interval when all values are equal (never [x, x]), else a seeded percentile bootstrap.
    With no scorable scores: ``accuracy`` NaN, ``accuracy_ci`` [NaN, NaN].
    """

    def __init__(
        self,
        *,
        ci: CiMethod = "wilson",
        confidence: float = 0.95,
        seed: int = 0,
        n_resamples: int = 2000,
        name: str = "accuracy",
    ) -> None:
        if ci not in ("wilson", "bootstrap"):
            raise ValueError(f"ci must be 'wilson' or 'bootstrap', got {ci!r}")
        if not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
        self.name = name
        self.ci = ci
        self.confidence = confidence
        self.seed = seed
        self.n_resamples = n_resamples

    breakdown_keys: tuple[str, ...] = ()

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores, breakdowns=False))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        values = column.values[column.scorable()]
        n = int(values.shape[0])
        if n == 0:
            return {self.name: math.nan, f"{self.name}_ci": [math.nan, math.nan]}
        total = math.fsum(values.tolist())
        if self.ci == "wilson":
            if not np.isin(values, (0.0, 1.0)).all():
                raise ValueError(f"{self.name}: Wilson interval needs 0/1 values; use ci='bootstrap'")
            lo, hi = wilson_interval(round(total), n, self.confidence)
        else:
            lo, hi = mean_interval(
                values, seed=self.seed, n_resamples=self.n_resamples, confidence=self.confidence
            )
        return {self.name: total / n, f"{self.name}_ci": [lo, hi]}

    def case_values(self, column: ScoreColumn) -> dict[str, NDArray[np.float64]]:
        """Each case's value (NaN: not scorable): ``accuracy`` is their NaN-skipping mean."""
        return {self.name: column.values.astype(np.float64, copy=True)}


class LabelRate:
    """``<label>_rate = #{i : label_i = label} / n`` over the n scorable scores (NaN if n = 0).

    E.g. ``unparsed_rate`` (no answer could be read from the output) and ``failed_rate`` (the system
    call failed), so ``accuracy + incorrect_rate + unparsed_rate + failed_rate = 1`` for MCQ.
    """

    breakdown_keys: tuple[str, ...] = ()

    def __init__(self, label: str, *, name: str | None = None) -> None:
        self.label = label
        self.name = name or f"{label}_rate"

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores, breakdowns=False))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        labels = column.labels[column.scorable()]
        if not labels.shape[0]:
            return {self.name: math.nan}
        return {self.name: int((labels == self.label).sum()) / int(labels.shape[0])}

    def case_values(self, column: ScoreColumn) -> dict[str, NDArray[np.float64]]:
        """1 where the label is ``label``, 0 elsewhere, NaN where not scorable."""
        hit = (column.labels == self.label).astype(np.float64)
        return {self.name: np.where(column.scorable(), hit, np.nan)}


class Count:
    """``n`` = number of scores given, scorable or not (= number of cases of the task)."""

    name = "n"
    breakdown_keys: tuple[str, ...] = ()

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return {self.name: len(scores)}

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        return {self.name: len(column)}


class MacroF1:
    """Unweighted mean over gold classes c of ``F1_c = 2·TP_c / (2·TP_c + FP_c + FN_c)``.

    Classes are the gold labels present among the scorable scores (``breakdown[gold_key]``); the
    prediction is ``breakdown[pred_key]`` (None when unparsed or failed: a false negative of its gold
    class). A prediction of a class that is never gold still counts as a false negative of the true
    class but adds no class of its own. This is PubMedQA's second official metric (Jin et al. 2019,
    macro-F1 over yes/no/maybe). NaN if there are no scorable scores with a gold label.
    """

    def __init__(
        self, *, gold_key: str = "gold", pred_key: str = "extracted", name: str = "macro_f1"
    ) -> None:
        self.name = name
        self.gold_key = gold_key
        self.pred_key = pred_key
        self.breakdown_keys = (gold_key, pred_key)

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        pairs: list[tuple[str, object]] = []
        for index in np.flatnonzero(column.scorable()).tolist():
            breakdown = column.breakdown(index)
            gold = breakdown.get(self.gold_key)
            if gold is not None:
                pairs.append((str(gold), breakdown.get(self.pred_key)))
        classes = sorted({g for g, _ in pairs})
        if not classes:
            return {self.name: math.nan}
        f1s = []
        for c in classes:
            tp = sum(1 for g, p in pairs if g == c and p == c)
            fp = sum(1 for g, p in pairs if g != c and p == c)
            fn = sum(1 for g, p in pairs if g == c and p != c)
            f1s.append(2 * tp / (2 * tp + fp + fn))
        return {self.name: math.fsum(f1s) / len(f1s)}
