"""clineval.releases: from stored runs to a release decision.

Compare two runs and re-weight the combined score (``gate``), keep named baselines per tenant and gate a
candidate run against one (``gate``, strict or statistical: docs/releases/gate.md), promote a run to a
baseline only through the gate (``promotion``), export a run's failures for tuning (``feedback``) while the
held-out cases stay withheld (``heldout``). Names are imported lazily (``clineval.core.helpers.lazy``).
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.releases.gate import (
        GATE_ALPHA,
        GATE_MARGIN,
        baseline_history,
        common_rows,
        compare_runs,
        gate_decisions,
        gate_run,
        list_baselines,
        recombine,
        show_baseline,
    )
    from clineval.releases.promotion import promote_baseline, promotion_text

__all__ = [
    "GATE_ALPHA",
    "GATE_MARGIN",
    "baseline_history",
    "common_rows",
    "compare_runs",
    "gate_decisions",
    "gate_run",
    "list_baselines",
    "promote_baseline",
    "promotion_text",
    "recombine",
    "show_baseline",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.releases.gate": (
            "GATE_ALPHA",
            "GATE_MARGIN",
            "baseline_history",
            "common_rows",
            "compare_runs",
            "gate_decisions",
            "gate_run",
            "list_baselines",
            "recombine",
            "show_baseline",
        ),
        "clineval.releases.promotion": ("promote_baseline", "promotion_text"),
    },
)
