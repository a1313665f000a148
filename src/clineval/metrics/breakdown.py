"""Rates of a yes/no fact recorded in each score's breakdown (``top1``, ``mentioned``...), with intervals.

Also the column helpers of the breakdown metrics: :func:`score_column` (Scores as a
:class:`~clineval.core.columns.ScoreColumn` with their breakdowns, so that each metric has one
implementation, on columns) and :func:`breakdowns` (each case's kept breakdown, in order).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from clineval.core.columns import ScoreColumn
from clineval.core.run import MetricValue
from clineval.core.score import Score
from clineval.metrics.intervals import wilson_interval

_EMPTY: Mapping[str, Any] = {}


def score_column(scores: Sequence[Score]) -> ScoreColumn:
    """``scores`` as a column: values, labels and (whole) breakdowns."""
    labels = np.empty(len(scores), dtype=object)
    labels[:] = [s.label for s in scores]
    kept = np.empty(len(scores), dtype=object)
    kept[:] = [s.breakdown for s in scores]
    values = np.fromiter((s.value for s in scores), dtype=np.float64, count=len(scores))
    return ScoreColumn(values, labels, kept)


def breakdowns(column: ScoreColumn) -> Iterator[Mapping[str, Any]]:
    """The breakdown of each case of ``column`` in order (empty where none was kept)."""
    if column.breakdowns is None:
        for _ in range(len(column)):
            yield _EMPTY
        return
    for found in column.breakdowns.tolist():
        yield _EMPTY if found is None else found


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
        return self.compute_column(score_column(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        facts = [bool(v) for b in breakdowns(column) if (v := b.get(self.key)) is not None]
        if not facts:
            return {self.name: math.nan, f"{self.name}_ci": [math.nan, math.nan]}
        k, n = sum(facts), len(facts)
        lo, hi = wilson_interval(k, n, self.confidence)
        return {self.name: k / n, f"{self.name}_ci": [lo, hi]}
