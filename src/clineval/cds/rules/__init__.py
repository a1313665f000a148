"""Tier 3: guideline-adherence rules (the four-tier evaluation design, tier 3).

A rule says when it applies (patient findings, labs, scores such as CURB-65), which actions it expects and
which it forbids; the engine evaluates it against a recommendation with negation handling; the
``guideline_adherence`` scorer reports adherence per rule. Rule data: ``clineval/cds/rules/data/``.
Docs: ``docs/cds/tier3_guidelines.md``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.cds.rules.engine import RuleResult, applicable_rules, evaluate_rule, evaluate_rules
    from clineval.cds.rules.guidelines import GuidelineAdherenceScorer, make_guideline_scorer
    from clineval.cds.rules.model import Rule, RuleSet, load_rules, packaged_rules, parse_rules

__all__ = [
    "GuidelineAdherenceScorer",
    "Rule",
    "RuleResult",
    "RuleSet",
    "applicable_rules",
    "evaluate_rule",
    "evaluate_rules",
    "load_rules",
    "make_guideline_scorer",
    "packaged_rules",
    "parse_rules",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.cds.rules.model": (
            "Rule",
            "RuleSet",
            "load_rules",
            "packaged_rules",
            "parse_rules",
        ),
        "clineval.cds.rules.engine": (
            "RuleResult",
            "applicable_rules",
            "evaluate_rule",
            "evaluate_rules",
        ),
        "clineval.cds.rules.guidelines": (
            "GuidelineAdherenceScorer",
            "make_guideline_scorer",
        ),
    },
)
