"""Rates of a yes/no fact recorded in each score's breakdown (``top1``, ``mentioned``...), with intervals, and
means of a number recorded there (``tempo_mean``, ``reasoning_coherence``...)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from clineval.core.helpers.columns import ScoreColumn
from clineval.core.run import MetricValue
from clineval.core.score import Score
from clineval.metrics.intervals import wilson_interval


class BreakdownRate:
    """``<name> = #{i : breakdown_i[key] is true} / #{i : breakdown_i[key] is not None}`` and ``<name>_ci``.

    Only cases where the fact applies count (the scorer leaves the key None elsewhere: e.g.
    ``in_differential`` only for diagnostic questions); failed cases record False, so they count against
    the system. ``<name>_ci`` is the 95% Wilson score interval (Wilson 1927). NaN when no case applies.
    """

    def __init__(self, key: str, *, name: str | None = None, confidence: float = 0.95) -> None:
        self.key = key
        self.name = name or f"{key}_rate"
        self.confidence = confidence
        self.breakdown_keys: tuple[str, ...] = (key,)

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        facts = [bool(v) for b in column.iter_breakdowns() if (v := b.get(self.key)) is not None]
        if not facts:
            return {self.name: math.nan, f"{self.name}_ci": [math.nan, math.nan]}
        k, n = sum(facts), len(facts)
        lo, hi = wilson_interval(k, n, self.confidence)
        return {self.name: k / n, f"{self.name}_ci": [lo, hi]}

    def case_values(self, column: ScoreColumn) -> dict[str, NDArray[np.float64]]:
        """1 / 0 where the fact applies (true / false), NaN where it does not."""
        facts = [
            math.nan if (v := b.get(self.key)) is None else float(bool(v)) for b in column.iter_breakdowns()
        ]
        return {self.name: np.asarray(facts, dtype=np.float64)}


class BreakdownMean:
    """``<name> = (1/m) Σ breakdown_i[key]`` over the m cases where it is a number (NaN if m = 0)."""

    def __init__(self, key: str, *, name: str | None = None) -> None:
        self.key = key
        self.name = name or key
        self.breakdown_keys: tuple[str, ...] = (key,)

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        values = [float(v) for b in column.iter_breakdowns() if isinstance(v := b.get(self.key), int | float)]
        values = [v for v in values if not math.isnan(v)]
        return {self.name: math.fsum(values) / len(values) if values else math.nan}
