"""One definition per clinical threshold: tier 1 (red flags) and tier 3 (guideline rules) share numbers."""

from __future__ import annotations

from importlib import resources
from typing import Any

import pytest

from clineval.cds.clinical_thresholds import THRESHOLDS, resolve_threshold, threshold
from clineval.cds.guard import DEFAULT_RED_FLAGS, RedFlagSet
from clineval.cds.rules.engine import applicable_rules, load_rules
from clineval.cds.rules.model import AnyOfContext, parse_rules
from clineval.core.errors import DataFileError, UserInputError


def test_values_from_the_guidelines() -> None:
    # worked out from the sources, not from the module
    k = THRESHOLDS["potassium_severe"]
    assert (k.op, k.value, k.unit) == (">=", 6.5, "mmol/L")  # UKKA 2020
    assert (THRESHOLDS["ph_niv"].op, THRESHOLDS["ph_niv"].value) == ("<", 7.35)  # BTS/ICS 2016
    assert (THRESHOLDS["paco2_niv"].value, THRESHOLDS["paco2_niv"].unit) == (6.5, "kPa")
    assert THRESHOLDS["ph_critical_care"].value == 7.25
    assert (THRESHOLDS["spo2_low"].value, THRESHOLDS["spo2_low_co2_risk"].value) == (92, 88)  # BTS 2017
    # troponin: one 99th-percentile URL per assay type
    tnt = THRESHOLDS["troponin_hs_ctnt_url"]
    assert (tnt.value, tnt.unit) == (14, "ng/L")
    assert THRESHOLDS["troponin_hs_ctni_url"].value == 26
    assert THRESHOLDS["troponin_ctni_url"].value == 40  # 0.04 ng/mL
    assert all(t.source for t in THRESHOLDS.values())


def test_unknown_threshold_is_a_one_line_user_error() -> None:
    with pytest.raises(UserInputError) as err:
        threshold("potassium_scary", source="flags.yaml")
    assert "\n" not in str(err.value) and "potassium_scary" in str(err.value)
    with pytest.raises(ValueError):
        resolve_threshold({"lab": "potassium", "threshold": "nope"})
    with pytest.raises(ValueError):  # a value contradicting the named threshold
        resolve_threshold({"lab": "potassium", "threshold": "potassium_severe", "value": 6.0})
    assert resolve_threshold({"lab": "k", "threshold": "potassium_severe"}) == {
        "lab": "k", "threshold": "potassium_severe", "value": 6.5, "op": ">=", "unit": "mmol/L"
    }  # fmt: skip


def test_bad_flag_file_is_a_one_line_error() -> None:
    bad: dict[str, Any] = {"flags": [{"id": "x", "label": "x", "source": "s", "escalate_terms": ["ICU"],
                                      "all": [{"lab": {"concept": "k", "threshold": "nope"}}]}]}  # fmt: skip
    with pytest.raises(DataFileError):
        RedFlagSet(bad, origin="flags.yaml")
    with pytest.raises(DataFileError):
        RedFlagSet({"flags": [{"id": "x"}]}, origin="flags.yaml")  # missing keys
    with pytest.raises(DataFileError):
        RedFlagSet({"flags": [{"id": "x", "label": "x", "source": "s", "escalate_terms": [],
                               "all": [{"frobnicate": 1}]}]})  # fmt: skip


def test_bad_rule_threshold_name_is_a_file_error() -> None:
    text = b"""version: "x"
labs: {potassium: {aliases: [k], unit: mmol/L}}
rules:
  - id: r
    title: t
    condition: []
    context: [{lab: potassium, threshold: potassium_scary}]
    expected_actions: [{action: a}]
    escalation: false
    source: s
    class: I
    level: A
"""
    with pytest.raises(DataFileError) as err:
        parse_rules(text, "rules.yaml")
    assert "potassium_scary" in str(err.value)


def _tier3(rule_id: str) -> dict[str, tuple[str, float, str | None]]:
    out: dict[str, tuple[str, float, str | None]] = {}
    for group in load_rules().rule(rule_id).context:
        for item in group.any_of if isinstance(group, AnyOfContext) else [group]:
            if getattr(item, "threshold", None):
                out[item.threshold] = (item.op, float(item.value or 0), item.unit)
    return out


def _tier1_names() -> set[str]:
    """The thresholds the packaged red-flag file names."""
    text = resources.files("clineval.cds.guard").joinpath("data", "red_flags.yaml").read_text("utf-8")
    return {name for name in THRESHOLDS if f"threshold: {name}" in text}


def test_tier1_and_tier3_share_every_threshold() -> None:
    tier3 = {**_tier3("troponin_chest_pain_acs"), **_tier3("hyperkalaemia_severe")}
    per_assay = {"troponin_hs_ctnt_url", "troponin_hs_ctni_url", "troponin_ctni_url"}
    assert set(tier3) == {*per_assay, "potassium_severe"}
    shared = set(tier3) & _tier1_names()
    assert shared == set(tier3)
    for name in shared:  # same number, unit and op in both files: no override
        op, value, unit = tier3[name]
        assert (op, value, unit) == (THRESHOLDS[name].op, THRESHOLDS[name].value, THRESHOLDS[name].unit), name
    # the numbers, by hand: hs-cTnT > 14, hs-cTnI > 26, cTnI > 40 ng/L; K+ >= 6.5 mmol/L
    assert {n: tier3[n][:2] for n in tier3} == {
        "troponin_hs_ctnt_url": (">", 14),
        "troponin_hs_ctni_url": (">", 26),
        "troponin_ctni_url": (">", 40),
        "potassium_severe": (">=", 6.5),
    }


def _row(name: str, value: float, unit: str, flag: str = "", **extra: Any) -> dict[str, Any]:
    return {"name": name, "value": value, "unit": unit, "flag": flag, **extra}


HAEMOLYSED = _row("K+", 7.1, "mmol/L", "H", haemolysed=True)
# (labs, tier 1 flag, tier 3 rule, expected decision): worked out by hand from the thresholds above.
AGREEMENT = [
    ([_row("hs-cTnT", 14, "ng/L")], "acs_troponin_chest_pain", "troponin_chest_pain_acs", False),  # not > 14
    ([_row("hs-troponin T", 15, "ng/L", "H")], "acs_troponin_chest_pain", "troponin_chest_pain_acs", True),
    ([_row("hs-cTnI", 20, "ng/L")], "acs_troponin_chest_pain", "troponin_chest_pain_acs", False),  # < 26
    ([_row("hs-cTnI", 30, "ng/L", "H")], "acs_troponin_chest_pain", "troponin_chest_pain_acs", True),
    ([_row("troponin I", 0.03, "ng/mL")], "acs_troponin_chest_pain", "troponin_chest_pain_acs", False),  # 30
    ([_row("troponin I", 0.05, "ng/mL", "H")], "acs_troponin_chest_pain", "troponin_chest_pain_acs", True),
    ([_row("troponin", 80, "ng/L", "H")], "acs_troponin_chest_pain", "troponin_chest_pain_acs", True),  # flag
    ([_row("troponin", 80, "ng/L", "N")], "acs_troponin_chest_pain", "troponin_chest_pain_acs", False),
    ([_row("troponin", 80, "ng/L")], "acs_troponin_chest_pain", "troponin_chest_pain_acs", False),  # no flag
    (  # the assay named in its own field: hs-cTnT 20 > 14
        [_row("troponin", 20, "ng/L", assay="Roche Elecsys hs-cTnT")],
        "acs_troponin_chest_pain",
        "troponin_chest_pain_acs",
        True,
    ),
    ([_row("potassium", 6.4, "mmol/L", "H")], "severe_hyperkalaemia", "hyperkalaemia_severe", False),
    ([_row("potassium", 6.5, "mmol/L", "HH")], "severe_hyperkalaemia", "hyperkalaemia_severe", True),  # >=
    ([_row("K+", 7.5, "mmol/L", specimen="urine")], "severe_hyperkalaemia", "hyperkalaemia_severe", False),
    (
        [_row("potassium", 7.5, "mmol/L", sample="drain fluid")],
        "severe_hyperkalaemia",
        "hyperkalaemia_severe",
        False,
    ),
    (
        [HAEMOLYSED, _row("K+", 4.6, "mmol/L")],
        "severe_hyperkalaemia",
        "hyperkalaemia_severe",
        False,
    ),  # repeat
    (  # by collection time the haemolysed 7.1 is the later sample
        [{**HAEMOLYSED, "time": "2024-05-01T10:00"}, _row("K+", 4.6, "mmol/L", time="2024-05-01T08:00")],
        "severe_hyperkalaemia",
        "hyperkalaemia_severe",
        True,
    ),
]


@pytest.mark.parametrize(("labs", "flag", "rule", "expected"), AGREEMENT)
def test_tier1_and_tier3_reach_the_same_decision(
    labs: list[dict[str, Any]], flag: str, rule: str, expected: bool
) -> None:
    patient = {"conditions": ["chest pain"], "labs": labs}
    assert (flag in {h.id for h in DEFAULT_RED_FLAGS.detect(patient)}) is expected
    assert (rule in {r.id for r in applicable_rules(patient)}) is expected
