"""One definition per clinical threshold: tier 1 (red flags) and tier 3 (guideline rules) share numbers."""

from __future__ import annotations

from importlib import resources
from typing import Any

import pytest

from clineval.core.clinical_thresholds import THRESHOLDS, resolve_threshold, threshold
from clineval.core.errors import DataFileError, UserInputError
from clineval.guard import DEFAULT_RED_FLAGS, RedFlagSet
from clineval.scoring.rule_engine import load_rules
from clineval.scoring.rule_model import AnyOfContext, parse_rules


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
    text = resources.files("clineval.guard").joinpath("data", "red_flags.yaml").read_text("utf-8")
    return {name for name in THRESHOLDS if f"threshold: {name}" in text}


# tier 3 keeps "> 6.5" for severe hyperkalaemia until the golden set is regenerated (item 4): with
# ">=" gs1-adversarial-05 (K+ exactly 6.5, labelled "no escalation") would change its expected rules.
KNOWN_OP_DIFFERENCES = {"potassium_severe": ">"}


def test_tier1_and_tier3_share_every_threshold() -> None:
    tier3 = {**_tier3("troponin_chest_pain_acs"), **_tier3("hyperkalaemia_severe")}
    assert set(tier3) == {"troponin_hs_ctnt_url", "potassium_severe"}
    shared = set(tier3) & _tier1_names()
    assert shared == {"troponin_hs_ctnt_url", "potassium_severe"}
    for name in shared:
        op, value, unit = tier3[name]
        assert value == THRESHOLDS[name].value and unit == THRESHOLDS[name].unit, name
        assert op == KNOWN_OP_DIFFERENCES.get(name, THRESHOLDS[name].op), name
    # the numbers, by hand: hs-cTnT 14 ng/L; K+ 6.5 mmol/L
    assert tier3["troponin_hs_ctnt_url"][1] == 14 and tier3["potassium_severe"][1] == 6.5
    # and tier 1 fires at the same numbers
    k = {"labs": [{"name": "K+", "value": 6.5, "unit": "mmol/L"}]}
    assert "severe_hyperkalaemia" in {h.id for h in DEFAULT_RED_FLAGS.detect(k)}
    for value, fires in ((14, False), (15, True)):
        patient = {"labs": [{"name": "hs-cTnT", "value": value, "unit": "ng/L"}], "note": "chest pain"}
        assert ("acs_troponin_chest_pain" in {h.id for h in DEFAULT_RED_FLAGS.detect(patient)}) is fires
