"""Task-level retrieval metrics: the mean over queries of each per-query measure.

``MeasureMeans`` reads ``breakdown[field]`` (a ``{measure: value}`` dict per query, written by the
``retrieval`` scorer) and outputs ``{measure: (1/Q) Σ_q value_q}``. This is trec_eval's ``all`` line for
the measures clineval reports (nDCG@k, P@k, R@k, Rprec, RR, AP are arithmetic means over queries).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from clineval.core.helpers.columns import ScoreColumn
from clineval.core.run import MetricValue
from clineval.core.score import Score


class MeasureMeans:
    """``m = (1/Q_m) Σ_q breakdown_q[field][m]`` for every measure m found, Q_m the queries that have m.

    Every query scored by the ``retrieval`` scorer has every configured measure (a failed system call or
    an empty ranking is 0 on all of them, as ``trec_eval -c`` counts a judged query missing from the run),
    so for those ``Q_m`` is the number of judged queries. Per-source-type recalls exist only for queries
    with a relevant document of that type, so they average over those queries. Measures appear in the
    order first met; NaN values are skipped; with no values the measure is absent.
    """

    def __init__(self, field: str = "measures", *, name: str = "retrieval_measures") -> None:
        self.field = field
        self.name = name
        # the measures are the items of one breakdown key: that key is all it reads
        self.breakdown_keys: tuple[str, ...] = (field,)

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        values: dict[str, list[float]] = {}
        for breakdown in column.iter_breakdowns():
            measures = breakdown.get(self.field)
            if not isinstance(measures, Mapping):
                continue
            for key, value in measures.items():
                if isinstance(value, int | float) and not math.isnan(value):
                    values.setdefault(str(key), []).append(float(value))
        return {key: math.fsum(vals) / len(vals) for key, vals in values.items()}

    def case_values(self, column: ScoreColumn) -> dict[str, NDArray[np.float64]]:
        """Each query's value of each measure, NaN where the query has none."""
        found: dict[str, NDArray[np.float64]] = {}
        for i, breakdown in enumerate(column.iter_breakdowns()):
            measures = breakdown.get(self.field)
            if not isinstance(measures, Mapping):
                continue
            for key, value in measures.items():
                if isinstance(value, int | float) and not math.isnan(value):
                    found.setdefault(str(key), np.full(len(column), np.nan))[i] = float(value)
        return found
