"""The four-tier design's own rule table as a selectable ruleset (issue 22 item 12).

``guideline_adherence: {ruleset: design_table}`` answers the design's yes/no question "did the
recommendation include the expected action?" row by row. Each of the 12 rows has a patient it applies to,
a recommendation that includes the row's action (adherent) and one that does not (non-adherent, with
the missing action named); outcomes decided by reading the row. Then where the design table and the
default v2 rules differ on purpose, and how the ruleset is selected (default unchanged).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from clineval.cds.rules.engine import evaluate_rules
from clineval.cds.rules.model import packaged_rules
from clineval.cds.rules.reference import reference_plan
from clineval.core import Case, CaseInput, ScoringContext, StructuredOutput, SystemOutput
from clineval.core.errors import SuiteError
from clineval.runs import run as api
from clineval.scoring.registry import SCORERS
from tests.test_guideline_probes import lab, pt

DESIGN = packaged_rules("design_table")

HF_WET = pt(
    conditions=["congestive heart failure"], labs=[lab("BNP", 850, "pg/mL")], cxr=["pulmonary oedema"]
)
HFREF = pt(conditions=["HFrEF"], ef=30)
CAP1 = pt(age=40, conditions=["community-acquired pneumonia"], scores={"curb65": 1})
CAP2 = pt(conditions=["community-acquired pneumonia"], scores={"curb65": 2})
CAP4 = pt(conditions=["community-acquired pneumonia"], scores={"curb65": 4})
PE_SHOCK = pt(conditions=["pulmonary embolism"], vitals={"sbp": 78, "dbp": 45, "hr": 130})
PE_POSTOP = {**PE_SHOCK, "events": [{"name": "hip replacement", "days_ago": 14}]}
PE_STABLE = pt(conditions=["pulmonary embolism"])
AECOPD = pt(conditions=["acute exacerbation of COPD"])
COPD_E = pt(conditions=["COPD"], scores={"exacerbations_past_year": 3})
STEMI = pt(conditions=["inferior STEMI"])
EFFUSION = pt(conditions=["pleural effusion"], cxr=["large right pleural effusion"])
NODULE = pt(age=62, conditions=["incidental pulmonary nodule"], measurements={"nodule_size_mm": 9})
CHEST = pt(conditions=["chest pain"], labs=[lab("hs-troponin T", 60, "ng/L")])
K7 = pt(conditions=["acute kidney injury"], labs=[lab("potassium", 7.1, "mmol/L")])

CAP_LOW = (
    "outpatient class (CURB-65 0-1): amoxicillin, doxycycline, a macrolide, a respiratory fluoroquinolone, "
    "or beta-lactam + macrolide/doxycycline"
)
CAP_MOD = (
    "non-severe inpatient class (CURB-65 2): beta-lactam + macrolide, a respiratory fluoroquinolone, or "
    "beta-lactam + doxycycline"
)
CAP_SEV = "severe class (CURB-65 >= 3): beta-lactam + macrolide, or beta-lactam + respiratory fluoroquinolone"
REPERFUSION = "surgical embolectomy or catheter-directed treatment (thrombolysis contraindicated)"
K_TREATMENT = "immediate treatment (IV calcium, insulin with glucose, salbutamol or dialysis)"

# row id -> (patient, recommendation that includes the action, one that does not, what is then missing)
ROWS: dict[str, tuple[dict[str, Any], list[str], list[str], list[str]]] = {
    "dt_chf_bnp_overload_loop_diuretic": (
        HF_WET,
        ["IV furosemide 40 mg"],
        ["Fluid restriction 1.5 L", "Daily weights"],
        ["loop diuretic"],
    ),
    "dt_hfref_acei_arb_beta_blocker": (
        HFREF,
        ["Ramipril 2.5 mg", "Bisoprolol 1.25 mg"],
        ["Ramipril 2.5 mg", "Spironolactone"],
        ["beta-blocker"],
    ),
    "dt_cap_curb65_antibiotic": (CAP1, ["Oral amoxicillin 1 g tds"], ["Paracetamol", "Fluids"], [CAP_LOW]),
    "dt_pe_unstable": (
        PE_SHOCK,
        ["Heparin bolus and infusion", "Alteplase 100 mg over 2 hours"],
        ["Heparin bolus and infusion", "Oxygen"],
        ["thrombolysis"],
    ),
    "dt_pe_stable": (
        PE_STABLE,
        ["Apixaban 10 mg bd", "sPESI"],
        ["Apixaban 10 mg bd"],
        ["risk stratification"],
    ),
    "dt_copd_exacerbation": (
        AECOPD,
        ["Salbutamol nebuliser", "Prednisolone 30 mg"],
        ["Salbutamol nebuliser"],
        ["systemic corticosteroid"],
    ),
    "dt_copd_frequent_exacerbations": (
        COPD_E,
        ["Start tiotropium"],
        ["Inhaler technique review"],
        ["long-acting bronchodilator"],
    ),
    "dt_stemi_cath_lab": (STEMI, ["Activate the cath lab"], ["Aspirin 300 mg"], ["cath lab"]),
    "dt_pleural_effusion_large": (
        EFFUSION,
        ["Consider diagnostic thoracentesis"],
        ["Repeat chest X-ray"],
        ["thoracentesis"],
    ),
    "dt_fleischner_nodule_followup": (
        NODULE,
        ["Follow-up CT in 3 months"],
        ["Reassure"],
        ["follow-up imaging"],
    ),
    "dt_troponin_chest_pain": (
        CHEST,
        ["Call the attending now"],
        ["Repeat troponin in 3 h"],
        ["emergent pathway or call attending/ED"],
    ),
    "dt_hyperkalaemia_critical": (
        K7,
        ["Calcium gluconate 10 ml 10% IV", "Continuous cardiac monitoring"],
        ["Calcium gluconate 10 ml 10% IV", "Repeat K+ in 2 h"],
        ["cardiac monitoring"],
    ),
}


def row_result(
    rule_id: str, patient: dict[str, Any], actions: list[str], escalate: list[str] | None = None
) -> Any:
    sections = {"recommended_actions": actions, "when_to_escalate": escalate or []}
    return next(r for r in evaluate_rules(patient, sections, DESIGN) if r.rule_id == rule_id)


def test_the_table_has_the_designs_twelve_rows() -> None:
    assert [r.id for r in DESIGN.rules] == list(ROWS)
    assert DESIGN.version == "design-table-1.0.0" and DESIGN.jurisdictions is None
    assert all(r.source.startswith("Four-tier evaluation design, tier 3 rule table: '") for r in DESIGN.rules)
    assert not any(r.forbidden_actions for r in DESIGN.rules)  # the design asks only "was it included?"


@pytest.mark.parametrize("rule_id", list(ROWS))
def test_row_includes_the_expected_action(rule_id: str) -> None:
    patient, good, _, _ = ROWS[rule_id]
    r = row_result(rule_id, patient, good)
    assert (r.applicable, r.adherent, r.missing) == (True, True, []), r.reason


@pytest.mark.parametrize("rule_id", list(ROWS))
def test_row_without_the_expected_action(rule_id: str) -> None:
    patient, _, bad, missing = ROWS[rule_id]
    r = row_result(rule_id, patient, bad)
    assert (r.applicable, r.adherent, r.missing) == (True, False, missing), r.reason


@pytest.mark.parametrize("rule_id", list(ROWS))
def test_row_reference_plan_is_adherent(rule_id: str) -> None:
    patient = ROWS[rule_id][0]
    plan = reference_plan(patient, DESIGN)
    assert rule_id in plan.rules and plan.actions


@pytest.mark.parametrize(
    ("rule_id", "patient", "actions", "escalate", "adherent", "missing"),
    [
        # CAP: the class follows CURB-65
        ("dt_cap_curb65_antibiotic", CAP2, ["Ceftriaxone", "Clarithromycin"], [], True, []),
        ("dt_cap_curb65_antibiotic", CAP2, ["Oral amoxicillin"], [], False, [CAP_MOD]),
        ("dt_cap_curb65_antibiotic", CAP4, ["Levofloxacin"], [], False, [CAP_SEV]),
        ("dt_cap_curb65_antibiotic", CAP4, ["Ceftriaxone plus azithromycin"], [], True, []),
        # unstable PE: thrombolysis may be the escalation; contraindicated: embolectomy / CDT instead
        ("dt_pe_unstable", PE_SHOCK, ["UFH infusion"], ["Alteplase if no response"], True, []),
        (
            "dt_pe_unstable",
            PE_POSTOP,
            ["UFH", "Surgical embolectomy (thrombolysis contraindicated)"],
            [],
            True,
            [],
        ),
        ("dt_pe_unstable", PE_POSTOP, ["UFH", "Alteplase 100 mg"], [], False, [REPERFUSION]),
        # immediate K+ treatment: any of the listed; the patient's basal insulin is none
        ("dt_hyperkalaemia_critical", K7, ["Insulin and dextrose", "Telemetry"], [], True, []),
        (
            "dt_hyperkalaemia_critical",
            K7,
            ["Continue insulin glargine", "Telemetry"],
            [],
            False,
            [K_TREATMENT],
        ),
    ],
)
def test_row_variants(
    rule_id: str,
    patient: dict[str, Any],
    actions: list[str],
    escalate: list[str],
    adherent: bool,
    missing: list[str],
) -> None:
    r = row_result(rule_id, patient, actions, escalate)
    assert (r.applicable, r.adherent, r.missing) == (True, adherent, missing), r.reason


def test_where_the_design_table_and_v2_differ_on_purpose() -> None:
    def v2(rule_id: str, patient: dict[str, Any], actions: list[str]) -> Any:
        sections = {"recommended_actions": actions, "when_to_escalate": []}
        return next(r for r in evaluate_rules(patient, sections) if r.rule_id == rule_id)

    # K+ exactly 6.5: the design says > 6.5, v2 (UKKA 2020) >= 6.5
    k65 = pt(conditions=[], labs=[lab("potassium", 6.5, "mmol/L")])
    assert row_result("dt_hyperkalaemia_critical", k65, []).applicable is False
    assert v2("hyperkalaemia_severe", k65, []).applicable is True
    # any beta-blocker and no MRA / SGLT2i in the design row; v2 wants the four pillars, evidence-based BB
    plan = ["Ramipril", "Metoprolol tartrate 25 mg bd"]
    assert row_result("dt_hfref_acei_arb_beta_blocker", HFREF, plan).adherent is True
    assert v2("hfref_gdmt", HFREF, plan).adherent is False
    # kept from v2 (reading, not edition): a pericardial effusion is not a pleural one, nor NSTEMI a STEMI
    pericardial = pt(conditions=["pericardial effusion"], cxr=["large pleural effusion"])
    assert row_result("dt_pleural_effusion_large", pericardial, []).applicable is False
    nstemi = pt(conditions=["non-ST elevation myocardial infarction"])
    assert row_result("dt_stemi_cath_lab", nstemi, []).applicable is False


def golden_case(patient: dict[str, Any]) -> Case:
    return Case(id="c", input=CaseInput(question="q", data={"patient": patient}))


def test_ruleset_selection_and_default() -> None:
    default = SCORERS.get("guideline_adherence")({})
    assert default.name == "guideline_adherence" and default.ruleset.version == "2.2.0"  # type: ignore[attr-defined]
    design = SCORERS.get("guideline_adherence")({"ruleset": "design_table"})
    assert design.name == "guideline_adherence_design_table"
    assert design.ruleset is DESIGN  # type: ignore[attr-defined]
    keys = [k for m in design.metrics for k in m.compute([])]
    assert keys[:2] == ["design_table_adherence", "design_table_adherence_ci"]
    assert "adherence_dt_stemi_cath_lab" in keys and "guideline_adherence" not in keys
    ctx = ScoringContext(
        case=golden_case(K7),
        output=SystemOutput(structured=StructuredOutput.model_validate({"recommended_actions": [
            {"action": "Calcium gluconate IV"}, {"action": "Cardiac monitoring"}
        ]})),
    )  # fmt: skip
    # the design row is met (calcium + monitoring); v2 also wants insulin with glucose
    assert (design(ctx).label, design(ctx).value) == ("adherent", 1.0)
    assert (default(ctx).label, default(ctx).value) == ("non_adherent", 0.0)
    with pytest.raises(ValidationError, match="not both"):
        SCORERS.get("guideline_adherence")({"ruleset": "design_table", "rules": "x.yaml"})
    with pytest.raises(ValidationError):
        SCORERS.get("guideline_adherence")({"ruleset": "v3"})
    with pytest.raises(SuiteError, match="define no jurisdictions"):
        SCORERS.get("guideline_adherence")({"ruleset": "design_table", "jurisdiction": "nice"})


def test_one_task_reports_against_both_rulesets(tmp_path: Path) -> None:
    rows = [
        {
            "id": "k7", "version": 2, "question": "q", "patient": K7,
            "reference": {}, "metadata": {"condition": "multi_system", "split": "train"},
        },
        {
            "id": "stemi", "version": 2, "question": "q", "patient": STEMI,
            "reference": {}, "metadata": {"condition": "mi", "split": "train"},
        },
    ]  # fmt: skip
    data = tmp_path / "gs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    preds = tmp_path / "p.jsonl"
    outputs = {
        "k7": {"recommended_actions": [{"action": "IV calcium gluconate"}, {"action": "Telemetry"}]},
        "stemi": {
            "recommended_actions": [{"action": "Primary PCI"}],
            "when_to_escalate": "STEMI: cath lab now",
        },
    }
    preds.write_text("".join(json.dumps({"id": k, "output": v}) + "\n" for k, v in outputs.items()))
    suite = tmp_path / "s.yaml"
    suite.write_text(
        f"""name: both
tasks:
  - id: golden
    dataset: {{format: golden_set, path: {data}}}
    system: {{type: predictions, path: {preds}}}
    scorers: [guideline_adherence, {{guideline_adherence: {{ruleset: design_table}}}}]
""",
        encoding="utf-8",
    )
    run = api.run_suite(
        api.RunRequest(suite_path=suite, store_url=f"sqlite:///{tmp_path}/s.db", cache_path=None)
    )
    scores = run.aggregates["golden"].scores
    # k7: the design row is met, v2 misses insulin with glucose; stemi: both met (PCI, escalated)
    assert scores["design_table_adherence"] == 1.0 and scores["guideline_adherence"] == 0.5
    assert (
        scores["adherence_dt_hyperkalaemia_critical"] == 1.0
        and scores["adherence_hyperkalaemia_severe"] == 0.0
    )
    assert scores["n_applicable_dt_stemi_cath_lab"] == 1 and math.isclose(
        scores["adherence_stemi_cath_lab"], 1.0
    )
    assert {"guideline_adherence", "guideline_adherence_design_table"} <= set(run.results[0].scores)
