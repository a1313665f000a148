"""Specificity of a recommendation (tier 3): actions the rules tie to conditions the patient does not have.

A rule checks that its required actions are present and no forbidden one is; nothing counted what no
applicable rule asks for, so a recommendation listing every action the rules name was adherent on 81% of
the golden set's applicable cases against 9% for the best constant answer (``clineval audit``,
docs/runs/audit.md). Guidelines recommend *for a condition*: a loop diuretic for a pneumonia, primary PCI for
a COPD exacerbation, thrombolysis for heart failure are not adherent care but a shotgun.

Per case, with the action catalogue of the ruleset (``clineval.cds.rules.catalogue``: every action any
rule lists, alternatives and regimen members included, matched negation-aware in every section of the
recommendation, ``when_to_escalate`` too, contingency clauses skipped):

* an **on-target** action is a catalogue action that some rule whose *condition* the patient has lists
  (``matched_condition``: the patient's conditions name the rule's, none its excluded ones; whether the
  rule's context then holds is not asked: NIV for a COPD exacerbation without acidosis is not off target,
  only not required). A rule with no condition (severe hyperkalaemia applies to any patient) is the
  patient's unless it is known not to apply (a normal K+);
* an **off-target** action is a catalogue action that only rules of other conditions list;
* counting: one term names one action (so "thrombolysis", a synonym of two catalogue entries, counts
  once), and a term that is also a term of an on-target action named in the recommendation is the
  patient's action, whatever other rule lists it too ("amoxicillin" for a pneumonia is not the COPD
  rule's off-target "antibiotic"; "salbutamol" for a COPD exacerbation is not the design table's
  hyperkalaemia salbutamol);
* the recommendation is **specific** when ``#off-target <= max(OFF_TARGET_FLOOR, #on-target)``
  (``OFF_TARGET_FLOOR`` = 2): a recommendation may name a couple of actions tied to other conditions (an
  antibiotic beside heart-failure care, cardiac monitoring for an arrhythmia risk), never more than it
  names for the patient's own conditions.

Hedging does not hide an action: "consider X if appropriate" names X, for required actions (it counts as
recommending them) and off-target ones alike, so "consider" before every action of the catalogue is
adherent to nothing. Actions outside the catalogue (a test, a referral) are neither.

``guideline_adherence`` = 1 on a case only when every applicable rule is adherent **and** the
recommendation is specific; per-rule ``adherence_<rule>`` rates are unchanged (a rule judges its own
actions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clineval.cds.rules.catalogue import Entry, named_entries
from clineval.cds.rules.engine import applicability, matched_condition
from clineval.cds.rules.model import RuleSet

OFF_TARGET_FLOOR = 2


def patient_rules(patient: Mapping[str, Any], ruleset: RuleSet) -> frozenset[str]:
    """The ids of the rules whose condition the patient has (module docstring); a rule with no condition
    (any patient: severe hyperkalaemia) is the patient's unless it is known not to apply (K+ normal)."""
    return frozenset(
        r.id
        for r in ruleset.rules
        if (
            matched_condition(r, patient) is not None
            if r.condition
            else applicability(r, patient, ruleset)[0] is not False
        )
    )


def _distinct(named: list[tuple[Entry, str]]) -> list[str]:
    """The labels of entries named by distinct terms (one term naming two entries counts once)."""
    seen: set[str] = set()
    labels = []
    for entry, term in named:
        if term not in seen:
            seen.add(term)
            labels.append(entry.label)
    return labels


def specificity(
    patient: Mapping[str, Any],
    sections: Mapping[str, Sequence[str]],
    ruleset: RuleSet,
    threshold: float = 1.0,
) -> dict[str, Any]:
    """{"specific", "on_target", "off_target", "off_target_allowed"} of one recommendation."""
    own = patient_rules(patient, ruleset)
    named = named_entries(sections, ruleset, threshold)
    mine = [(e, term.lower()) for e, term in named if e.rule_ids & own]
    own_terms = {t.lower() for e, _ in mine for t in e.spec.terms}
    on = _distinct(mine)
    off = _distinct(
        [(e, t) for e, term in named if not e.rule_ids & own and (t := term.lower()) not in own_terms]
    )
    allowed = max(OFF_TARGET_FLOOR, len(on))
    specific = len(off) <= allowed
    return {"specific": specific, "on_target": on, "off_target": off, "off_target_allowed": allowed}
