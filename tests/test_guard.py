"""Tier 1 checks: the runtime guard (``clineval.cds.guard``) and its scorers
(``clineval.cds.guard.structural``).

Every check has a passing and a failing recommendation; every red flag fires on a patient and stays
quiet on a healthy one.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from clineval.cds.guard import DEFAULT_RED_FLAGS, GuardConfig, Scope, check, drugs_named
from clineval.cds.guard.structural import LatencyPercentiles
from clineval.core import Case, CaseInput, Reference, ScoringContext, StructuredOutput, SystemOutput
from clineval.scoring.registry import SCORERS

GOOD: dict[str, Any] = {
    "problems": ["Acute pulmonary embolism"],
    "recommended_actions": [
        {
            "action": "Start low-molecular-weight heparin (enoxaparin)",
            "evidence_refs": ["E1"],
            "category": "medication",
        },
        {
            "action": "Obtain echocardiogram to assess RV strain",
            "evidence_refs": ["E2"],
            "category": "imaging",
        },
    ],
    "evidence_table": [
        {"id": "E1", "source_type": "guideline", "doc_id": "esc-pe-2019", "text": "Anticoagulate..."},
        {"id": "E2", "source_type": "guideline", "doc_id": "esc-pe-2019", "text": "Echo for RV..."},
    ],
    "contraindications_checked": ["active bleeding", "recent surgery"],
    "when_to_escalate": "If hypotensive (SBP < 90), call ICU and consider systemic thrombolysis",
}
HEALTHY: dict[str, Any] = {
    "age": 50,
    "labs": [{"name": "Potassium", "value": 4.1, "unit": "mmol/L"}, {"name": "pH", "value": 7.41}],
    "vitals": {"hr": 80, "sbp": 125, "rr": 16, "spo2": 97, "temp": 36.8},
    "conditions": ["hypertension"],
    "note": "Routine review. No chest pain. Denies dyspnoea.",
}


def rec(**changes: Any) -> dict[str, Any]:
    return {**GOOD, **changes}


def result(recommendation: Any, name: str, **kwargs: Any) -> Any:
    found = check(recommendation, **kwargs).result(name)
    assert found is not None
    return found


# --- schema ---------------------------------------------------------------------------------------
def test_schema_pass_and_every_violation_listed() -> None:
    assert result(GOOD, "schema").passed is True
    bad = rec(
        recommended_actions=[{"evidence_refs": "E1"}, {"action": 3}],
        evidence_table=[{"id": "E1", "source_type": "blog"}],
    )
    found = result(bad, "schema")
    assert found.passed is False and found.error
    text = " | ".join(found.reasons)
    assert "recommended_actions.0.action" in text and "recommended_actions.0.evidence_refs" in text
    assert "recommended_actions.1.action" in text and "evidence_table.0.source_type" in text


def test_schema_required_fields_extras_duplicates() -> None:
    found = result(rec(recommended_actions=[]), "schema")
    assert found.passed is False and "recommended_actions: required" in found.reasons[0]
    dup = rec(evidence_table=[GOOD["evidence_table"][0], GOOD["evidence_table"][0]])
    assert any("duplicate id 'E1'" in r for r in result(dup, "schema").reasons)
    strict = GuardConfig(allow_extra_fields=False)
    assert result(rec(recomended_actions=[]), "schema", config=strict).reasons == [
        "recomended_actions: not a field of the schema"
    ]
    assert result(StructuredOutput.model_validate(GOOD), "schema").passed is True
    assert result('{"recommended_actions": [{"action": "ECG"}]}', "schema").passed is True


# --- citation grounding -----------------------------------------------------------------------------
def test_citation_grounding() -> None:
    assert result(GOOD, "citation_grounding").passed is True
    actions = [
        {"action": "Start aspirin", "evidence_refs": []},
        {"action": "ECG", "evidence_refs": ["E1", "E7"]},
    ]
    found = result(rec(recommended_actions=actions), "citation_grounding")
    assert found.passed is False
    assert found.reasons == [
        "action 1 'Start aspirin' cites no evidence",
        "action 2 cites 'E7', which is not in the evidence table",
    ]
    assert result(rec(recommended_actions=None), "citation_grounding").passed is None


# --- scope ------------------------------------------------------------------------------------------
def test_scope() -> None:
    assert result(GOOD, "scope").passed is True
    actions = [
        {"action": "Refer to oncology for chemotherapy", "evidence_refs": ["E1"]},
        {"action": "Start sertraline 50 mg", "evidence_refs": ["E1"]},
        {"action": "Hold chemotherapy while anticoagulated for the PE", "evidence_refs": ["E1"]},
    ]
    found = result(rec(recommended_actions=actions), "scope")
    assert found.passed is False and len(found.reasons) == 2
    assert found.data["offending_terms"] == ["oncology", "chemotherapy", "sertraline"]


def test_scope_is_configurable(tmp_path: Path) -> None:
    path = tmp_path / "scope.yaml"
    path.write_text("name: oncology\nin_scope: [chemotherapy]\nout_of_scope: [heparin]\n", encoding="utf-8")
    config = GuardConfig.load(scope_path=path)
    found = result(GOOD, "scope", config=config)
    assert found.passed is False and "oncology scope" in found.reasons[0]
    with pytest.raises(ValueError):
        Scope.from_data({"in_scope": ["x"]})


# --- contraindications --------------------------------------------------------------------------------
def test_contraindications() -> None:
    assert result(GOOD, "contraindications").passed is True
    found = result(rec(contraindications_checked=[]), "contraindications")
    assert found.passed is False and "enoxaparin" in found.reasons[0]
    no_drug = rec(
        recommended_actions=[{"action": "Obtain ECG", "evidence_refs": ["E1"]}],
        contraindications_checked=None,
    )
    assert result(no_drug, "contraindications").passed is None


def test_drug_detection() -> None:
    assert drugs_named("Start ramipril 2.5 mg", None) == ["ramipril"]
    assert drugs_named("Give candesartan", None) == ["candesartan"]  # suffix -sartan
    assert drugs_named("Uptitrate nebivolol", None) == ["nebivolol"]  # suffix -olol
    assert drugs_named("Review in April", None) == []
    assert drugs_named("Optimise therapy", "medication") == ["(category medication)"]


# --- escalation / red flags ------------------------------------------------------------------------------
RED_FLAG_PATIENTS: dict[str, dict[str, Any]] = {
    "acs_troponin_chest_pain": {
        "labs": [{"name": "hs-cTnT", "value": 58, "unit": "ng/L", "flag": "H"}],
        "note": "Central chest pain radiating to left arm.",
    },
    "stemi": {"note": "ECG: ST elevation in V1-V4."},
    "high_risk_pe": {"conditions": ["pulmonary embolism"], "vitals": {"sbp": 82}},
    "severe_hyperkalaemia": {"labs": [{"name": "K+", "value": "6.9", "unit": "mEq/L"}]},
    "severe_acidaemia": {"labs": [{"name": "Arterial pH", "value": 7.12}]},
    "hypercapnic_acidosis": {
        "labs": [{"name": "pH", "value": 7.31}, {"name": "PaCO2", "value": 8.2, "unit": "kPa"}]
    },
    "hyperkalaemia_ecg_changes": {
        "labs": [{"name": "K+", "value": 6.1, "unit": "mmol/L"}],
        "ecg": "peaked T waves",
    },
    "severe_hypokalaemia": {"labs": [{"name": "Potassium", "value": 2.3, "unit": "mmol/L"}]},
    "very_high_risk_nste_acs": {"conditions": ["NSTEMI"], "note": "Recurrent chest pain despite GTN."},
    "cardiogenic_shock": {"conditions": ["cardiogenic shock"]},
    "cardiac_arrest": {"note": "Found pulseless, CPR started."},
    "deteriorating_consciousness": {"note": "New confusion since this morning."},
    "news2_high": {"scores": {"NEWS2": 8}},
    "massive_haemoptysis": {"complaint": "massive haemoptysis"},
    "severe_hypoxaemia": {"vitals": {"spo2": 84}},
    "lactate_high": {"labs": [{"name": "Lactate", "value": 4.6, "unit": "mmol/L"}]},
    "sepsis_hypotension": {"vitals": {"sbp": 84}, "conditions": ["community-acquired pneumonia"]},
    "severe_tachypnoea": {"vitals": {"rr": 34}},
    "severe_cap": {"scores": {"curb65": 3}},
    "hypotension": {"vitals": {"sbp": 78}},
    "severe_tachycardia": {"vitals": {"hr": 150}},
    "severe_bradycardia": {"vitals": {"hr": 32}},
    "life_threatening_arrhythmia": {"note": "Monitor shows ventricular tachycardia."},
    "aortic_dissection": {"note": "Tearing pain to the back, ?aortic dissection."},
    "tension_pneumothorax": {"note": "Tracheal deviation, suspected tension pneumothorax."},
    "life_threatening_asthma": {"conditions": ["acute severe asthma"], "note": "silent chest"},
}


def test_every_flag_has_a_case_and_source() -> None:
    assert {f.id for f in DEFAULT_RED_FLAGS.flags} == set(RED_FLAG_PATIENTS)
    assert all(f.source and f.escalate_terms for f in DEFAULT_RED_FLAGS.flags)


@pytest.mark.parametrize("flag_id", sorted(RED_FLAG_PATIENTS))
def test_red_flag_fires(flag_id: str) -> None:
    assert flag_id in {h.id for h in DEFAULT_RED_FLAGS.detect(RED_FLAG_PATIENTS[flag_id])}


def test_no_red_flags_in_healthy_patient_and_negation() -> None:
    assert DEFAULT_RED_FLAGS.detect(HEALTHY) == []
    assert DEFAULT_RED_FLAGS.detect(None) == []
    negated = {
        "labs": [{"name": "Troponin I", "value": 0.2, "unit": "ng/mL"}],
        "note": "No chest pain. ECG without ST elevation; PE ruled out.",
        "vitals": {"sbp": 120},
    }
    assert DEFAULT_RED_FLAGS.detect(negated) == []
    low = {"labs": [{"name": "Troponin I", "value": 0.01, "unit": "ng/mL"}], "note": "chest pain"}
    assert DEFAULT_RED_FLAGS.detect(low) == []


def test_escalation_pass_fail_and_not_applicable() -> None:
    patient = RED_FLAG_PATIENTS["high_risk_pe"] | {"vitals": {"sbp": 82}}
    found = result(GOOD, "escalation", patient=patient)
    assert found.passed is True and {f["id"] for f in found.data["red_flags"]} == {
        "high_risk_pe",
        "hypotension",
    }
    missing = result(rec(when_to_escalate=None), "escalation", patient=patient)
    assert missing.passed is False and "when_to_escalate is missing" in missing.reasons[0]
    wrong = result(rec(when_to_escalate=["Follow up with GP in 2 weeks"]), "escalation", patient=patient)
    assert wrong.passed is False and len(wrong.reasons) == 2
    assert result(GOOD, "escalation", patient=HEALTHY).passed is None
    assert result(GOOD, "escalation").passed is None


def test_escalation_must_address_each_flag() -> None:
    patient = {"labs": [{"name": "Potassium", "value": 7.0, "unit": "mmol/L"}], "note": "ECG: ST elevation"}
    both = rec(
        when_to_escalate="Activate cath lab for primary PCI; give IV calcium gluconate for hyperkalaemia"
    )
    assert result(both, "escalation", patient=patient).passed is True
    one = rec(when_to_escalate="Activate cath lab for primary PCI")
    found = result(one, "escalation", patient=patient)
    assert found.passed is False and "hyperkalaemia" in found.reasons[0].lower()


# --- latency --------------------------------------------------------------------------------------------
def test_latency() -> None:
    config = GuardConfig(latency_budget_s={"retrieval": 0.5, "total": 2.0})
    ok = result(GOOD, "latency", config=config, stage_latency_s={"retrieval": 0.2, "llm": 9.0}, latency_s=1.5)
    assert ok.passed is True
    slow = result(GOOD, "latency", config=config, stage_latency_s={"retrieval": 0.9}, latency_s=2.5)
    assert slow.passed is False and len(slow.reasons) == 2 and "retrieval took 0.900 s" in slow.reasons[0]
    assert result(GOOD, "latency").passed is None
    with pytest.raises(ValueError):
        GuardConfig(latency_budget_s={"retrieval": 0})


# --- the runtime guard ----------------------------------------------------------------------------------
def test_verdict_pass_and_fail() -> None:
    verdict = check(GOOD, patient=HEALTHY)
    assert verdict.passed and verdict.failures == []
    assert [r.check for r in verdict.results] == [
        "schema",
        "citation_grounding",
        "scope",
        "contraindications",
        "escalation",
        "latency",
    ]
    bad = check(rec(contraindications_checked=[]), patient=HEALTHY)
    assert not bad.passed and [f.check for f in bad.failures] == ["contraindications"]


@pytest.mark.parametrize("garbage", [None, 42, "not json", "[1, 2]", {"recommended_actions": "ECG"}])
def test_fail_closed_and_fail_open(garbage: Any) -> None:
    closed = check(garbage)
    assert not closed.passed and closed.failures[0].check == "schema"
    assert all(r.passed is False for r in closed.results if r.check != "latency")
    opened = check(garbage, config=GuardConfig(fail_closed=False))
    assert opened.passed and opened.failures == []
    assert opened.result("schema") is not None and opened.results[0].error


def test_exception_inside_a_check_never_raises() -> None:
    class Exploding(dict[str, Any]):
        def get(self, *_: Any, **__: Any) -> Any:
            raise RuntimeError("boom")

    closed = check(GOOD, patient=Exploding(x=1))
    assert not closed.passed and closed.failures[0].check == "escalation"
    assert "RuntimeError: boom" in closed.failures[0].reasons[0]
    opened = check(GOOD, patient=Exploding(x=1), config=GuardConfig(fail_closed=False))
    assert opened.passed and opened.result("escalation").passed is None  # type: ignore[union-attr]
    assert not check(GOOD, config="nonsense").passed  # type: ignore[arg-type]


def test_checks_can_be_selected() -> None:
    verdict = check(rec(contraindications_checked=[]), config=GuardConfig(checks=frozenset({"schema"})))
    assert verdict.passed and [r.check for r in verdict.results] == ["schema"]
    with pytest.raises(ValueError):
        GuardConfig(checks=frozenset({"spelling"}))


# --- scorers ---------------------------------------------------------------------------------------------
def ctx(output: SystemOutput, patient: dict[str, Any] | None = None, **reference: Any) -> ScoringContext:
    data = {"patient": patient} if patient is not None else {}
    case = Case(id="c1", input=CaseInput(question="?", data=data), reference=Reference(data=reference))
    return ScoringContext(case=case, output=output)


def out(recommendation: dict[str, Any], **kwargs: Any) -> SystemOutput:
    return SystemOutput(structured=StructuredOutput.model_validate(recommendation), **kwargs)


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("schema", rec(recommended_actions=[])),
        ("citation_grounding", rec(evidence_table=[])),
        ("scope", rec(recommended_actions=[{"action": "Refer to dermatology", "evidence_refs": ["E1"]}])),
        ("contraindications", rec(contraindications_checked=None)),
        ("escalation", rec(when_to_escalate=None)),
    ],
)
def test_scorers_pass_and_fail(name: str, bad: dict[str, Any]) -> None:
    scorer = SCORERS.get(name)({})
    assert getattr(scorer, "tier", None) == 1
    patient = RED_FLAG_PATIENTS["high_risk_pe"]
    good_score = scorer(ctx(out(GOOD), patient))
    bad_score = scorer(ctx(out(bad), patient))
    assert (good_score.value, good_score.label) == (1.0, "pass")
    assert (bad_score.value, bad_score.label) == (0.0, "fail") and bad_score.breakdown["reasons"]
    failed = scorer(ctx(SystemOutput.failure("timeout", "took too long"), patient))
    assert (failed.value, failed.label) == (0.0, "failed")
    values = scorer.metrics[0].compute([good_score, bad_score])
    assert values[f"{name}_pass_rate"] == 0.5 and len(values[f"{name}_pass_rate_ci"]) == 2  # type: ignore[arg-type]


def test_escalation_scorer_recall_and_reference() -> None:
    scorer = SCORERS.get("escalation")({})
    patient = RED_FLAG_PATIENTS["severe_hyperkalaemia"]
    hit = scorer(
        ctx(out(rec(when_to_escalate="IV calcium gluconate, insulin-dextrose, call renal")), patient)
    )
    # v2: naming a test or a drug alone is not an escalation
    miss = scorer(ctx(out(rec(when_to_escalate="Recheck potassium (K) and give salbutamol")), patient))
    quiet = scorer(ctx(out(GOOD), HEALTHY))
    assert (hit.value, miss.value) == (1.0, 0.0) and math.isnan(quiet.value)
    metrics: dict[str, Any] = {}
    for metric in scorer.metrics:
        metrics.update(metric.compute([hit, miss, quiet]))
    assert metrics["guardrail_recall"] == 0.5 and metrics["red_flag_cases"] == 2
    # a case whose reference expects escalation counts even when no flag is detected
    expected = ctx(out(rec(when_to_escalate=None)), HEALTHY, expected_escalation=True)
    assert scorer(expected).value == 0.0
    reasons = ["worsening renal function"]
    good = ctx(out(rec(when_to_escalate="Call if renal function worsens")), HEALTHY, expected_escalation=True,
               escalation_reasons=reasons)  # fmt: skip
    assert scorer(good).value == 1.0
    failed_quiet = scorer(ctx(SystemOutput.failure("timeout", "x"), HEALTHY))
    assert math.isnan(failed_quiet.value)


def test_scorer_reads_json_text_and_missing_output() -> None:
    scorer = SCORERS.get("schema")({})
    import json

    assert scorer(ctx(SystemOutput(text=json.dumps(GOOD)))).value == 1.0
    assert scorer(ctx(SystemOutput(text="I recommend heparin"))).value == 0.0
    assert scorer(ctx(SystemOutput())).value == 0.0
    with pytest.raises(ValueError):  # pydantic.ValidationError: unknown option
        SCORERS.get("schema")({"strictness": 1})


def test_latency_scorer_and_percentiles() -> None:
    scorer = SCORERS.get("latency")({"budget_s": {"retrieval": 0.5, "total": 3.0}})
    scores = [
        scorer(ctx(out(GOOD, stage_latency_s={"retrieval": r, "generation": 1.0}, latency_s=r + 1.0)))
        for r in (0.1, 0.2, 0.3, 0.4, 0.9)
    ]
    assert [s.value for s in scores] == [1.0, 1.0, 1.0, 1.0, 0.0]
    values: dict[str, Any] = {}
    for metric in scorer.metrics:
        values.update(metric.compute(scores))
    assert values["latency_pass_rate"] == 0.8
    assert values["latency_p50_retrieval"] == pytest.approx(0.3)
    assert values["latency_p95_retrieval"] == pytest.approx(0.4 + 0.8 * 0.5)  # numpy linear, type 7
    assert values["latency_p50_generation"] == 1.0 and values["latency_p50_total"] == pytest.approx(1.3)
    no_budget = SCORERS.get("latency")({})(ctx(out(GOOD, latency_s=1.0)))
    assert math.isnan(no_budget.value) and no_budget.label == "not_applicable"
    assert LatencyPercentiles().compute([]) == {}
