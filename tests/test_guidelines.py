"""Tier 3: the guideline rule engine and the ``guideline_adherence`` scorer.

Every rule has a patient it applies to, a passing recommendation, a failing one, and (where the rule has a
context) a patient whose missing data makes it not evaluable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pytest

from clineval.cds.rules.engine import (
    RuleResult,
    applicable_rules,
    curb65,
    evaluate_rules,
    lab_value,
    load_rules,
    parse_rules,
)
from clineval.cds.rules.guidelines import GuidelineAdherenceScorer, recommendation_sections
from clineval.core import Case, CaseInput, RecommendedAction, ScoringContext, StructuredOutput, SystemOutput
from clineval.core.errors import DataFileError, SuiteError
from clineval.scoring.registry import SCORERS


def lab(name: str, value: float, unit: str) -> dict[str, Any]:
    return {"name": name, "value": value, "unit": unit, "flag": "H"}


def pt(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "age": 60,
        "sex": "female",
        "conditions": [],
        "medications": [],
        "allergies": [],
        "labs": [],
        "vitals": {"hr": 90, "sbp": 120, "dbp": 75, "rr": 18, "spo2": 96, "temp": 37.0},
        "ef": None,
        "scores": {},
        "cxr": [],
        "note": "",
    }
    base.update(kw)
    return base


@dataclass
class RuleCase:
    patient: dict[str, Any]
    passing: dict[str, list[str]]
    failing: dict[str, list[str]]
    missing: dict[str, Any] | None = None  # a patient whose missing data makes the rule not evaluable
    absent: dict[str, Any] = field(default_factory=lambda: pt(conditions=["osteoarthritis"]))


def acts(*items: str, escalate: tuple[str, ...] = ()) -> dict[str, list[str]]:
    return {"recommended_actions": list(items), "when_to_escalate": list(escalate)}


HF_CONGESTED = pt(
    conditions=["acute decompensated heart failure"],
    labs=[lab("BNP", 900, "pg/mL")],
    cxr=["pulmonary edema"],
    ef=55,
)
CAP = ["community-acquired pneumonia"]

RULE_CASES: dict[str, RuleCase] = {
    "chf_loop_diuretic": RuleCase(
        HF_CONGESTED,
        acts("IV furosemide 40 mg twice daily"),
        acts("Start bisoprolol 1.25 mg"),
        missing={**HF_CONGESTED, "labs": []},
    ),
    "hfref_gdmt": RuleCase(
        pt(conditions=["HFrEF"], ef=30),
        acts(
            "Start ramipril 1.25 mg daily",
            "Bisoprolol 1.25 mg daily",
            "Spironolactone 25 mg daily",
            "Dapagliflozin 10 mg daily",
        ),
        acts("Ramipril 1.25 mg daily", "Avoid beta-blockers until euvolaemic"),
        missing=pt(conditions=["HFrEF"], ef=None),
    ),
    "cap_curb65_low": RuleCase(
        pt(age=40, conditions=CAP, labs=[lab("urea", 5.0, "mmol/L")]),
        acts("Oral amoxicillin 500 mg three times daily for 5 days"),
        acts("Chest physiotherapy", "IV antibiotics"),
        missing=pt(age=40, conditions=CAP),  # no urea/BUN: CURB-65 cannot be computed
    ),
    "cap_curb65_moderate": RuleCase(
        pt(conditions=CAP, scores={"curb65": 2}),
        acts("Amoxicillin 1 g three times daily", "Clarithromycin 500 mg twice daily"),
        acts("IV antibiotics"),  # generic: names no NICE agent
        missing=pt(conditions=CAP, vitals={}),
    ),
    "cap_curb65_severe": RuleCase(
        pt(
            age=80,
            conditions=[*CAP, "acute confusion"],
            labs=[lab("BUN", 40, "mg/dL")],
            vitals={"rr": 32, "sbp": 85, "dbp": 50},
        ),
        acts(
            "IV co-amoxiclav 1.2 g three times daily",
            "Clarithromycin 500 mg IV twice daily",
            escalate=("Critical care review now",),
        ),
        acts("Oral doxycycline 200 mg"),
        missing=pt(age=None, conditions=CAP, labs=[lab("urea", 12, "mmol/L")]),
    ),
    "pe_high_risk": RuleCase(
        pt(conditions=["pulmonary embolism"], vitals={"sbp": 78, "dbp": 45, "hr": 130}),
        acts(
            "Unfractionated heparin bolus then infusion", escalate=("Systemic thrombolysis with alteplase",)
        ),
        acts("Apixaban 10 mg twice daily"),
        missing=pt(conditions=["pulmonary embolism"], vitals={}),
    ),
    "pe_stable": RuleCase(
        pt(conditions=["pulmonary embolism"]),
        acts("Apixaban 10 mg twice daily for 7 days", "Calculate sPESI and assess RV function by echo"),
        acts("Apixaban 10 mg twice daily for 7 days"),
        missing=pt(conditions=["pulmonary embolism"], vitals={"hr": 100}),
    ),
    "copd_exacerbation_acute": RuleCase(
        pt(conditions=["acute exacerbation of COPD"]),
        acts("Nebulised salbutamol 5 mg", "Prednisolone 30 mg daily for 5 days"),
        acts("Nebulised salbutamol 5 mg", "Inhaled corticosteroid"),
        absent=pt(conditions=["COPD"]),  # stable COPD: no exacerbation
    ),
    "copd_frequent_exacerbator": RuleCase(
        pt(conditions=["COPD"], scores={"exacerbations_past_year": 3}),
        acts("Start a LAMA/LABA inhaler (tiotropium/olodaterol)"),
        acts("Continue short-acting bronchodilator as needed"),
        missing=pt(conditions=["COPD"]),
    ),
    "stemi_cath_lab": RuleCase(
        pt(conditions=["inferior STEMI"]),
        acts("Aspirin 300 mg", escalate=("Activate the cath lab for primary PCI now",)),
        acts("Aspirin 300 mg", "Admit to the cardiology ward"),
        absent=pt(conditions=["NSTEMI"]),
    ),
    "pleural_effusion_large": RuleCase(
        pt(conditions=["pleural effusion"], cxr=["large right pleural effusion"]),
        acts("Therapeutic thoracentesis"),
        acts("Repeat chest X-ray in 6 weeks"),
        absent=pt(conditions=["pleural effusion"], cxr=["small right pleural effusion"]),
    ),
    "fleischner_nodule_followup": RuleCase(
        pt(conditions=["incidental pulmonary nodule"], measurements={"nodule_size_mm": 7}),
        acts("Follow-up chest CT at 6-12 months"),
        acts("No follow-up CT needed", "Reassure"),
        missing=pt(conditions=["incidental pulmonary nodule"]),
    ),
    "troponin_chest_pain_acs": RuleCase(
        pt(conditions=["chest pain"], labs=[lab("troponin I", 0.05, "ng/mL")]),
        acts("Start the ACS pathway with an aspirin loading dose"),
        acts("Discharge with analgesia"),
        missing=pt(conditions=["chest pain"]),
    ),
    "hyperkalaemia_severe": RuleCase(
        pt(labs=[lab("K+", 7.0, "mEq/L")]),
        acts("IV calcium gluconate 10% 30 mL", "Insulin-glucose infusion", "Continuous cardiac monitoring"),
        acts("Calcium gluconate 10 mL IV"),
        missing=pt(labs=[]),
        absent=pt(labs=[lab("potassium", 5.9, "mmol/L")]),
    ),
}


def result(rule_id: str, patient: dict[str, Any], sections: dict[str, list[str]]) -> RuleResult:
    return next(r for r in evaluate_rules(patient, sections) if r.rule_id == rule_id)


def test_every_rule_has_cases() -> None:
    ids = {r.id for r in load_rules().rules}
    assert ids == set(RULE_CASES)
    assert len(ids) >= 12


@pytest.mark.parametrize("rule_id", sorted(RULE_CASES))
def test_rule_passing_recommendation(rule_id: str) -> None:
    rc = RULE_CASES[rule_id]
    r = result(rule_id, rc.patient, rc.passing)
    assert r.applicable is True, r.reason
    assert r.adherent is True, r
    assert not r.missing
    assert all(f["matched_text"] for f in r.found)


@pytest.mark.parametrize("rule_id", sorted(RULE_CASES))
def test_rule_failing_recommendation(rule_id: str) -> None:
    rc = RULE_CASES[rule_id]
    r = result(rule_id, rc.patient, rc.failing)
    assert r.applicable is True
    assert r.adherent is False
    assert r.missing


@pytest.mark.parametrize("rule_id", sorted(k for k, v in RULE_CASES.items() if v.missing is not None))
def test_rule_not_evaluable_when_data_missing(rule_id: str) -> None:
    rc = RULE_CASES[rule_id]
    assert rc.missing is not None
    r = result(rule_id, rc.missing, rc.passing)
    assert r.applicable is None, r.reason
    assert r.adherent is None  # never a pass


@pytest.mark.parametrize("rule_id", sorted(RULE_CASES))
def test_rule_not_applicable_to_other_patients(rule_id: str) -> None:
    r = result(rule_id, RULE_CASES[rule_id].absent, RULE_CASES[rule_id].passing)
    assert r.applicable is False
    assert r.adherent is None


def test_every_rule_cites_a_source_and_class() -> None:
    for rule in load_rules().rules:
        assert rule.source and rule.class_ and rule.level
        assert rule.expected_actions


def test_rules_versioned_and_hashed() -> None:
    rules = load_rules()
    assert rules.version == "2.2.0"
    assert rules.sha256.startswith("sha256:") and len(rules.sha256) == 71


def test_bad_rule_file_is_a_readable_error(tmp_path: Any) -> None:
    with pytest.raises(DataFileError, match="rules"):
        parse_rules(b"version: 1\nrules: [{id: x}]\n", "bad.yaml")
    with pytest.raises(DataFileError):
        parse_rules(b"version: [\n", "broken.yaml")
    with pytest.raises(DataFileError, match="cannot read"):
        load_rules(str(tmp_path / "nope.yaml"))


def test_potassium_units_and_threshold() -> None:
    rules = load_rules()
    assert lab_value(pt(labs=[lab("K", 6.8, "mEq/L")]), "potassium", rules)[0] == 6.8
    assert lab_value(pt(labs=[lab("K", 6.8, "mg/dL")]), "potassium", rules)[0] is None  # not convertible
    exactly = result("hyperkalaemia_severe", pt(labs=[lab("potassium", 6.5, "mmol/L")]), acts())
    assert exactly.applicable is True  # UKKA 2020: severe is K+ >= 6.5
    below = result("hyperkalaemia_severe", pt(labs=[lab("potassium", 6.4, "mmol/L")]), acts())
    assert below.applicable is False
    unconvertible = result("hyperkalaemia_severe", pt(labs=[lab("potassium", 7.0, "g/L")]), acts())
    assert unconvertible.applicable is None


def test_repeat_lab_supersedes_earlier_value() -> None:
    patient = pt(labs=[lab("potassium", 7.1, "mmol/L"), lab("potassium", 4.6, "mmol/L")])
    assert result("hyperkalaemia_severe", patient, acts()).applicable is False


def test_ef_borderline() -> None:
    at = result("hfref_gdmt", pt(conditions=["heart failure"], ef=40.0), acts())
    above = result("hfref_gdmt", pt(conditions=["heart failure"], ef=41.0), acts())
    assert at.applicable is True and above.applicable is False


def test_curb65_computed_from_patient_data() -> None:
    p = pt(
        age=70,
        conditions=["pneumonia", "delirium"],
        labs=[lab("urea", 7.5, "mmol/L")],
        vitals={"rr": 30, "sbp": 95, "dbp": 60},
    )
    assert curb65(p) == 5
    assert curb65(pt(age=30, labs=[lab("BUN", 19, "mg/dL")])) == 0  # BUN must be > 19
    assert curb65(pt(age=30, labs=[lab("BUN", 20, "mg/dL")])) == 1
    assert curb65(pt(age=30)) is None
    assert curb65(pt(labs=[lab("urea", 5, "mmol/L")], vitals={"rr": 20})) is None  # no blood pressure
    assert curb65(pt(labs=[lab("urea", 5, "mmol/L")], vitals={"rr": 20, "sbp": 80})) == 1


def test_negated_and_narrower_actions_do_not_count() -> None:
    patient = RULE_CASES["hfref_gdmt"].patient
    r = result("hfref_gdmt", patient, acts("Do not start an ACE inhibitor", "Hold bisoprolol"))
    assert r.missing == [
        "ACE inhibitor / ARB / ARNI",
        "evidence-based beta-blocker",
        "mineralocorticoid receptor antagonist",
        "SGLT2 inhibitor",
    ]
    r = result(
        "hfref_gdmt", patient, acts("Hold diuretics; start ramipril", "bisoprolol", "eplerenone", "Jardiance")
    )
    assert r.adherent is True
    copd = RULE_CASES["copd_frequent_exacerbator"].patient
    assert result("copd_frequent_exacerbator", copd, acts("bronchodilator")).adherent is False


def test_escalation_section_only_for_escalation_rules() -> None:
    pe = RULE_CASES["pe_stable"]
    only_escalation = acts(escalate=("Apixaban and sPESI",))
    assert result("pe_stable", pe.patient, only_escalation).adherent is False
    stemi = RULE_CASES["stemi_cath_lab"]
    found = result("stemi_cath_lab", stemi.patient, stemi.passing).found
    assert found[0]["section"] == "when_to_escalate"


def test_applicable_rules_for_reference() -> None:
    ids = [r.id for r in applicable_rules(HF_CONGESTED)]
    assert ids == ["chf_loop_diuretic"]


# ------------------------------------------------------------------ scorer


def ctx(patient: dict[str, Any] | None, output: SystemOutput) -> ScoringContext:
    data = {"patient": patient} if patient is not None else {}
    case = Case(id="c1", input=CaseInput(question="next steps?", data=data), metadata={"condition": "chf"})
    return ScoringContext(case=case, output=output)


def structured(*actions: str, escalate: list[str] | None = None) -> SystemOutput:
    return SystemOutput(
        structured=StructuredOutput(
            recommended_actions=[RecommendedAction(action=a) for a in actions], when_to_escalate=escalate
        )
    )


def test_scorer_values_and_labels() -> None:
    scorer = SCORERS.get("guideline_adherence")({})
    assert getattr(scorer, "tier", None) == 3
    good = scorer(ctx(HF_CONGESTED, structured("IV furosemide 40 mg")))
    assert (good.value, good.label) == (1.0, "adherent")
    rows = good.breakdown["rules"]
    assert rows[0]["rule_id"] == "chf_loop_diuretic" and rows[0]["found"][0]["matched_text"]
    assert good.breakdown["rules_sha256"] == load_rules().sha256
    bad = scorer(ctx(HF_CONGESTED, structured("Bisoprolol")))
    assert (bad.value, bad.label) == (0.0, "non_adherent") and "loop diuretic" in (bad.explanation or "")
    none = scorer(ctx(pt(conditions=["osteoarthritis"]), structured("Paracetamol")))
    assert math.isnan(none.value) and none.label == "not_applicable"
    missing = scorer(ctx({**HF_CONGESTED, "labs": []}, structured("Nothing")))
    assert math.isnan(missing.value) and "chf_loop_diuretic" in missing.breakdown["not_evaluable_rules"]
    failed = scorer(ctx(HF_CONGESTED, SystemOutput.failure("timeout", "too slow")))
    assert (failed.value, failed.label) == (0.0, "failed")
    no_patient = scorer(ctx(None, structured("x")))
    assert math.isnan(no_patient.value) and no_patient.label == "no_patient"


def test_text_output_falls_back_to_lines() -> None:
    out = SystemOutput(text="Plan:\n- IV furosemide 40 mg\n- daily weights")
    assert "IV furosemide 40 mg" in recommendation_sections(out)["recommended_actions"]
    assert GuidelineAdherenceScorer()(ctx(HF_CONGESTED, out)).value == 1.0


def test_scorer_metrics_overall_and_per_rule() -> None:
    scorer = GuidelineAdherenceScorer()
    scores = [
        scorer(ctx(HF_CONGESTED, structured("IV furosemide"))),
        scorer(ctx(HF_CONGESTED, structured("bisoprolol"))),
        scorer(
            ctx(
                RULE_CASES["pe_stable"].patient,
                structured(*RULE_CASES["pe_stable"].passing["recommended_actions"]),
            )
        ),
        scorer(ctx(pt(conditions=["osteoarthritis"]), structured("rest"))),
    ]
    values: dict[str, Any] = {}
    for metric in scorer.metrics:
        values.update(metric.compute(scores))
    assert values["guideline_adherence"] == pytest.approx(2 / 3)
    lo, hi = values["guideline_adherence_ci"]
    assert 0 < lo < 2 / 3 < hi < 1
    assert values["adherence_chf_loop_diuretic"] == 0.5
    assert values["n_applicable_chf_loop_diuretic"] == 2
    assert values["adherence_pe_stable"] == 1.0
    assert math.isnan(values["adherence_stemi_cath_lab"])


def test_scorer_rejects_unknown_options() -> None:
    with pytest.raises(Exception, match="extra"):
        SCORERS.get("guideline_adherence")({"treshold": 0.5})


# ------------------------------------------------------------------ v2 engine features


def test_jurisdiction_option_selects_regimens() -> None:
    patient = pt(conditions=CAP, scores={"curb65": 2})
    levofloxacin = structured("Levofloxacin 750 mg daily")  # IDSA/ATS non-severe inpatient monotherapy
    nice = SCORERS.get("guideline_adherence")({})
    idsa = SCORERS.get("guideline_adherence")({"jurisdiction": "idsa_ats"})
    assert nice(ctx(patient, levofloxacin)).value == 0.0  # NICE moderate: amoxicillin (doxy/clari)
    scored = idsa(ctx(patient, levofloxacin))
    assert scored.value == 1.0 and scored.breakdown["jurisdiction"] == "idsa_ats"
    assert nice(ctx(patient, structured("Amoxicillin 500 mg TDS"))).value == 1.0
    assert idsa(ctx(patient, structured("Amoxicillin 500 mg TDS"))).value == 0.0
    with pytest.raises(SuiteError, match="unknown jurisdiction 'us'"):
        SCORERS.get("guideline_adherence")({"jurisdiction": "us"})


def test_forbidden_action_is_reported_and_fails_the_case() -> None:
    patient = pt(conditions=CAP, scores={"curb65": 0}, allergies=["penicillin (anaphylaxis)"])
    score = GuidelineAdherenceScorer()(ctx(patient, structured("Oral amoxicillin 500 mg TDS")))
    assert (score.value, score.label) == (0.0, "non_adherent")
    row = score.breakdown["rules"][0]
    assert row["missing"] == [] and row["forbidden"][0]["forbidden"] == "a penicillin"
    assert "forbidden actions recommended: cap_curb65_low: a penicillin" in (score.explanation or "")


V2_RULES = b"""
version: "2.0.0"
jurisdictions: {default: a, options: {a: first, b: second}}
terms: {drug_x: [xamycin, xcillin]}
rules:
  - id: r
    title: t
    condition: [pneumonia]
    expected_actions:
      - {action: x, synonyms: ["@drug_x"], jurisdictions: [b]}
      - {action: y}
    source: s
    class: I
    level: A
"""


def test_v2_rule_file_terms_and_jurisdictions() -> None:
    rules = parse_rules(V2_RULES, "v2.yaml")
    assert rules.rules[0].expected_actions[0].synonyms == ["xamycin", "xcillin"]
    assert rules.jurisdiction(None) == "a"
    patient = pt(conditions=["pneumonia"])
    assert evaluate_rules(patient, acts("y"), rules)[0].adherent is True  # x is for jurisdiction b only
    assert evaluate_rules(patient, acts("y"), rules, jurisdiction="b")[0].missing == ["x"]
    assert evaluate_rules(patient, acts("y", "xcillin"), rules, jurisdiction="b")[0].adherent is True


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (V2_RULES.replace(b'"@drug_x"', b'"@drug_z"'), "unknown term list 'drug_z'"),
        (V2_RULES.replace(b"jurisdictions: [b]", b"jurisdictions: [c]"), "unknown jurisdictions"),
        (V2_RULES.replace(b"default: a", b"default: z"), "default jurisdiction 'z'"),
        (V2_RULES.replace(b"terms: {drug_x: [xamycin, xcillin]}", b"terms: [1]"), "'terms' must map"),
    ],
)
def test_malformed_v2_rule_file_is_one_line_error(text: bytes, error: str) -> None:
    with pytest.raises(DataFileError, match=error) as info:
        parse_rules(text, "bad.yaml")
    assert "\n" not in str(info.value) and str(info.value).startswith("bad.yaml")
