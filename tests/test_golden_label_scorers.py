"""The golden-set labels scored (issue 22 item 9): expected problems, evidence source types, severity.

Per scorer: its formula on small cases worked out by hand, its labels, and what a system that knows
nothing reaches on the 102 golden-set cases (empty output, a constant answer, every problem listed,
every source type cited, a hedged severity): never more than a trivial baseline (the best constant
answer, or a constant citation of one generic guideline), while the labels themselves score 1.0.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clineval.cds.golden.severity import cohen_kappa, severity_level
from clineval.core import Case, CaseInput, Reference, Score, ScoringContext, StructuredOutput, SystemOutput
from clineval.scoring.registry import SCORERS

ROOT = Path(__file__).resolve().parents[1]
ROWS = [json.loads(x) for x in (ROOT / "data/golden_set/golden_set_v2.jsonl").read_text().splitlines()]
ALL_PROBLEMS = sorted({p for r in ROWS for p in r["reference"]["expected_problems"]})
PATIENT: dict[str, Any] = {
    "age": 70,
    "conditions": ["heart failure"],
    "medications": ["ramipril 5 mg", "apixaban 5 mg bd"],
    "labs": [
        {"name": "BNP", "value": 900, "unit": "pg/mL"},
        {"name": "potassium", "value": 4.4, "unit": "mmol/L"},
    ],
    "cxr": ["pulmonary oedema", "small bilateral effusions"],
    "note": "70-year-old with three days of worsening breathlessness and ankle swelling.",
}


def out(**structured: Any) -> SystemOutput:
    return SystemOutput(structured=StructuredOutput.model_validate(structured))


def case(reference: dict[str, Any], patient: dict[str, Any] | None = None) -> Case:
    return Case(
        id="c",
        input=CaseInput(question="q", data={"patient": patient or PATIENT}),
        reference=Reference(data=reference),
    )


def score(name: str, reference: dict[str, Any], output: SystemOutput) -> Score:
    return SCORERS.get(name)({})(ScoringContext(case=case(reference), output=output))


def golden(name: str, make: Callable[[dict[str, Any]], SystemOutput]) -> dict[str, Any]:
    """The scorer's metrics over the golden set, each case answered by ``make(row)``."""
    scorer = SCORERS.get(name)({})
    scores = [scorer(ScoringContext(case=case(r["reference"], r["patient"]), output=make(r))) for r in ROWS]
    found: dict[str, Any] = {}
    for metric in scorer.metrics:
        found.update(metric.compute(scores))
    return found


# ---- problems_identified ------------------------------------------------------------------------------


def test_problem_recall_precision_and_jaccard_by_hand() -> None:
    ref = {"expected_problems": ["heart failure", "volume overload"]}
    # "Heart failure" matches; "Heart failure (HF)" names it again (one to one: extra); hypertension extra
    s = score(
        "problems_identified", ref, out(problems=["Heart failure", "Hypertension", "Heart failure (HF)"])
    )
    assert (s.label, s.value) == ("partial", pytest.approx(1 / 4))  # m = 1: 1 / (2 + 3 - 1)
    assert (s.breakdown["recall"], s.breakdown["precision"]) == (0.5, pytest.approx(1 / 3))
    assert s.breakdown["missed"] == ["volume overload"]
    assert s.breakdown["extra"] == ["Hypertension", "Heart failure (HF)"]
    # synonyms and abbreviations match; a broader (ancestor) name does not
    nstemi = {"expected_problems": ["NSTEMI", "community-acquired pneumonia"]}
    s = score("problems_identified", nstemi, out(problems=["Non-ST elevation myocardial infarction", "CAP"]))
    assert (s.label, s.value, s.breakdown["precision"]) == ("all_found", 1.0, 1.0)
    s = score("problems_identified", nstemi, out(problems=["Acute coronary syndrome", "Lung infection"]))
    assert (s.label, s.value) == ("none_found", 0.0)
    # without a problem list the proposed differential stands for it (excluded / alternative items do not)
    differential = [
        {"diagnosis": "NSTEMI", "status": "proposed"},
        {"diagnosis": "Community-acquired pneumonia", "status": "excluded"},
        {"diagnosis": "Pulmonary embolism", "status": "alternative"},
    ]
    s = score("problems_identified", nstemi, out(differential=differential))
    assert (s.value, s.breakdown["recall"], s.breakdown["precision"]) == (0.5, 0.5, 1.0)


def test_problem_labels_without_a_list_a_call_or_a_reference() -> None:
    ref = {"expected_problems": ["heart failure"]}
    s = score("problems_identified", ref, out(recommended_actions=[{"action": "Furosemide"}]))
    assert (s.label, s.value, s.breakdown["precision"]) == ("no_problem_list", 0.0, None)
    s = score("problems_identified", ref, SystemOutput.failure("timeout", "60 s"))
    assert (s.label, s.value, s.breakdown["error"]) == ("failed", 0.0, "timeout")
    s = score("problems_identified", {}, out(problems=["Heart failure"]))
    assert s.label == "no_reference" and math.isnan(s.value)
    # the text read as JSON when there is no structured output
    s = score("problems_identified", ref, SystemOutput(text=json.dumps({"problems": ["CHF"]})))
    assert (s.label, s.value) == ("all_found", 1.0)


def test_listing_every_problem_does_not_beat_the_best_constant_answer() -> None:
    labels = golden("problems_identified", lambda r: out(problems=r["reference"]["expected_problems"]))
    assert labels["problem_jaccard"] == labels["problem_recall"] == labels["problem_precision"] == 1.0
    empty = golden("problems_identified", lambda r: out(problems=[]))
    assert empty["problem_jaccard"] == empty["problem_recall"] == 0.0 and math.isnan(
        empty["problem_precision"]
    )
    every = golden("problems_identified", lambda r: out(problems=ALL_PROBLEMS))
    constants = {
        p: golden("problems_identified", lambda r, p=p: out(problems=[p]))["problem_jaccard"]
        for p in ALL_PROBLEMS
    }
    best = max(constants.values())
    assert every["problem_recall"] == 1.0  # why recall does not gate
    assert every["problem_jaccard"] < best  # the gating metric is not inflated by listing everything
    assert best == pytest.approx(constants["community-acquired pneumonia"])


# ---- evidence_types_cited ------------------------------------------------------------------------------

ALL_TYPES = {"evidence_source_types": ["guideline", "note", "lab", "imaging", "drug"]}


def test_only_cited_and_grounded_rows_cover_a_type() -> None:
    table = [
        {"id": "g", "source_type": "guideline", "doc_id": "ESC 2021 HF guideline"},
        {"id": "l", "source_type": "lab", "text": "BNP 900 pg/mL"},
        {"id": "l2", "source_type": "lab", "text": "Potassium 5.9 mmol/L"},  # not the patient's value
        {"id": "i", "source_type": "imaging", "text": "CXR shows pulmonary oedema"},
        {
            "id": "n",
            "source_type": "note",
            "text": "worsening breathlessness and ankle swelling",
        },  # cited by none
        {"id": "d", "source_type": "drug", "text": "Drug interactions database"},  # names no drug of the case
    ]
    actions = [
        {"action": "IV furosemide", "evidence_refs": ["g", "l", "i"]},
        {"action": "Check renal function", "evidence_refs": ["l2", "d", "missing-row"]},
    ]
    s = score("evidence_types_cited", ALL_TYPES, out(recommended_actions=actions, evidence_table=table))
    assert (s.label, s.value) == ("partial", 3 / 5)
    assert s.breakdown["covered"] == ["guideline", "lab", "imaging"]
    assert s.breakdown["missing"] == ["note", "drug"]
    assert s.breakdown["ungrounded"] == [
        {"id": "l2", "source_type": "lab"},
        {"id": "d", "source_type": "drug"},
    ]
    assert s.breakdown["uncited_types"] == ["note"]
    # the note quoted and a drug the patient takes: every type covered
    actions[1]["evidence_refs"] = ["n", "d2"]
    table.append({"id": "d2", "source_type": "drug", "text": "Apixaban SmPC, section 4.5"})
    s = score("evidence_types_cited", ALL_TYPES, out(recommended_actions=actions, evidence_table=table))
    assert (s.label, s.value) == ("covered", 1.0)


def test_evidence_labels() -> None:
    table = [{"id": "g", "source_type": "guideline", "doc_id": "NICE"}]
    s = score(
        "evidence_types_cited", ALL_TYPES, out(recommended_actions=[{"action": "x"}], evidence_table=table)
    )
    assert (s.label, s.value) == ("no_citations", 0.0)
    s = score("evidence_types_cited", ALL_TYPES, SystemOutput.failure("http_500", "down"))
    assert (s.label, s.value) == ("failed", 0.0)
    s = score("evidence_types_cited", {"evidence_source_types": []}, out())
    assert s.label == "no_reference" and math.isnan(s.value)


def _constant(rows: list[dict[str, Any]], refs: list[str]) -> SystemOutput:
    return out(
        recommended_actions=[{"action": "Treat the patient", "evidence_refs": refs}], evidence_table=rows
    )


FABRICATED = [
    {"id": "g", "source_type": "guideline", "doc_id": "Generic guideline"},
    {"id": "n", "source_type": "note", "text": "clinical note reviewed"},
    {"id": "l", "source_type": "lab", "text": "labs reviewed: potassium, BNP, troponin, urea, WBC, CRP"},
    {
        "id": "i",
        "source_type": "imaging",
        "text": "chest x-ray: consolidation, effusion, oedema, hyperinflation",
    },
    {"id": "d", "source_type": "drug", "text": "drug information"},
]


def _quoting(row: dict[str, Any]) -> SystemOutput:
    """Rows quoting the case's own record, one per type the record holds."""
    p = row["patient"]
    table = [
        {"id": "g", "source_type": "guideline", "doc_id": "NICE"},
        {"id": "n", "source_type": "note", "text": p["note"]},
    ]
    if p["labs"]:
        lab = p["labs"][0]
        table.append({"id": "l", "source_type": "lab", "text": f"{lab['name']} {lab['value']} {lab['unit']}"})
    if p["cxr"]:
        table.append({"id": "i", "source_type": "imaging", "text": "CXR: " + p["cxr"][0]})
    elif p.get("measurements"):
        table.append(
            {
                "id": "i",
                "source_type": "imaging",
                "text": f"CT: {p['measurements']['nodule_size_mm']} mm nodule",
            }
        )
    if p["medications"]:
        table.append({"id": "d", "source_type": "drug", "text": p["medications"][0] + " SmPC"})
    return _constant(table, [r["id"] for r in table])


def test_citing_every_source_type_does_not_beat_a_generic_guideline_citation() -> None:
    baseline = golden("evidence_types_cited", lambda r: _constant(FABRICATED[:1], ["g"]))
    every = golden("evidence_types_cited", lambda r: _constant(FABRICATED, ["g", "n", "l", "i", "d"]))
    uncited = golden("evidence_types_cited", lambda r: _constant(FABRICATED, []))
    empty = golden("evidence_types_cited", lambda r: out())
    # by hand: a guideline citation covers 1/|E| of a case expecting a guideline: 74 cases expect all 5
    # types, 22 expect 4 with a guideline, 6 expect no guideline (no rule applies): (74/5 + 22/4) / 102
    types = [r["reference"]["evidence_source_types"] for r in ROWS]
    assert (
        sum(len(t) == 5 for t in types) == 74 and sum(len(t) == 4 and "guideline" in t for t in types) == 22
    )
    expected = (74 / 5 + 22 / 4) / 102
    assert baseline["evidence_type_coverage"] == pytest.approx(expected)
    assert every["evidence_type_coverage"] == pytest.approx(baseline["evidence_type_coverage"])
    assert uncited["evidence_type_coverage"] == empty["evidence_type_coverage"] == 0.0
    assert golden("evidence_types_cited", _quoting)["evidence_type_coverage"] == 1.0


# ---- severity_agreement --------------------------------------------------------------------------------


def test_severity_levels_and_kappa_by_hand() -> None:
    assert [severity_level(t) for t in ("Mild", "HIGH risk", "life-threatening", "Medium")] == [
        "low",
        "high",
        "critical",
        "moderate",
    ]
    assert severity_level("moderate to high") is None and severity_level("unclear") is None
    # expected low low high high, predicted low high high high: p_o 3/4, p_e .5 x .25 + .5 x .75 = .5
    assert cohen_kappa([("low", "low"), ("low", "high"), ("high", "high"), ("high", "high")]) == 0.5
    assert cohen_kappa([("low", "high"), ("high", "high")]) == 0.0  # a constant answer
    assert math.isnan(cohen_kappa([("low", "low"), ("low", "low")]))  # one category on both sides


def test_severity_scores_and_labels() -> None:
    ref = {"severity": "high"}
    cases = [
        (out(severity="Severe"), "agree", 1.0, True),
        (out(severity="critical"), "within_one", 0.0, True),
        (out(severity="low"), "disagree", 0.0, False),
        (out(severity="moderate to high"), "unparsed", 0.0, False),
        (out(), "no_severity", 0.0, False),
        (SystemOutput.failure("timeout", "60 s"), "failed", 0.0, False),
    ]
    for output, label, value, within in cases:
        s = score("severity_agreement", ref, output)
        assert (s.label, s.value, s.breakdown["within_one"]) == (label, value, within)
    assert score("severity_agreement", {"severity": "urgent"}, out(severity="high")).label == "no_reference"


def test_a_constant_or_hedged_severity_does_not_agree_beyond_chance() -> None:
    labels = golden("severity_agreement", lambda r: out(severity=r["reference"]["severity"]))
    assert labels["severity_kappa"] == labels["severity_accuracy"] == 1.0
    counts = {
        lv: sum(r["reference"]["severity"] == lv for r in ROWS)
        for lv in ("low", "moderate", "high", "critical")
    }
    assert counts == {"low": 16, "moderate": 51, "high": 16, "critical": 19}
    for level, n in counts.items():
        constant = golden("severity_agreement", lambda r, lv=level: out(severity=lv))
        assert constant["severity_kappa"] == pytest.approx(0.0, abs=1e-12)
        assert constant["severity_accuracy"] == pytest.approx(n / 102)  # why accuracy does not gate: 0.5
    hedged = golden("severity_agreement", lambda r: out(severity="low, moderate, high or critical"))
    assert hedged["severity_accuracy"] == hedged["severity_kappa"] == 0.0
    lo, hi = labels["severity_kappa_ci"]
    assert lo <= 1.0 <= hi


def test_the_scorers_are_registered_with_their_tiers() -> None:
    expected = {
        "problems_identified": (3, "problem_jaccard"),
        "evidence_types_cited": (2, "evidence_type_coverage"),
        "severity_agreement": (3, "severity_accuracy"),
    }
    for name, (tier, first) in expected.items():
        scorer = SCORERS.get(name)({})
        assert (scorer.name, getattr(scorer, "tier", None)) == (name, tier)
        assert first in scorer.metrics[0].compute([])
