"""What a reference recommendation holds under the guideline rules: one adherent set of actions per patient.

``reference_plan(patient)`` walks every applicable rule and, for each expected action the patient needs
(its ``when`` holds, no ``unless`` item waives it, its jurisdiction is selected), names it by its label. For
an ``any_of`` group it takes the first alternative that no applicable rule forbids for this patient: rule
files list the guideline's first choice first, so a penicillin-allergic pneumonia gets doxycycline and a
high-risk PE two weeks after a hip replacement gets surgical embolectomy instead of thrombolysis.

The golden set's labels are built with it (``scripts/generate_golden_set.py``) and checked against it: a
plan that the rules would score non-adherent, or that names a forbidden action, raises ``ValueError``
rather than becoming a label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clineval.cds.rules.engine import applicability, evaluate_rule, holds
from clineval.cds.rules.model import (
    ActionGroup,
    ActionSpec,
    ExpectedAction,
    Regimen,
    Rule,
    RuleSet,
    load_rules,
)


@dataclass(frozen=True)
class ReferencePlan:
    """The applicable rules, the actions a reference names (labels, in rule order) and whether a rule asks
    for escalation (with its reasons)."""

    rules: tuple[str, ...]
    actions: tuple[str, ...]
    escalation: bool
    escalation_reasons: tuple[str, ...]


def _labels(option: ActionSpec | Regimen) -> list[str]:
    return [option.action] if isinstance(option, ActionSpec) else [m.action for m in option.all_of]


def _forbids(
    rules: Sequence[Rule], patient: Mapping[str, Any], ruleset: RuleSet, labels: list[str], j: str | None
) -> bool:
    sections = {"recommended_actions": labels}
    return any(evaluate_rule(r, patient, sections, ruleset, 1.0, j).forbidden for r in rules)


def _required(
    expected: ExpectedAction | ActionGroup, patient: Mapping[str, Any], ruleset: RuleSet, j: str | None
) -> bool:
    if expected.jurisdictions and j is not None and j not in expected.jurisdictions:
        return False
    if expected.when and holds(expected.when, patient, ruleset)[0] is not True:
        return False
    return not any(holds([g], patient, ruleset)[0] is True for g in expected.unless)


def _choose(
    expected: ExpectedAction | ActionGroup,
    rules: Sequence[Rule],
    patient: Mapping[str, Any],
    ruleset: RuleSet,
    j: str | None,
    chosen: list[str],
) -> list[str]:
    options: list[ActionSpec | Regimen] = (
        list(expected.any_of) if isinstance(expected, ActionGroup) else [expected]
    )
    for option in options:
        # with the actions chosen so far: IV calcium is forbidden alone, not after insulin + glucose
        if not _forbids(rules, patient, ruleset, [*chosen, *_labels(option)], j):
            return _labels(option)
    raise ValueError(f"every alternative of {expected.label!r} is forbidden for this patient")


def reference_plan(
    patient: Mapping[str, Any], ruleset: RuleSet | None = None, jurisdiction: str | None = None
) -> ReferencePlan:
    """The reference actions for ``patient`` (see the module docstring); ``jurisdiction`` None: the rule
    file's default. Raises ValueError when the plan would not be adherent (a rule file whose alternatives
    are all forbidden for a patient, or whose action labels do not name their own action)."""
    rules = ruleset or load_rules()
    chosen = rules.jurisdiction(jurisdiction)
    applicable = [r for r in rules.rules if applicability(r, patient, rules)[0] is True]
    actions: list[str] = []
    for rule in applicable:
        for expected in rule.expected_actions:
            if _required(expected, patient, rules, chosen):
                actions.extend(
                    a
                    for a in _choose(expected, applicable, patient, rules, chosen, actions)
                    if a not in actions
                )
    reasons = [r.escalation_reason or r.title for r in applicable if r.escalation]
    sections = {"recommended_actions": actions, "when_to_escalate": reasons}
    for rule in applicable:
        result = evaluate_rule(rule, patient, sections, rules, 1.0, chosen)
        if not result.adherent:
            raise ValueError(
                f"reference plan is not adherent to {rule.id}: {result.missing or result.forbidden}"
            )
    return ReferencePlan(
        tuple(r.id for r in applicable), tuple(actions), any(r.escalation for r in applicable), tuple(reasons)
    )
