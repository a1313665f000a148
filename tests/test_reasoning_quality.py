"""ReasoningQuality: each component on hand-computed examples, the composite, the scorer, and the
Open-XDDx validation (citing the annotated findings must raise the score)."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError
from scipy.stats import wilcoxon

from clineval.core import Case, CaseInput, Reference, ScoringContext, SystemOutput
from clineval.core.output import DifferentialItem, ErrorInfo, StructuredOutput
from clineval.datasets import DATASETS
from clineval.quality.reasoning import (
    ReasoningQualityScorer,
    annotated_rationale,
    case_inputs,
    composite,
    reasoning_text,
)
from clineval.quality.reasoning_parts import (
    evidence_use,
    factual_consistency,
    fallacy_penalty,
    overlap_f1,
    salient_facts,
    structure,
)
from clineval.scoring.registry import SCORERS
from tests.helpers import shared_data

# --- overlap_f1 --------------------------------------------------------------------------------------


def test_overlap_f1_is_squad_f1_over_content_stem_multisets() -> None:
    # pred {fever: 2, cough: 1}, ref {fever, cough, rash}: common = min(2, 1) + 1 = 2 -> P = R = 2/3
    assert overlap_f1("fever and cough with fever", "fever, cough, rash") == pytest.approx(2 / 3)
    # pred {fever, cough} (2), ref {fever, cough, rash, headache} (4): P = 1, R = 1/2, F1 = 2/3
    assert overlap_f1("Fevers; coughing.", "fever cough rash headache") == pytest.approx(2 / 3)
    assert overlap_f1("rash", "fever") == 0.0


def test_overlap_f1_empty_sides_follow_squad() -> None:
    assert overlap_f1("", "") == 1.0
    assert overlap_f1("the and of", "") == 1.0  # stop words only = empty
    assert overlap_f1("fever", "") == 0.0
    assert overlap_f1("", "fever") == 0.0


# --- structure ---------------------------------------------------------------------------------------


def test_structure_counts_steps_differential_conclusion_thirds() -> None:
    assert structure("1. Fever.\n2. Cough.\nTherefore pneumonia.") == pytest.approx(2 / 3)
    assert structure("Pneumonia versus bronchitis.") == pytest.approx(1 / 3)
    assert (
        structure("First the fever, then the rash; the differential is wide. In conclusion, measles.") == 1.0
    )
    assert structure("Pneumonia.") == 0.0
    assert structure("Pneumonia.", n_candidates=2) == pytest.approx(1 / 3)
    assert structure("1. Fever only.") == 0.0  # one numbered line is not a sequence of steps


# --- evidence_use ------------------------------------------------------------------------------------


def test_evidence_use_is_fraction_of_distinct_findings_cited() -> None:
    text = "Creatinine 4.2 mg/dL with decreased urine output"
    findings = ["decreased urinary output", "Creatinine 4.2 mg/dL", "eosinophils 11%", "malaise", "Malaise."]
    # distinct: 4 (malaise twice); cited: urinary output (stems decreas, urin, output), creatinine -> 2/4
    assert evidence_use(text, findings) == 0.5
    assert evidence_use(text, []) is None
    assert evidence_use(text, ["the", "of"]) is None


def test_salient_facts_without_annotations() -> None:
    vignette = "Her pulse is 93/min. Creatinine 4.2 mg/dL. Examination shows enlarged cervical lymph nodes."
    facts = salient_facts(vignette)
    assert facts == ["Her pulse 93 /min", "Creatinine 4.2 mg/dL", "enlarged cervical lymph nodes"]
    assert evidence_use("pulse 93/min, creatinine 4.2 mg/dL", facts) == pytest.approx(2 / 3)


# --- factual_consistency ------------------------------------------------------------------------------

VIGNETTE = "Creatinine 4.2 mg/dL. Pulse is 93/min. Blood pressure 125/85 mm Hg. A 61-year-old man."


def test_factual_consistency_is_one_minus_contradicted_over_stated() -> None:
    text = "creatinine of 2.1 mg/dL, pulse 93/min, blood pressure 125/80 mm Hg, sodium 140 mmol/L"
    # stated (the vignette has a value for the entity): creatinine, pulse, BP = 3 (sodium is not in it);
    # contradicted: creatinine 2.1 != 4.2, BP 125/80 != 125/85 -> 1 - 2/3
    assert factual_consistency(text, VIGNETTE) == pytest.approx(1 / 3)
    assert factual_consistency("Creatinine 4.2 mg/dL, pulse 93/min.", VIGNETTE) == 1.0
    assert factual_consistency("Acute kidney injury.", VIGNETTE) == 1.0  # nothing stated
    assert factual_consistency("pulse 93/min", "") == 1.0
    # a different unit is a different quantity: not compared
    assert factual_consistency("creatinine 371 µmol/L", VIGNETTE) == 1.0


# --- fallacy_penalty ---------------------------------------------------------------------------------


def test_fallacy_patterns_and_penalties() -> None:
    assert fallacy_penalty("This is obviously pneumonia.")[0] == pytest.approx(0.4)
    assert fallacy_penalty("Obviously pneumonia. The differential includes bronchitis.")[0] == pytest.approx(
        0.4
    )
    assert fallacy_penalty("Differential: pneumonia vs bronchitis. It is clearly pneumonia.")[0] == 0.0
    assert fallacy_penalty("Pulmonary embolism must be ruled out.")[0] == 0.0
    assert fallacy_penalty("It is definitely sepsis.")[0] == pytest.approx(0.3)
    assert fallacy_penalty("It is definitely sepsis given a lactate of 4.")[0] == 0.0
    penalty, found = fallacy_penalty("He has sepsis because he has sepsis.")
    assert penalty == pytest.approx(0.3) and [f.pattern for f in found] == ["circular"]
    penalty, found = fallacy_penalty("The patient has lupus. Therefore the patient has lupus.")
    assert penalty == pytest.approx(0.3) and found[0].pattern == "circular"
    # 0.4 + 0.4 + 0.3 + 0.3 = 1.4, capped at 1
    penalty, found = fallacy_penalty(
        "Obviously sepsis. It is definitely sepsis. He has sepsis because he has sepsis. Clearly."
    )
    assert penalty == 1.0
    assert sorted(f.pattern for f in found) == [
        "circular", "premature_closure", "premature_closure", "unsupported_certainty"]  # fmt: skip


# --- composite ---------------------------------------------------------------------------------------


def test_composite_weights_renormalisation_and_clipping() -> None:
    parts = {"overlap_f1": 0.5, "structure": 1.0, "evidence_use": 0.5, "factual_consistency": 1.0}
    # 0.25*0.5 + 0.2*1 + 0.3*0.5 + 0.25*1 = 0.725; minus 0.2 * 0.4
    assert composite(parts, 0.4) == pytest.approx(0.645)
    # evidence not applicable: (0.125 + 0.2 + 0.25) / 0.7 - 0.08
    assert composite({**parts, "evidence_use": None}, 0.4) == pytest.approx(0.575 / 0.7 - 0.08)
    assert composite(dict.fromkeys(parts, 0.0), 1.0) == 0.0
    assert composite(dict.fromkeys(parts, 1.0), 0.0) == 1.0


# --- the scorer --------------------------------------------------------------------------------------

CASE = Case(
    id="c1",
    input=CaseInput(vignette="A 60-year-old man has fever and cough. Creatinine 4.2 mg/dL."),
    reference=Reference(
        differential=["pneumonia", "acute kidney injury"],
        findings={"pneumonia": ["fever", "cough"], "acute kidney injury": ["Creatinine 4.2 mg/dL"]},
    ),
)


def test_scorer_hand_computed_case() -> None:
    reasoning = [
        "1. Fever and cough suggest pneumonia.",
        "2. Creatinine 2.0 mg/dL.",
        "Therefore pneumonia is most likely.",
    ]
    out = SystemOutput(structured=StructuredOutput(reasoning=reasoning))
    score = SCORERS.get("reasoning_quality")({})(ScoringContext(case=CASE, output=out))
    b = score.breakdown
    # reference rationale = "fever. cough. Creatinine 4.2 mg/dL": stems fever cough creatinin 4.2 dl (5);
    # reasoning: 1 fever cough pneumonia 2 creatinin 2.0 dl therefor pneumonia (10); common 4:
    # P = 0.4, R = 0.8, F1 = 0.64 / 1.2
    assert b["overlap_f1"] == pytest.approx(0.64 / 1.2)
    assert b["structure"] == pytest.approx(2 / 3)  # steps, conclusion; no differential
    assert b["evidence_use"] == 1.0  # fever, cough; "creatinine ... mg/dL": 2 of 3 stems >= 0.6
    assert b["factual_consistency"] == 0.0  # creatinine 2.0 contradicts 4.2 mg/dL
    assert b["values_contradicted"] == ["Creatinine 2.0 mg/dL"]
    assert b["fallacy_penalty"] == 0.0 and isinstance(b["fallacy_penalty"], float)
    expected = 0.25 * 0.64 / 1.2 + 0.2 * 2 / 3 + 0.3 * 1.0 + 0.25 * 0.0
    assert score.value == pytest.approx(expected) and score.label == "scored"
    assert b["weights"]["fallacy"] == 0.2


def test_scorer_inputs_and_edge_cases() -> None:
    scorer = ReasoningQualityScorer()
    diff = StructuredOutput(differential=[DifferentialItem(diagnosis="pneumonia", reasoning="fever"),
                                          DifferentialItem(diagnosis="flu")])  # fmt: skip
    assert reasoning_text(SystemOutput(structured=diff)) == ("pneumonia: fever\nflu", 2)
    assert reasoning_text(SystemOutput(text="plain")) == ("plain", 0)
    with_rationale = CASE.model_copy(update={"reference": Reference(data={"rationale": ["a", "b"]})})
    rationale, findings, _ = case_inputs(with_rationale)
    assert rationale == "a\nb" and findings == ["Creatinine 4.2 mg/dL"]  # salient facts of the vignette
    failed = SystemOutput(error=ErrorInfo(kind="timeout", message="slow"))
    assert math.isnan(scorer(ScoringContext(case=CASE, output=failed)).value)
    empty = scorer(ScoringContext(case=CASE, output=SystemOutput(text=" ")))
    assert (empty.value, empty.label) == (0.0, "no_reasoning")
    with pytest.raises(ValidationError):
        SCORERS.get("reasoning_quality")({"weights": {"style": 1.0}})
    with pytest.raises(ValidationError):
        SCORERS.get("reasoning_quality")({"bogus": 1})
    names = {
        k
        for m in scorer.metrics
        for k in m.compute([scorer(ScoringContext(case=CASE, output=SystemOutput(text="fever")))])
    }
    assert {
        "reasoning_quality",
        "reasoning_quality_ci",
        "reasoning_evidence_use",
        "reasoning_fallacy_penalty",
        "n",
    } <= names


# --- Open-XDDx validation ----------------------------------------------------------------------------


def test_open_xddx_citing_findings_scores_higher_in_every_case() -> None:
    path = shared_data("open_xddx", "open_xddx.jsonl")
    cases = DATASETS.get("open_xddx")({"path": str(path)}, path.parent).cases
    scorer = ReasoningQualityScorer()

    def value(case: Case, cite: bool) -> float:
        text = annotated_rationale(case.reference.findings, cite=cite)
        return scorer(ScoringContext(case=case, output=SystemOutput(text=text))).value

    with_f = [value(c, True) for c in cases]
    without_f = [value(c, False) for c in cases]
    diffs = [a - b for a, b in zip(with_f, without_f, strict=True)]
    assert len(cases) == 570
    assert sum(d > 0 for d in diffs) == 570  # measured: every case (min difference 0.162)
    assert sum(with_f) / 570 == pytest.approx(0.8738, abs=1e-4)
    assert sum(without_f) / 570 == pytest.approx(0.4632, abs=1e-4)
    assert wilcoxon(with_f, without_f).pvalue < 1e-90
