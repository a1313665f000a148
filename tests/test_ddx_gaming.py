"""The DDx gaming the metric robustness audit found (issue 22; docs/runs/audit.md "Findings",
docs/ddx/ddx_scoring.md), each fixed in the scoring and checked here with values by hand:

1. every diagnosis listed: a list is scored on its first ``max_differential`` (K = 10) distinct diagnoses;
2. ``status: excluded`` alone: an exclusion of a ground truth needs support, else it is an FN;
3. the vignette copied into a can't-miss turn: a quotation of the case is no citation of a finding, and a
   sentence naming more than two of the differential's diagnoses supports none of them;
4. every treatment given in triage: agents of more than 8 action-map rows are a shotgun and none counts.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from clineval.core import Case, CaseInput, ScoringContext, StructuredOutput, SystemOutput
from clineval.core.case import Reference
from clineval.core.output import DifferentialItem as D
from clineval.core.output import TranscriptTurn as T
from clineval.ddx.classify import first_k
from clineval.ddx.scorer import DdxOptions, DdxScorer, classify_differential, ddx_scores
from clineval.ddx.support import CaseFindings
from clineval.ddx.treatment import given_actions, load_action_map, shotgun

# ---------------------------------------------------------------- 1. the first K diagnoses

NAMES = [f"Zorblax disease {i}" for i in range(1, 13)]  # 12 distinct made-up names


def test_only_the_first_k_distinct_diagnoses_are_scored() -> None:
    gt = [NAMES[2], NAMES[10]]  # ranks 3 and 11
    c = classify_differential(gt, [D(diagnosis=n) for n in NAMES])
    assert c.beyond_k == 2 and c.counts["TP"] == 1 and c.counts["FP"] == 9 and c.counts["FN"] == 1
    s = ddx_scores(c)
    assert s["recall"] == pytest.approx(1 / 2)  # was 2 / 2 with the whole list
    assert s["precision"] == pytest.approx(1 / 10)  # 1 TP / (1 TP + 9 FP); the 2 past K are not counted
    assert s["clinical_reasoning_quality"] == pytest.approx(1 / 11)  # 1 / (2 GT + 9 FP)
    assert s["reciprocal_rank"] == pytest.approx(1 / 3)
    whole = classify_differential(gt, [D(diagnosis=n) for n in NAMES], max_differential=None)
    assert whole.beyond_k == 0 and ddx_scores(whole)["recall"] == pytest.approx(1.0)
    five = classify_differential(gt, [D(diagnosis=n) for n in NAMES], max_differential=5)
    assert five.beyond_k == 7 and ddx_scores(five)["recall"] == pytest.approx(1 / 2)


def test_k_counts_distinct_names_of_any_status() -> None:
    items = [D(diagnosis="Flu"), D(diagnosis="flu"), D(diagnosis="Gout", status="alternative")]
    kept, beyond = first_k(items, 2)
    assert [i.diagnosis for i in kept] == ["Flu", "flu", "Gout"] and beyond == 0  # "flu" repeats "Flu"
    kept, beyond = first_k([*items, D(diagnosis="Asthma", status="excluded")], 2)
    assert beyond == 1 and kept[-1].diagnosis == "Gout"
    # listing every diagnosis as an alternative gains no more than as proposed items
    alts = classify_differential([NAMES[10]], [D(diagnosis=n, status="alternative") for n in NAMES])
    assert alts.counts["TP"] == 0 and alts.beyond_k == 2


def test_ks_past_k_are_refused_and_the_scorer_reports_truncation() -> None:
    with pytest.raises(ValidationError, match="max_differential 5"):
        DdxOptions(max_differential=5)  # the default ks reach 10
    assert DdxOptions(max_differential=5, ks=(1, 5)).max_differential == 5
    assert DdxOptions(max_differential=None).max_differential is None
    scorer = DdxScorer()
    case = Case(id="c", input=CaseInput(vignette="v"), reference=Reference(differential=[NAMES[0]]))

    def output(n: int) -> SystemOutput:
        return SystemOutput(structured=StructuredOutput(differential=[D(diagnosis=x) for x in NAMES[:n]]))

    scores = [scorer(ScoringContext(case=case, output=output(n))) for n in (12, 3)]
    long, short = (s.breakdown for s in scores)
    assert (long["beyond_k"], long["truncated"], short["beyond_k"], short["truncated"]) == (2, True, 0, False)
    values: dict[str, object] = {}
    for metric in scorer.metrics:
        values.update(metric.compute(scores))
    assert values["truncated_rate"] == pytest.approx(1 / 2)  # one list of two is longer than 10


# ---------------------------------------------------------------- 2. an exclusion needs support

MENINGITIS = "A 19-year-old has fever and a headache for a day. There is no neck stiffness; no rash."
GT2 = ["viral infection", "bacterial meningitis"]


def _excluded(
    reasoning: str | None, turns: list[T] | None = None, mode: str = "transcript"
) -> tuple[dict[str, float | bool | None], str, str]:
    diff = [
        D(diagnosis="Viral infection"),
        D(diagnosis="Bacterial meningitis", status="excluded", reasoning=reasoning),
    ]
    c = classify_differential(GT2, diff, turns, case_text=MENINGITIS, caa_support=mode)  # type: ignore[arg-type]
    d = next(x for x in c.decisions if x.ground_truth == "bacterial meningitis")
    assert c.ae_unsupported == (d.cls == "FN")
    return ddx_scores(c), d.cls, d.explanation


def test_status_excluded_alone_is_no_exclusion() -> None:
    scores, cls, why = _excluded("ruled out")
    assert cls == "FN" and why.startswith("excluded without support: 'Bacterial meningitis'")
    assert scores["clinical_reasoning_quality"] == pytest.approx(1 / 2)  # (1 TP + 0 AE) / 2; was 2 / 2
    old, cls, _ = _excluded("ruled out", mode="label")  # the status alone, the behaviour before issue 22
    assert cls == "AE" and old["clinical_reasoning_quality"] == pytest.approx(1.0)


def test_an_exclusion_the_transcript_or_the_reasoning_supports_is_ae() -> None:
    turn = T(
        round=2,
        agent="neuro",
        phase="refinement",
        text="Bacterial meningitis is unlikely: no neck stiffness.",
    )
    scores, cls, _ = _excluded("ruled out", [turn])
    assert cls == "AE" and scores["clinical_reasoning_quality"] == pytest.approx(1.0)  # (1 + 1) / 2
    kept_open = T(round=2, agent="neuro", phase="refinement", text="Bacterial meningitis must be considered.")
    assert _excluded("ruled out", [kept_open])[1] == "FN"
    # the item's own reasoning, with transcript_or_reasoning: a pertinent negative of the case counts
    assert _excluded("no neck stiffness", mode="transcript_or_reasoning")[1] == "AE"
    assert _excluded("ruled out", mode="transcript_or_reasoning")[1] == "FN"  # cites nothing
    assert _excluded("no neck stiffness")[1] == "FN"  # the default reads the transcript only


# ---------------------------------------------------------------- 3. support must be specific

CASE3 = (
    "A 45-year-old woman has fever, a productive cough and pleuritic chest pain. Her pulse is 112/min. "
    "She flew back from Sydney yesterday."
)
WRONG = ["Pulmonary embolism", "Heart failure", "Lung cancer"]


def _alternatives(text: str) -> list[str]:
    diff = [D(diagnosis="Pneumonia")] + [D(diagnosis=n, status="alternative") for n in WRONG]
    turns = [T(round=6, agent="critic", phase="cant_miss", text=text)]
    c = classify_differential(["pneumonia"], diff, turns, case_text=CASE3)
    return [d.system or "" for d in c.of("CAA")]


def test_a_copy_of_the_case_is_a_quotation_not_a_citation() -> None:
    copied = " ".join(f"Consider {n} given {CASE3}" for n in WRONG)
    assert _alternatives(copied) == []  # was all three
    assert _alternatives("Consider pulmonary embolism given pleuritic chest pain.") == ["Pulmonary embolism"]
    # a quotation beside a short finding of the case: the finding still counts
    quoted = (
        "Pulmonary embolism since she flew back from Sydney and has fever, a productive cough and pleuritic "
        "chest pain."
    )
    assert _alternatives(quoted) == ["Pulmonary embolism"]
    findings = CaseFindings.of(CASE3)
    # "has fever a productive cough and pleuritic chest" ... 8 words and more of the case: cut out
    assert (
        findings.unquoted("She has fever, a productive cough and pleuritic chest pain today.")
        == "she.\ntoday"
    )
    assert (
        findings.unquoted("fever and pleuritic chest pain") == "fever and pleuritic chest pain"
    )  # no run of 8
    assert findings.cited_in(f"Consider it given {CASE3}") == []


def test_a_sentence_naming_many_diagnoses_supports_none() -> None:
    shotgun_text = (
        "Pulmonary embolism, heart failure and lung cancer cannot be missed given pleuritic chest pain."
    )
    assert _alternatives(shotgun_text) == []
    two = "Pulmonary embolism and heart failure cannot be missed given pleuritic chest pain."
    assert _alternatives(two) == ["Pulmonary embolism", "Heart failure"]
    diff = [D(diagnosis="Pneumonia")] + [D(diagnosis=n, status="alternative") for n in WRONG]
    c = classify_differential(
        ["pneumonia"], diff, [T(round=6, agent="c", phase="cant_miss", text=two)], case_text=CASE3
    )
    # (TP 1 + 0.5 * CAA 2) / (TP 1 + CAA 2 + FP 1)
    assert ddx_scores(c)["diagnostic_safety"] == pytest.approx(2 / 4)


# ---------------------------------------------------------------- 4. a shotgun of treatments

CASE4 = (
    "A 2-year-old boy has had vomiting and diarrhoea for 3 days. He is lethargic with dry mucous membranes; "
    "his pulse is 160/min and blood pressure is 70/40 mm Hg."
)
GT4 = ["viral gastroenteritis", "dehydration"]
# 7 agents of 8 rows (salbutamol is in two: bronchodilators and hyperkalaemia)
EIGHT_ROWS = (
    "Start IV normal saline bolus 20 mL/kg. Give oxygen. Give ondansetron. Give salbutamol. "
    "Give prednisolone. Give ceftriaxone. Give heparin."
)


def _treated(text: str) -> tuple[str, float | bool | None, int]:
    turns = [T(round=1, agent="triage", phase="triage", text=text)]
    c = classify_differential(GT4, [D(diagnosis="Viral gastroenteritis")], turns, case_text=CASE4)
    d = next(x for x in c.decisions if x.ground_truth == "dehydration")
    return d.cls, ddx_scores(c)["system_safety_coverage"], c.shotgun_rows


def test_treating_everything_treats_nothing() -> None:
    turn = [T(round=1, agent="t", phase="triage", text=EIGHT_ROWS + " Give naloxone.")]
    assert len({a.row for a in given_actions(turn)}) == 9
    cls, ssc, rows = _treated(EIGHT_ROWS)
    assert (cls, ssc, rows) == ("TM-SM", 1.0, 0)  # 8 rows: no shotgun; SSC (1 TP + 1 TM-SM) / 2
    cls, ssc, rows = _treated(EIGHT_ROWS + " Give naloxone.")
    assert (cls, ssc, rows) == ("FN", 0.5, 9)  # 9 rows > 8: none counts; SSC 1 / 2
    turns = [T(round=1, agent="t", phase="triage", text=EIGHT_ROWS + " Give naloxone.")]
    c = classify_differential(GT4, [D(diagnosis="Viral gastroenteritis")], turns, case_text=CASE4)
    d = next(x for x in c.decisions if x.ground_truth == "dehydration")
    assert "shotgun treatment (agents of 9 action-map rows given, more than 8)" in d.explanation
    loose = classify_differential(
        GT4, [D(diagnosis="Viral gastroenteritis")], turns, case_text=CASE4, max_treatment_rows=None
    )
    assert loose.counts["TM-SM"] == 1 and loose.shotgun_rows == 0


def test_the_audit_s_treat_everything_is_a_shotgun() -> None:
    agents = dict.fromkeys(a for row in load_action_map().rows for a in row.actions)
    text = " ".join(f"Give {a}." for a in agents)
    actions = given_actions([T(round=1, agent="t", phase="triage", text=text)])
    assert shotgun(actions) > 8 and shotgun(actions, None) == 0
    assert _treated(text)[0] == "FN"
