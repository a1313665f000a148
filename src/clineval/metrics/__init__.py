"""clineval.metrics: aggregation of per-case scores (rates, intervals, strata, overall).

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.metrics.aggregate import MISSING_STRATUM, aggregate_task, overall_scores
    from clineval.metrics.basic import Accuracy, CiMethod, Count, LabelRate, MacroF1, scorable
    from clineval.metrics.intervals import (
        bootstrap_interval,
        constant_interval,
        mean_interval,
        wilson_interval,
    )

__all__ = [
    "MISSING_STRATUM",
    "Accuracy",
    "CiMethod",
    "Count",
    "LabelRate",
    "MacroF1",
    "aggregate_task",
    "bootstrap_interval",
    "constant_interval",
    "mean_interval",
    "overall_scores",
    "scorable",
    "wilson_interval",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.metrics.aggregate": ("MISSING_STRATUM", "aggregate_task", "overall_scores"),
        "clineval.metrics.basic": ("Accuracy", "CiMethod", "Count", "LabelRate", "MacroF1", "scorable"),
        "clineval.metrics.intervals": (
            "bootstrap_interval",
            "constant_interval",
            "mean_interval",
            "wilson_interval",
        ),
    },
)
