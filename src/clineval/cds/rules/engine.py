"""Tier 3 rule engine: guideline rules are data (``cds/rules/data/guideline_rules.yaml``, versioned and
hashed).

A rule is ``condition`` + ``context`` -> ``expected_actions``. For one patient (the CDS case shape of
``docs/CONTRACTS.md``) and one recommendation, ``evaluate_rules`` returns a ``RuleResult`` per rule:

* ``applicable`` is three-valued. False: no patient condition names the rule's condition (or one names an
  excluded condition), an ``exclude_if`` item is known to hold (cardiogenic shock, COVID-19, age < 35), or a
  context item is known to be false. None: nothing is false but a context item
  cannot be evaluated (missing lab, EF, vital, score; a lab in a unit that cannot be converted). True:
  every item holds. A rule that cannot be evaluated is "not applicable", never a pass.
* ``adherent`` is None unless ``applicable`` is True; then True iff every required expected action is
  found (an ``any_of`` group by any alternative: an action, or a regimen whose ``all_of`` actions are all
  named; ``when``/``unless``/``jurisdictions`` decide whether an item is required) in the recommendation's
  ``recommended_actions`` (and, for rules with ``escalation: true``, also in ``when_to_escalate``), and no
  ``forbidden_actions`` item whose ``when`` holds is named (see ``clineval.cds.rules.actions``).

Matching (``names``): ``clineval.text.matching.explain_match`` of a recommendation clause against the
action and each synonym with ``threshold`` (default 1.0: containment or every target token), counting only
the forward direction (the term is named in the clause; a clause that is a part of the term, "bronchodilator"
for "long-acting bronchodilator", does not count). Clauses are split at ``;``, ``.``, " but "; a negation
cue covers the action it is about, not the clause ("embolectomy (thrombolysis contraindicated)" names
embolectomy only; ``clineval.cds.rules.negation``).
Conditions are matched the same way (threshold 1.0) against ``conditions``; findings against the clauses
of ``conditions``, ``cxr``, ``findings`` and ``note`` that state a fact ("no ...", "negative", "family
history" clauses do not), allergies against ``allergies``, events against ``events`` or "N weeks ago".

Patient data: a lab is the latest blood sample of ``labs`` whose name (or ``assay``) is an alias of the
rule's lab: rows from a non-blood specimen (``clineval.cds.lab_samples``, shared with tier 1: "pleural
fluid pH") are skipped, and the latest is by ``time``/``collected`` when every row has one, else the last
in the list (a repeat value supersedes a haemolysed one); it is converted to the lab's canonical unit with
the factors of the ``labs`` table. A lab item with ``flags`` (no numeric limit: a troponin of no named
assay) holds when that row's own flag is one of them (no flag: not evaluable). An ``any_of`` group with
``skip_unmeasured`` leaves out the labs with no result (alternative assays: one assay done is enough).
Vitals from ``vitals``, LVEF from ``ef``, scores from ``scores``,
measurements (``nodule_size_mm``) from the optional ``measurements`` object. ``curb65`` is computed by
``curb65`` when ``scores`` lacks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clineval.cds.rules.actions import find_expected, find_forbidden
from clineval.cds.rules.model import (
    AnyOfContext,
    Context,
    ContextItem,
    Rule,
    RuleSet,
    load_rules,
    parse_rules,
)
from clineval.cds.rules.patient import _names_any, _texts, check_item, curb65, lab_value, latest_lab, names

__all__ = [
    "Rule",
    "RuleResult",
    "RuleSet",
    "applicable_rules",
    "curb65",
    "evaluate_rule",
    "evaluate_rules",
    "lab_value",
    "load_rules",
    "names",
    "parse_rules",
]

# ---------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class RuleResult:
    rule_id: str
    applicable: bool | None
    adherent: bool | None
    found: list[dict[str, str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    reason: str = ""
    escalation: bool = False
    forbidden: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "applicable": self.applicable,
            "adherent": self.adherent,
            "found": [dict(f) for f in self.found],
            "missing": list(self.missing),
            "reason": self.reason,
            "escalation": self.escalation,
            "forbidden": [dict(f) for f in self.forbidden],
        }


def matched_condition(rule: Rule, patient: Mapping[str, Any]) -> str | None:
    """The patient condition that names the rule's condition (``"*"`` for a rule with no condition)."""
    if not rule.condition:
        return "*"
    for text in _texts(patient, "conditions"):
        if _names_any([text], rule.condition, 1.0) and not _names_any([text], rule.condition_exclude, 1.0):
            return text
    return None


def _evaluate(
    context: Context, patient: Mapping[str, Any], ruleset: RuleSet
) -> tuple[bool | None, list[str], ContextItem | AnyOfContext | None]:
    """Three-valued AND of context groups (a group: one item, or ``any_of`` items ORed): the value, the
    notes, and the first group known not to hold (None unless the value is False)."""
    notes: list[str] = []
    unknown = False
    for group in context:
        items = _members(group, patient, ruleset)
        outcomes = [check_item(item, patient, ruleset) for item in items]
        notes.extend(note for _, note in outcomes)
        values = [ok for ok, _ in outcomes]
        if True in values:
            continue
        if None in values:
            unknown = True
            continue
        return False, notes, group
    return (None if unknown else True), notes, None


def _members(
    group: ContextItem | AnyOfContext, patient: Mapping[str, Any], ruleset: RuleSet
) -> list[ContextItem]:
    """A group's items; for ``skip_unmeasured`` without the labs that have no result, unless none has."""
    if not isinstance(group, AnyOfContext):
        return [group]
    if not group.skip_unmeasured:
        return group.any_of
    measured = [i for i in group.any_of if i.lab is None or latest_lab(patient, i.lab, ruleset) is not None]
    return measured or group.any_of


def holds(context: Context, patient: Mapping[str, Any], ruleset: RuleSet) -> tuple[bool | None, list[str]]:
    """Three-valued AND of context groups (a group: one item, or ``any_of`` items ORed) and the notes."""
    value, notes, _ = _evaluate(context, patient, ruleset)
    return value, notes


def exclusion(rule: Rule, patient: Mapping[str, Any], ruleset: RuleSet) -> str | None:
    """The first ``exclude_if`` item known to hold for the patient (described), or None."""
    for group in rule.exclude_if:
        ok, notes = holds([group], patient, ruleset)
        if ok is True:
            return f"{group.describe()} ({'; '.join(notes)})"
    return None


def applicability(rule: Rule, patient: Mapping[str, Any], ruleset: RuleSet) -> tuple[bool | None, str]:
    """(True | False | None, why): three-valued AND of the condition and every context item; False when
    an ``exclude_if`` item holds."""
    cond = matched_condition(rule, patient)
    if cond is None:
        return False, "condition not present"
    excluded = exclusion(rule, patient, ruleset)
    if excluded is not None:
        return False, f"excluded: {excluded}"
    value, context_notes, failed = _evaluate(rule.context, patient, ruleset)
    notes = ([] if cond == "*" else [f"condition: {cond!r}"]) + context_notes
    if failed is not None:
        return False, f"context not met: {failed.describe()}; " + "; ".join(notes)
    if value is None:
        return None, "cannot be evaluated (missing data); " + "; ".join(notes)
    return True, "; ".join(notes)


def _selected(tags: Sequence[str], jurisdiction: str | None) -> bool:
    return not tags or jurisdiction is None or jurisdiction in tags


def evaluate_rule(
    rule: Rule,
    patient: Mapping[str, Any],
    sections: Mapping[str, Sequence[str]],
    ruleset: RuleSet,
    threshold: float = 1.0,
    jurisdiction: str | None = None,
) -> RuleResult:
    """One rule on one patient and recommendation. Adherent: every required expected action is found (an
    action with ``when`` is required only where its context holds, one with ``unless`` not where one of
    those items is known to hold; an item tagged with jurisdictions only
    under one of them) and no forbidden action whose ``when`` holds is recommended."""
    applicable, reason = applicability(rule, patient, ruleset)
    if applicable is not True:
        return RuleResult(rule.id, applicable, None, reason=reason, escalation=rule.escalation)
    names_ = ["recommended_actions", *(["when_to_escalate"] if rule.escalation else [])]
    found: list[dict[str, str]] = []
    missing: list[str] = []
    notes: list[str] = [reason] if reason else []
    for expected in rule.expected_actions:
        if not _selected(expected.jurisdictions, jurisdiction):
            continue
        if expected.when:
            required, why = holds(expected.when, patient, ruleset)
            if required is not True:
                state = "not evaluable" if required is None else "not indicated"
                notes.append(f"{expected.label}: {state} ({'; '.join(why)})")
                continue
        waived = next((g for g in expected.unless if holds([g], patient, ruleset)[0] is True), None)
        if waived is not None:
            notes.append(f"{expected.label}: not required ({waived.describe()})")
            continue
        hit = find_expected(expected, sections, names_, threshold)
        if hit:
            found.append(hit)
        else:
            missing.append(expected.label)
    violations: list[dict[str, str]] = []
    for forbidden in rule.forbidden_actions:
        if not _selected(forbidden.jurisdictions, jurisdiction):
            continue
        if forbidden.when and holds(forbidden.when, patient, ruleset)[0] is not True:
            continue
        violation = find_forbidden(forbidden, sections, threshold)
        if violation:
            violations.append(violation)
    adherent = not missing and not violations
    return RuleResult(rule.id, True, adherent, found, missing, "; ".join(notes), rule.escalation, violations)


def evaluate_rules(
    patient: Mapping[str, Any],
    recommendation_text_sections: Mapping[str, Sequence[str]],
    ruleset: RuleSet | None = None,
    threshold: float = 1.0,
    jurisdiction: str | None = None,
) -> list[RuleResult]:
    """One RuleResult per rule, in the rule file's order. ``recommendation_text_sections``:
    ``{"recommended_actions": [action texts], "when_to_escalate": [texts]}``. ``jurisdiction``: one of the
    rule file's ``jurisdictions.options`` (None: its default); an unknown one raises ValueError."""
    rules = ruleset or load_rules()
    chosen = rules.jurisdiction(jurisdiction)
    return [
        evaluate_rule(r, patient, recommendation_text_sections, rules, threshold, chosen) for r in rules.rules
    ]


def applicable_rules(patient: Mapping[str, Any], ruleset: RuleSet | None = None) -> list[Rule]:
    """The rules that apply to ``patient`` (applicability True): what a reference expects."""
    rules = ruleset or load_rules()
    return [r for r in rules.rules if applicability(r, patient, rules)[0] is True]
