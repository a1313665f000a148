"""Type-aware scoring of CDS reports, the report mapping, and the MCQ selection scorer."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from clineval.core import Case, CaseInput, Reference, ScoringContext, SystemOutput
from clineval.core.cds_report import CdsReport
from clineval.mcq.cds_report import CdsReportScorer
from clineval.mcq.selection import MCQSelectionScorer

OPTIONS = {
    "A": "Pulmonary embolism",
    "B": "Clopidogrel",
    "C": "Cholesterol embolization",
    "D": "CT angiography",
}


def case(answer: str, qtype: str, text: str = "Q?") -> Case:
    return Case(
        id="1",
        input=CaseInput(question=text, options=OPTIONS),
        reference=Reference(answer=answer, answer_text=OPTIONS[answer]),
        metadata={"question_type": qtype},
    )


def report(**sections: object) -> SystemOutput:
    return SystemOutput(structured=CdsReport.model_validate(sections).to_structured())


def score(c: Case, output: SystemOutput):  # type: ignore[no-untyped-def]
    return CdsReportScorer()(ScoringContext(case=c, output=output))


def test_report_maps_onto_the_structured_output() -> None:
    r = CdsReport.model_validate(
        {
            "differential": [
                "Aortic dissection",
                {"diagnosis": "PE", "reasoning": "tachycardia", "confidence": 0.4},
            ],
            "next_steps": "CT angiography",
            "recommendations": [{"text": "Start heparin"}],
            "recommended_workup": ["D-dimer"],
            "reasoning_chain": "Wells score is high.",
            "sources": ["ESC 2019 PE guideline"],
            "conflicts": ["none"],
        }
    )
    s = r.to_structured()
    assert [d.diagnosis for d in s.differential or []] == ["Aortic dissection", "PE"]
    assert s.actions("next_step") == ["CT angiography"] and s.actions("recommendation") == ["Start heparin"]
    assert s.actions("workup") == ["D-dimer"] and s.reasoning == ["Wells score is high."]
    assert s.sources == [{"title": "ESC 2019 PE guideline"}] and s.conflicts == ["none"]
    with pytest.raises(ValidationError):
        CdsReport.model_validate({"diferential": ["typo"]})  # a misspelt section is an error, not lost


def test_diagnostic_ranks_in_the_differential() -> None:
    out = report(differential=["Renal artery stenosis", "Cholesterol embolization syndrome", "AIN"])
    s = score(case("C", "diagnostic"), out)
    assert (s.label, s.value) == ("top3", 1.0)
    assert s.breakdown["match_location"] == "differential" and s.breakdown["match_rank"] == 2
    assert (s.breakdown["top1"], s.breakdown["top3"], s.breakdown["in_differential"]) == (False, True, True)
    first = score(case("C", "diagnostic"), report(differential=["The diagnosis is cholesterol embolization"]))
    assert first.label == "top1" and first.breakdown["match_rule"] == "containment"


def test_treatment_looks_in_next_steps_then_recommendations_then_reasoning() -> None:
    out = report(
        differential=["Acute coronary syndrome"],
        next_steps=["ECG", "Troponin"],
        recommendations=["Start clopidogrel 75mg daily"],
    )
    s = score(case("B", "treatment"), out)
    assert s.breakdown["match_location"] == "recommendations" and s.breakdown["match_rank"] == 1
    assert s.label == "other_section" and s.value == 1.0 and s.breakdown["top1"] is False
    assert s.breakdown["in_differential"] is None  # only for diagnostic questions
    top = score(case("B", "treatment"), report(next_steps=["Start clopidogrel 75mg daily"]))
    assert top.label == "top1" and top.breakdown["match_location"] == "next_steps"


def test_a_diagnostic_answer_only_in_next_steps_is_not_in_the_differential() -> None:
    out = report(differential=["Myocardial infarction"], next_steps=["Evaluate for pulmonary embolism"])
    s = score(case("A", "diagnostic"), out)
    assert s.label == "mentioned_only" and s.value == 0.0
    assert s.breakdown["match_location"] == "full_text" and s.breakdown["match_rank"] is None
    assert s.breakdown["mentioned"] is True and s.breakdown["in_differential"] is False


def test_mechanism_uses_reasoning_then_differential_reasoning() -> None:
    out = report(differential=[{"diagnosis": "X", "reasoning": "due to cholesterol embolization"}])
    s = score(case("C", "mechanism"), out)
    assert s.breakdown["match_location"] == "differential_reasoning" and s.label == "other_section"


def test_lab_finding_uses_workup_first_and_unrelated_is_missed() -> None:
    s = score(
        case("D", "lab_finding"), report(recommended_workup=["Troponin", "CT angiography of the chest"])
    )
    assert (s.label, s.breakdown["match_rank"]) == ("top3", 2)
    missed = score(case("A", "lab_finding"), report(recommended_workup=["Acute myocardial infarction"]))
    assert (missed.label, missed.value, missed.breakdown["mentioned"]) == ("missed", 0.0, False)


def test_failed_call_and_missing_reference() -> None:
    failed = score(case("A", "diagnostic"), SystemOutput.failure("http_500", "boom"))
    assert failed.label == "failed" and failed.value == 0.0 and failed.breakdown["top1"] is False
    no_ref = CdsReportScorer()(
        ScoringContext(case=Case(id="x", input=CaseInput(question="q")), output=report(differential=["a"]))
    )
    assert no_ref.label == "no_reference" and math.isnan(no_ref.value)


def test_metrics_aggregate_only_where_they_apply() -> None:
    scorer = CdsReportScorer()
    scores = [
        score(case("C", "diagnostic"), report(differential=["Cholesterol embolization"])),
        score(case("C", "diagnostic"), report(differential=["A", "B", "C", "Cholesterol embolization"])),
        score(case("B", "treatment"), report(next_steps=["aspirin", "clopidogrel"])),
    ]
    values = {}
    for metric in scorer.metrics:
        values.update(metric.compute(scores))
    assert values["top1_accuracy"] == 1 / 3 and values["top3_accuracy"] == 2 / 3
    assert values["in_differential_rate"] == 1.0  # two diagnostic cases, both in the differential
    assert values["type_aware_accuracy"] == 1.0 and values["mentioned_rate"] == 1.0


def selection_output(record: dict[str, object] | None) -> SystemOutput:
    return SystemOutput(
        structured=CdsReport().to_structured(), raw={"mcq_selection": record} if record else None
    )


def test_mcq_selection_scorer() -> None:
    c = case("B", "treatment")
    scorer = MCQSelectionScorer()
    check = lambda rec: scorer(ScoringContext(case=c, output=selection_output(rec)))  # noqa: E731
    chosen = check(
        {"text": '{"justification": "P2Y12 \\"inhibitor\\" fits", "answer_choice": "B"}', "error": None}
    )
    assert chosen.label == "correct" and chosen.breakdown["justification"] == 'P2Y12 "inhibitor" fits'
    assert check({"text": "I would pick A", "error": None}).label in ("incorrect", "unparsed")
    assert check({"text": "A or B", "error": None}).label == "unparsed"
    assert check({"error": {"kind": "http_500", "message": "x"}}).label == "failed"
    assert check(None).breakdown["error"] == "no_selection_step"
    names = [m.name for m in scorer.metrics]
    assert names[:3] == ["mcq_accuracy", "mcq_unparsed_rate", "mcq_failed_rate"]
