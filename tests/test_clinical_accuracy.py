"""ClinicalAccuracy: weighted Jaccard over entity sets, hand-computed values, fallback, scorer and metric."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from clineval.core import Case, CaseInput, Reference, ScoringContext, StructuredOutput, SystemOutput
from clineval.core.output import ErrorInfo
from clineval.quality.clinical_accuracy import (
    DEFAULT_WEIGHTS,
    clinical_accuracy,
    make_clinical_accuracy_scorer,
    output_text,
    reference_text,
    weighted_jaccard,
)
from clineval.scoring.registry import SCORERS
from clineval.text.entities import Category

W: dict[Category, float] = {"diagnoses": 0.4, "medications": 0.3, "procedures": 0.15, "labs_findings": 0.15}


def sets(**kw: set[str]) -> dict[Category, set[str]]:
    out: dict[Category, set[str]] = {"diagnoses": set(), "medications": set(), "procedures": set(),
                                     "labs_findings": set()}  # fmt: skip
    out.update(kw)  # type: ignore[arg-type]
    return out


def test_weighted_jaccard_hand_computed() -> None:
    a = sets(diagnoses={"pneumonia", "sepsis"}, medications={"ceftriaxone"}, labs_findings={"fever"})
    b = sets(diagnoses={"pneumonia"}, medications={"ceftriaxone", "azithromycin"}, procedures={"chest x ray"})
    # diagnoses: |∩|=1, |∪|=2; medications: 1, 2; procedures: 0, 1; labs: 0, 1
    # J_w = (0.4*1 + 0.3*1) / (0.4*2 + 0.3*2 + 0.15*1 + 0.15*1) = 0.7 / 1.7
    assert weighted_jaccard(a, b, W) == pytest.approx(0.7 / 1.7)
    # equal weights reduce to the plain Jaccard of the tagged union: 2 / 6
    equal: dict[Category, float] = dict.fromkeys(W, 1.0)
    assert weighted_jaccard(a, b, equal) == pytest.approx(2 / 6)


def test_empty_categories_drop_out() -> None:
    # only diagnoses mentioned: J_w = 0.4*1 / 0.4*3 = 1/3 whatever the other weights
    a = sets(diagnoses={"x", "y"})
    b = sets(diagnoses={"x", "z"})
    assert weighted_jaccard(a, b, W) == pytest.approx(1 / 3)
    # a category with weight 0 is ignored: medications disagree but do not count
    a2 = sets(diagnoses={"x"}, medications={"m1"})
    b2 = sets(diagnoses={"x"}, medications={"m2"})
    assert weighted_jaccard(a2, b2, {"diagnoses": 1.0, "medications": 0.0}) == 1.0
    assert weighted_jaccard(a2, b2, W) == pytest.approx(0.4 / (0.4 + 0.3 * 2))
    assert weighted_jaccard(sets(), sets(), W) is None


def test_clinical_accuracy_on_text_hand_computed() -> None:
    value, breakdown = clinical_accuracy(
        "Pneumonia; start ceftriaxone and azithromycin. Chest x-ray.",
        "Community pneumonia treated with ceftriaxone. CXR showed consolidation. No fever.",
    )
    # diagnoses {pneumonia} both: 1/1; medications {ceftriaxone, azithromycin} vs {ceftriaxone}: 1/2;
    # procedures {chest x ray} both (CXR): 1/1; labs: {} vs {infiltrate} ("no fever" negated): 0/1
    # J_w = (0.4 + 0.3 + 0.15) / (0.4 + 0.6 + 0.15 + 0.15) = 0.85 / 1.3
    assert value == pytest.approx(0.85 / 1.3)
    assert breakdown["method"] == "entities"
    cats = breakdown["categories"]
    assert cats["medications"] == {"matched": ["ceftriaxone"], "missed": [], "extra": ["azithromycin"]}
    assert cats["labs_findings"] == {"matched": [], "missed": ["infiltrate"], "extra": []}
    assert cats["procedures"]["matched"] == ["chest x ray"]


def test_negation_changes_the_score() -> None:
    assert clinical_accuracy("Pulmonary embolism.", "Pulmonary embolism.")[0] == 1.0
    value, breakdown = clinical_accuracy("Pulmonary embolism was ruled out.", "Pulmonary embolism.")
    assert value == 0.0 and breakdown["categories"]["diagnoses"]["missed"] == ["pulmonary embolism"]


def test_string_fallback_when_no_entities() -> None:
    value, breakdown = clinical_accuracy("Reassure  the patient.", "reassure the PATIENT")
    assert (value, breakdown["method"]) == (1.0, "string")
    value, breakdown = clinical_accuracy("Reassure the patient.", "Discharge home.")
    assert (value, breakdown["method"]) == (0.0, "string")
    assert all(v == {"matched": [], "missed": [], "extra": []} for v in breakdown["categories"].values())
    # entities in one text only: J_w = 0 by the entity method, not the fallback
    value, breakdown = clinical_accuracy("Aspirin.", "Discharge home.")
    assert (value, breakdown["method"]) == (0.0, "entities")


def case(**ref: Any) -> Case:
    return Case(id="c1", input=CaseInput(question="q"), reference=Reference(**ref))


def ctx(c: Case, output: SystemOutput) -> ScoringContext:
    return ScoringContext(case=c, output=output)


def test_scorer_text_structured_failed_and_missing_reference() -> None:
    scorer = SCORERS.get("clinical_accuracy")({})
    c = case(answer_text="Heart failure; start furosemide.")
    score = scorer(ctx(c, SystemOutput(text="Congestive heart failure: give furosemide")))
    assert score.value == 1.0 and score.label == "entities"
    structured = StructuredOutput.model_validate(
        {
            "differential": [
                {"diagnosis": "CHF", "status": "proposed"},
                {"diagnosis": "Pneumonia", "status": "excluded"},
            ],
            "recommended_actions": [{"action": "IV furosemide", "category": "medication"}],
        }
    )
    out = SystemOutput(text="ignored when structured has content", structured=structured)
    assert output_text(ctx(c, out)) == "CHF\nIV furosemide"
    assert scorer(ctx(c, out)).value == 1.0
    failed = SystemOutput(error=ErrorInfo(kind="timeout", message="took too long"))
    assert (scorer(ctx(c, failed)).value, scorer(ctx(c, failed)).label) == (0.0, "failed")
    missing = scorer(ctx(case(), SystemOutput(text="x")))
    assert math.isnan(missing.value) and missing.label == "no_reference"


def test_reference_order() -> None:
    out = SystemOutput(text="x")
    assert reference_text(ctx(case(answer_text="A", data={"rationale": "B"}, differential=["C"]), out)) == "A"
    assert reference_text(ctx(case(data={"rationale": "B"}, differential=["C"]), out)) == "B"
    assert reference_text(ctx(case(differential=["C", "D"]), out)) == "C\nD"


def test_options_and_metric() -> None:
    scorer = make_clinical_accuracy_scorer({"weights": {"diagnoses": 1.0}, "seed": 3})
    c = case(answer_text="Pneumonia treated with ceftriaxone.")
    # only diagnoses weighted: medications disagree but the value is 1.0
    s1 = scorer(ctx(c, SystemOutput(text="Pneumonia; give azithromycin")))
    assert s1.value == 1.0
    s2 = scorer(ctx(c, SystemOutput(text="Sepsis")))
    assert s2.value == 0.0
    values: dict[str, Any] = {}
    for metric in scorer.metrics:
        values.update(metric.compute([s1, s2]))
    assert values["clinical_accuracy"] == 0.5 and values["n"] == 2
    lo, hi = values["clinical_accuracy_ci"]
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0
    with pytest.raises(ValidationError):
        make_clinical_accuracy_scorer({"weights": {"diagnoses": -1.0}})
    with pytest.raises(ValidationError):
        make_clinical_accuracy_scorer({"weights": {"vitals": 1.0}})
    with pytest.raises(ValidationError):
        make_clinical_accuracy_scorer({"wieghts": {}})
    assert DEFAULT_WEIGHTS == W
