"""DDx scoring: class decisions with evidence, the formulas, the scorer, its metrics, the assertion rules."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from clineval.core import Case, CaseInput, ScoringContext, StructuredOutput, SystemOutput
from clineval.core.case import Reference
from clineval.core.output import DifferentialItem as D
from clineval.core.output import TranscriptTurn as T
from clineval.ddx.classes import DdxClassification
from clineval.ddx.scorer import DdxOptions, DdxScorer, classify_differential, ddx_scores
from clineval.scoring.registry import SCORERS
from clineval.text.assertion import Passage, ruled_out_mentions

GT = ["acute kidney injury (AKI)", "contrast-induced nephropathy", "cholesterol embolization", "pneumonia"]
CASE = "Two weeks after cardiac catheterization he has fever, hypotension and a rising creatinine."


def _classify() -> DdxClassification:
    diff = [
        D(diagnosis="Drug-induced vasculitis"),
        D(diagnosis="Acute Kidney Injury"),
        D(diagnosis="Sepsis", status="alternative"),
        D(diagnosis="Cholesterol embolization", status="excluded", reasoning="no livedo, normal eosinophils"),
    ]
    turns = [
        T(
            round=1,
            agent="e",
            phase="differential",
            text="Contrast-induced nephropathy fits the rising creatinine after catheterization.",
        ),
        T(
            round=1,
            agent="a",
            phase="debate",
            text="Contrast-induced nephropathies are unlikely given the timing.",
        ),
        T(
            round=1,
            agent="d",
            phase="debate",
            text="Cholesterol embolization is unlikely: no livedo, and the fever points elsewhere.",
        ),
        T(
            round=2,
            agent="b",
            phase="symptom_management",
            text="Treat the cough; give paracetamol for fever.",
        ),
        T(round=3, agent="c", phase="cant_miss", text="Sepsis must not be missed: fever and hypotension."),
    ]
    findings = {"pneumonia": ["cough", "fever", "crackles"]}
    return classify_differential(GT, diff, turns, findings=findings, case_text=CASE)


def test_classes_and_evidence() -> None:
    c = _classify()
    by_gt = {d.ground_truth: d for d in c.decisions if d.ground_truth}
    assert by_gt["acute kidney injury (AKI)"].cls == "TP"
    assert by_gt["acute kidney injury (AKI)"].tier == "exact"
    assert by_gt["acute kidney injury (AKI)"].rank == 2
    # excluded, and a turn rules it out giving a finding of the case (after the colon): a supported exclusion
    ae_status = by_gt["cholesterol embolization"]
    assert ae_status.cls == "AE" and ae_status.system == "Cholesterol embolization"
    ev = ae_status.evidence[0]
    assert (ev.source, ev.agent, ev.trigger) == ("transcript", "d", "unlikely; cites fever")
    assert ev.text.endswith("the fever points elsewhere.")
    ae_text = by_gt["contrast-induced nephropathy"]  # put forward citing the creatinine, then ruled out
    assert ae_text.cls == "AE"
    ev = ae_text.evidence[0]
    assert (ev.source, ev.round, ev.phase) == ("transcript", 1, "debate")
    assert ev.trigger == "unlikely given; put forward in round 1 citing creatinine, rising creatinine"
    tm = by_gt["pneumonia"]  # paracetamol treats fever, the one treatable key finding of three
    assert tm.cls == "TM-SM" and {e.phase for e in tm.evidence} == {"symptom_management"}
    assert tm.evidence[0].trigger == "paracetamol (antipyretics) treats key finding 'fever' (fever)"
    caa = next(d for d in c.decisions if d.cls == "CAA")
    assert (caa.system, caa.evidence[0].phase, caa.evidence[0].trigger) == (
        "Sepsis",
        "cant_miss",
        "cites fever, hypotension",
    )
    assert c.counts == {"TP": 1, "FP": 1, "FN": 0, "CAA": 1, "AE": 2, "TM-SM": 1, "BROADER": 0}
    assert c.considered == 4 + 1 + 1
    assert c.hit_ranks == (2,)


def test_formulas() -> None:
    c = _classify()
    s = ddx_scores(c, 0.5)
    assert s["recall"] == pytest.approx(1 / 4)
    assert s["precision"] == pytest.approx(1 / 3)
    assert s["clinical_reasoning_quality"] == pytest.approx((1 + 0.5 + 2) / 6)
    assert s["diagnostic_safety"] == pytest.approx((1 + 0.5) / 3)
    assert s["system_safety_coverage"] == pytest.approx(2 / 4)
    assert s["reciprocal_rank"] == pytest.approx(0.5)
    assert (s["top1"], s["top3"], s["top5"], s["top10"]) == (False, True, True, True)
    neg = ddx_scores(c, -0.2)
    assert neg["diagnostic_safety"] == pytest.approx(1 / 3)  # max(0, w*CAA)
    assert neg["clinical_reasoning_quality"] == pytest.approx((1 - 0.2 + 2) / 6)


def test_lddx_case_1_counts_give_its_crq() -> None:
    """v8_5 Case 1: tp=1, fp=2, fn=2, ae=2, 5 ground truths -> CRQ 3/7, recall 1/5 (LDDx tp_rate)."""
    diff = [D(diagnosis="x1"), D(diagnosis="AKI"), D(diagnosis="x2")]
    gt = ["acute kidney injury", "a1", "a2", "f1", "f2"]
    turns = [
        T(round=1, agent="a", text="A1 and A2 fit the interstitial inflammation on the biopsy."),
        T(round=2, agent="a", text="A1 was ruled out. A2 is unlikely given the biopsy."),
    ]
    case = "A renal biopsy shows interstitial inflammation."
    c = classify_differential(gt, diff, turns, case_text=case)  # a1, a2: put forward citing it, ruled out
    assert c.counts == {"TP": 1, "FP": 2, "FN": 2, "CAA": 0, "AE": 2, "TM-SM": 0, "BROADER": 0}
    s = ddx_scores(c, -0.2)
    assert s["clinical_reasoning_quality"] == pytest.approx(3 / 7)
    assert s["recall"] == pytest.approx(0.2)


def test_hierarchy_option_and_duplicates() -> None:
    # the system name narrower than the ground truth: a hierarchy TP unless hierarchy_counts_as_tp is off
    diff = [D(diagnosis="Contrast-induced nephropathy"), D(diagnosis="Flu"), D(diagnosis="flu")]
    loose = classify_differential(["acute kidney injury"], diff)
    assert loose.counts["TP"] == 1 and loose.decisions[0].tier == "hierarchy"
    assert [d.cls for d in loose.decisions[1:]] == ["FP", "DUP"]
    strict = classify_differential(["acute kidney injury"], diff, hierarchy_counts_as_tp=False)
    assert strict.counts["TP"] == 0 and strict.counts["FN"] == 1 and strict.counts["FP"] == 2


def test_true_diagnosis_first() -> None:
    c = classify_differential(["pneumonia", "asthma"], [D(diagnosis="asthma"), D(diagnosis="pneumonia")])
    assert ddx_scores(c)["top1"] is True
    first = ddx_scores(c, true_diagnosis="first")
    assert first["top1"] is False and first["top3"] is True and first["reciprocal_rank"] == 0.5
    with pytest.raises(ValueError):
        ddx_scores(c, true_diagnosis="all")


@pytest.mark.parametrize(
    ("sentence", "negated"),
    [
        ("Pneumonia was ruled out.", True),
        ("No evidence of pneumonia on the film.", True),
        ("Pneumonia is less likely given the clear chest x-ray.", True),
        ("We need to rule out pneumonia.", False),
        ("Pneumonia cannot be ruled out.", False),
        ("Pneumonia must be ruled out immediately.", False),
        ("Pneumonia is likely.", False),
        ("Sepsis is less likely but pneumonia is likely.", False),
        ("Pneumonia is less likely, but sepsis is likely.", True),
        ("This patient cannot be missed: pneumonia.", False),
    ],
)
def test_assertion_rules(sentence: str, negated: bool) -> None:
    assert bool(ruled_out_mentions(["pneumonia"], [Passage(sentence)])["pneumonia"]) is negated


def test_assertion_abbreviation_alias() -> None:
    found = ruled_out_mentions(["thrombotic thrombocytopenic purpura (TTP)"], [Passage("This is not TTP.")])
    assert found["thrombotic thrombocytopenic purpura (TTP)"][0].trigger == "not"
    qualifier = ruled_out_mentions(["essential (primary) hypertension"], [Passage("Not primary.")])
    assert qualifier["essential (primary) hypertension"] == []


def _ctx(output: SystemOutput, gt: list[str] | None = None) -> ScoringContext:
    case = Case(
        id="c", input=CaseInput(vignette="v"), reference=Reference(differential=gt if gt is not None else GT)
    )
    return ScoringContext(case=case, output=output)


def _out(*names: str) -> SystemOutput:
    return SystemOutput(structured=StructuredOutput(differential=[D(diagnosis=n) for n in names]))


def test_scorer_cases_and_metrics() -> None:
    scorer = SCORERS.get("ddx")({"caa_weight": 0.3, "ks": [1, 5]})
    assert isinstance(scorer, DdxScorer)
    top1 = scorer(_ctx(_out("AKI", "flu")))
    assert top1.label == "top1" and top1.value == pytest.approx(0.25)
    assert top1.breakdown["decisions"][0]["class"] == "TP" and top1.breakdown["caa_weight"] == 0.3
    missed = scorer(_ctx(_out("flu")))
    assert missed.label == "missed" and missed.value == 0.0
    failed = scorer(_ctx(SystemOutput.failure("http_500", "boom")))
    assert failed.label == "failed" and failed.breakdown["FN"] == 4 and failed.breakdown["top1"] is False
    empty = scorer(_ctx(SystemOutput(text="AKI")))
    assert empty.label == "no_differential"
    none = scorer(_ctx(_out("AKI"), gt=[]))
    assert none.label == "no_reference" and math.isnan(none.value)
    scores = [top1, missed, failed, empty, none]
    values: dict[str, object] = {}
    for metric in scorer.metrics:
        values.update(metric.compute(scores))
    for key in (
        "top1_accuracy",
        "top5_accuracy",
        "recall",
        "clinical_reasoning_quality",
        "diagnostic_safety",
        "system_safety_coverage",
        "precision",
        "mrr",
        "recall_micro",
    ):
        assert key in values, key
    assert values["top1_accuracy"] == pytest.approx(1 / 4)
    assert values["recall"] == pytest.approx(0.25 / 4)
    assert values["recall_micro"] == pytest.approx(1 / 16)
    assert values["precision"] == pytest.approx((0.5 + 0.0) / 2)  # failed/empty: no diagnoses, NaN
    assert values["tp_total"] == 1 and values["fn_total"] == 15
    ci = values["recall_ci"]
    assert isinstance(ci, list) and ci[0] <= 0.25 / 4 <= ci[1]
    again: dict[str, object] = {}
    for metric in scorer.metrics:
        again.update(metric.compute(scores))
    assert again == values  # seeded bootstrap


def test_options_validation() -> None:
    with pytest.raises(ValidationError):
        DdxOptions.model_validate({"caa_weight": 2})
    with pytest.raises(ValidationError):
        DdxOptions.model_validate({"ks": [0]})
    with pytest.raises(ValidationError):
        DdxOptions.model_validate({"bogus": 1})


def test_an_exact_item_keeps_its_ground_truth_from_an_earlier_compositional_item() -> None:
    """LDDx v8_6/11: "Hemochromatosis-Related Osteoarthritis" (rank 1) names osteoarthritis as its condition
    and hemochromatosis as its cause; "Osteoarthritis" (rank 2) names osteoarthritis exactly. The exact item
    keeps osteoarthritis, so the compositional one matches hemochromatosis: two TPs, no DUP."""
    result = classify_differential(
        ["osteoarthritis", "hemochromatosis"],
        [D(diagnosis="Hemochromatosis-Related Osteoarthritis"), D(diagnosis="Osteoarthritis")],
    )
    tp = {(d.ground_truth, d.system) for d in result.of("TP")}
    assert tp == {
        ("hemochromatosis", "Hemochromatosis-Related Osteoarthritis"),
        ("osteoarthritis", "Osteoarthritis"),
    }
    assert not result.of("DUP") and not result.of("FN")
