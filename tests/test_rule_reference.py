"""reference_plan: the adherent action set a reference names for a patient (golden-set labels)."""

from __future__ import annotations

from typing import Any

import pytest

from clineval.cds.rules.model import parse_rules
from clineval.cds.rules.reference import reference_plan


def cap(allergy: str = "none known", **vitals: float) -> dict[str, Any]:
    """A 40-year-old with pneumonia: urea 9 (U) and DBP 58 (B) give CURB-65 2 unless vitals change it."""
    return {
        "age": 40,
        "conditions": ["community-acquired pneumonia"],
        "allergies": [allergy],
        "labs": [{"name": "urea", "value": 9.0, "unit": "mmol/L"}],
        "vitals": {"rr": 22, "sbp": 104, "dbp": 58, **vitals},
    }


def test_nice_first_choice_and_the_allergy_alternative() -> None:
    assert reference_plan(cap()).actions == ("amoxicillin",)
    allergic = reference_plan(cap("penicillin (rash)"))
    assert allergic.rules == ("cap_curb65_moderate",) and allergic.actions == ("doxycycline",)
    # CURB-65 3 (RR 32): co-amoxiclav + clarithromycin; with the allergy NICE gives levofloxacin
    assert reference_plan(cap(rr=32)).actions == ("co-amoxiclav", "clarithromycin")
    assert reference_plan(cap("penicillin", rr=32)).actions == ("levofloxacin",)


def test_jurisdiction_selects_the_regimen() -> None:
    plan = reference_plan(cap(), jurisdiction="idsa_ats")
    assert plan.actions == ("beta-lactam", "macrolide")
    with pytest.raises(ValueError, match="jurisdiction"):
        reference_plan(cap(), jurisdiction="mars")


def test_recent_surgery_turns_thrombolysis_into_embolectomy() -> None:
    patient = {
        "conditions": ["pulmonary embolism"],
        "vitals": {"sbp": 82},
        "note": "Hip replacement 2 weeks ago; saddle embolus.",
    }
    plan = reference_plan(patient)
    assert plan.rules == ("pe_high_risk",) and plan.escalation
    assert plan.actions == ("anticoagulation with unfractionated heparin", "surgical embolectomy")
    patient["note"] = "On the combined pill; saddle embolus."
    assert reference_plan(patient).actions[-1] == "systemic thrombolysis"


def test_calcium_is_named_after_insulin_with_glucose() -> None:
    """IV calcium alone is forbidden; the plan names it after insulin + glucose, so it is allowed."""
    patient = {
        "labs": [{"name": "potassium", "value": 6.8, "unit": "mmol/L"}],
        "note": "ECG: peaked T waves.",
    }
    plan = reference_plan(patient)
    assert plan.actions == ("insulin", "glucose", "cardiac monitoring", "IV calcium")
    assert plan.escalation_reasons == ("severe hyperkalaemia (K+ >= 6.5 mmol/L): risk of arrhythmia",)


def test_no_rule_applies() -> None:
    assert reference_plan({"conditions": ["chest pain"]}) == reference_plan({})
    assert reference_plan({}).actions == () and not reference_plan({}).escalation


RULES_ALL_FORBIDDEN = b"""
version: "test"
rules:
  - id: only_forbidden
    title: every alternative forbidden
    condition: [gout]
    expected_actions:
      - any_of:
          - {action: colchicine}
    forbidden_actions:
      - {action: colchicine, reason: "test"}
    source: test
    class: I
    level: A
"""


def test_a_rule_file_with_no_allowed_alternative_raises() -> None:
    rules = parse_rules(RULES_ALL_FORBIDDEN, "test.yaml")
    with pytest.raises(ValueError, match="every alternative of 'colchicine' is forbidden"):
        reference_plan({"conditions": ["gout"]}, rules)
