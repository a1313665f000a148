"""The four-tier evaluation of clinical decision-support recommendations (the four-tier evaluation design).

Tier 1, deterministic structural and safety checks, also the runtime guard: ``cds/guard/`` (``check``).
Tier 2, retrieval and citation: ``cds/retrieval/`` (trec_eval measures, TREC loaders). Tier 3, guideline
adherence rules: ``cds/rules/`` (the rule engine and its rule data). The golden set and its scorers:
``cds/golden/``. Clinical thresholds and lab handling shared by tiers 1 and 3 sit here. Tier 4, the scoped
LLM judge that never gates, is ``clineval.judging``. Data: ``clineval/cds/guard/data/``,
``clineval/cds/rules/data/``. Docs: ``docs/cds/``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.cds.clinical_thresholds import Threshold, resolve_threshold, threshold
    from clineval.cds.golden.dataset import load_golden_set
    from clineval.cds.guard.checks import check
    from clineval.cds.guard.config import GuardConfig
    from clineval.cds.rules.engine import evaluate_rules
    from clineval.cds.rules.model import load_rules, packaged_rules

__all__ = [
    "GuardConfig",
    "Threshold",
    "check",
    "evaluate_rules",
    "load_golden_set",
    "load_rules",
    "packaged_rules",
    "resolve_threshold",
    "threshold",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.cds.guard.checks": ("check",),
        "clineval.cds.guard.config": ("GuardConfig",),
        "clineval.cds.rules.engine": ("evaluate_rules",),
        "clineval.cds.rules.model": (
            "load_rules",
            "packaged_rules",
        ),
        "clineval.cds.golden.dataset": ("load_golden_set",),
        "clineval.cds.clinical_thresholds": (
            "Threshold",
            "resolve_threshold",
            "threshold",
        ),
    },
)
