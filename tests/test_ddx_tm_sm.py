"""TM-SM requires a treatment, not a mention (issue 22): a missed ground truth is TM-SM when a triage /
symptom-management turn gives an action that the cited action map says treats it or its key findings.
Expected values by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from clineval.core.errors import DataFileError
from clineval.core.output import DifferentialItem as D
from clineval.core.output import TranscriptTurn as T
from clineval.ddx.classes import DdxDecision
from clineval.ddx.scorer import classify_differential, ddx_scores
from clineval.ddx.treatment import given_actions, load_action_map
from clineval.ddx.vitals import numeric_findings

CASE = (
    "A 2-year-old boy has had vomiting and diarrhoea for 3 days. He is lethargic with dry mucous membranes; "
    "his pulse is 160/min and blood pressure is 70/40 mm Hg."
)
GT = ["viral gastroenteritis", "dehydration"]


def _dehydration(text: str, phase: str = "triage", case: str = CASE) -> DdxDecision:
    c = classify_differential(
        GT,
        [D(diagnosis="Viral gastroenteritis")],
        [T(round=1, agent="a", phase=phase, text=text)],
        case_text=case,
    )
    return next(d for d in c.decisions if d.ground_truth == "dehydration")


def test_the_guide_s_example_gave_fluids_is_tm_sm() -> None:
    d = _dehydration("Started IV normal saline bolus 20 mL/kg.")
    assert d.cls == "TM-SM"
    ev = d.evidence[0]
    assert (ev.phase, ev.trigger) == ("triage", "normal saline (iv_fluids) treats 'dehydration'")
    c = classify_differential(
        GT,
        [D(diagnosis="Viral gastroenteritis")],
        [T(round=1, agent="a", phase="triage", text="Started IV normal saline bolus 20 mL/kg.")],
        case_text=CASE,
    )
    assert ddx_scores(c)["system_safety_coverage"] == pytest.approx(1.0)  # (TP 1 + TM-SM 1) / 2


@pytest.mark.parametrize(
    "text",
    [
        "Noted hypotension, tachycardia, dry mucous membranes.",  # a mention of the findings
        "Avoid IV fluids for now; encourage oral intake.",  # withheld
        "IV fluids are contraindicated.",
        "Consider IV fluids.",  # only considered
        "If he becomes drowsy, give a fluid bolus.",  # under a condition
        "Normal saline bolus if needed.",
        "He was started on normal saline at the outside hospital.",  # the history, not an order
    ],
)
def test_a_mention_a_withheld_or_a_considered_action_is_not_tm_sm(text: str) -> None:
    d = _dehydration(text)
    assert d.cls == "FN" and d.explanation == "not in the differential"


def test_only_the_triage_and_symptom_management_turns_count() -> None:
    assert _dehydration("Start IV fluids.", phase="debate").cls == "FN"
    assert _dehydration("Start IV fluids.", phase="symptom_management").cls == "TM-SM"


def test_the_action_must_be_indicated_by_the_case() -> None:
    well = "A 2-year-old boy with diarrhoea. Pulse is 96/min, blood pressure 100/60 mm Hg; no hypotension."
    assert _dehydration("Start IV fluids.", case=well).cls == "FN"
    # the same order in the guide's case (pulse 160/min: tachycardia; 70/40 mm Hg: hypotension)
    assert _dehydration("Start IV fluids.").cls == "TM-SM"


def _pneumonia(findings: list[str], text: str) -> str:
    c = classify_differential(
        ["bronchiolitis obliterans"],
        [D(diagnosis="Asthma")],
        [T(round=2, agent="a", phase="symptom_management", text=text)],
        findings={"bronchiolitis obliterans": findings},
    )
    return next(d.cls for d in c.decisions if d.ground_truth == "bronchiolitis obliterans")


def test_key_findings_at_least_half_of_the_treatable_ones_treated() -> None:
    # treatable key findings: fever (antipyretics) and hypoxemia (oxygen); the cough no row treats
    assert (
        _pneumonia(["fever of 39 C", "hypoxemia", "productive cough"], "Give supplemental oxygen.") == "TM-SM"
    )
    # 1 of 3 treatable (fever, hypoxemia, wheezing) is under half
    assert _pneumonia(["fever", "hypoxemia", "wheezing"], "Give supplemental oxygen.") == "FN"
    assert _pneumonia(["fever", "hypoxemia", "wheezing"], "Give oxygen and nebulised salbutamol.") == "TM-SM"
    # naming every key finding treats none of them
    assert _pneumonia(["fever", "hypoxemia", "wheezing"], "Fever, hypoxemia and wheezing noted.") == "FN"


def _one(gt: str, text: str, case: str) -> str:
    c = classify_differential([gt], [], [T(round=1, agent="a", phase="triage", text=text)], case_text=case)
    return c.decisions[0].cls


def test_a_condition_covers_its_own_name_and_a_compositional_condition_not_subtypes() -> None:
    shock = "Blood pressure is 75/40 mm Hg, pulse 120/min, cold peripheries after a myocardial infarction."
    assert (
        _one("cardiogenic shock", "Start an IV fluid bolus.", shock) == "FN"
    )  # fluids: hypovolaemic shock only
    assert _one("cardiogenic shock", "Start a norepinephrine infusion.", shock) == "TM-SM"
    low_k = "Muscle weakness on furosemide; potassium 2.9 mEq/L."
    assert _one("hypokalemia due to diuretic use", "Start oral potassium supplementation.", low_k) == "TM-SM"


def test_agents_are_matched_whole_and_abbreviations_as_written() -> None:
    rows = load_action_map().rows
    found = given_actions([T(round=1, agent="a", text="Give paracetamol or ibuprofen for the pain.")])
    assert "oral_rehydration" not in {rows[a.row].id for a in found}  # "ORS" is not the stem of "or"
    assert {rows[a.row].id for a in found} >= {"antipyretics", "analgesia"}
    ors = given_actions([T(round=1, agent="a", text="Give ORS 50 mL/kg over 4 hours.")])
    assert [rows[a.row].id for a in ors] == ["oral_rehydration"]
    measured = given_actions([T(round=1, agent="a", text="Monitor oxygen saturation; treat the cause.")])
    assert measured == []  # a measurement, not oxygen given


def test_numeric_findings_by_hand() -> None:
    text = (
        "Temperature is 38.9 °C (102 °F), pulse is 176/min, blood pressure is 80/50 mm Hg, oxygen saturation "
        "is 88%, glucose 45 mg/dL, potassium 6.8 mEq/L, hemoglobin 7.1 g/dL."
    )
    assert numeric_findings(text) == {
        "fever",
        "tachycardia",
        "hypotension",
        "low oxygen saturation",
        "hypoglycemia",
        "hyperkalemia",
        "anemia",
    }
    normal = "Temperature is 37 °C (98.6 °F), pulse is 80/min, blood pressure is 120/80 mm Hg, SpO2 98%."
    assert numeric_findings(normal) == frozenset()


def test_action_map_rows_are_cited_and_well_formed() -> None:
    amap = load_action_map()
    assert 50 <= len(amap.rows) <= 70
    assert len({r.id for r in amap.rows}) == len(amap.rows)
    for row in amap.rows:
        assert row.conditions or row.findings, row.id
        assert any(ch.isdigit() for ch in row.source), row.id  # a year / volume: a citable reference
    sources = " ".join(r.source for r in amap.rows)
    for cited in (
        "Surviving Sepsis Campaign",
        "BTS guideline for oxygen",
        "NICE NG143",
        "Hyperglycemic crises",
    ):
        assert cited in sources


def test_a_malformed_map_is_a_data_file_error(tmp_path: Path) -> None:
    bad = tmp_path / "map.yaml"
    bad.write_text(
        "version: 1\nrows:\n  - id: x\n    actions: [fluids]\n    source: short\n", encoding="utf-8"
    )
    with pytest.raises(DataFileError, match="invalid TM-SM action map"):
        load_action_map(bad)
