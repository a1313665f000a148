"""CAA requires support (issue 22): an `alternative` is a clinically appropriate alternative only when a
can't-miss turn names it with a finding of the case; an unsupported one is an FP, labelled so. Expected values
by hand."""

from __future__ import annotations

import pytest

from clineval.core import Case, CaseInput, ScoringContext, StructuredOutput, SystemOutput
from clineval.core.case import Reference
from clineval.core.output import DifferentialItem as D
from clineval.core.output import TranscriptTurn as T
from clineval.ddx.classes import DdxClassification
from clineval.ddx.scorer import DdxOptions, DdxScorer, classify_differential, ddx_scores
from clineval.ddx.support import phase_key

CASE = (
    "A 45-year-old woman has fever, a productive cough and pleuritic chest pain. Her pulse is 112/min. "
    "She flew back from Sydney yesterday."
)
WRONG = ["Pulmonary embolism", "Heart failure", "Lung cancer"]


def _classify(
    status: str, turns: list[T] | None = None, mode: str = "transcript", reasoning: str | None = None
) -> DdxClassification:
    diff = [D(diagnosis="Pneumonia")] + [D(diagnosis=n, status=status, reasoning=reasoning) for n in WRONG]  # type: ignore[arg-type]
    return classify_differential(["pneumonia"], diff, turns, case_text=CASE, caa_support=mode)  # type: ignore[arg-type]


def test_relabelling_wrong_diagnoses_as_alternatives_gains_nothing() -> None:
    honest = ddx_scores(_classify("proposed"))
    # 1 TP, 3 FP: safety = precision = CRQ = 1 / 4
    assert honest["diagnostic_safety"] == pytest.approx(0.25)
    assert honest["clinical_reasoning_quality"] == pytest.approx(0.25)
    gamed = _classify("alternative")
    assert gamed.counts["CAA"] == 0 and gamed.counts["FP"] == 3 and gamed.caa_unsupported == 3
    assert all(d.explanation.startswith("alternative without can't-miss support") for d in gamed.of("FP"))
    assert {d.status for d in gamed.of("FP")} == {"alternative"}
    scores = ddx_scores(gamed)
    assert scores["diagnostic_safety"] == pytest.approx(0.25)  # was 0.625 before issue 22
    assert scores["clinical_reasoning_quality"] == pytest.approx(0.25)
    assert scores["precision"] == pytest.approx(0.25)


def test_label_mode_reproduces_the_old_gameable_number() -> None:
    old = _classify("alternative", mode="label")
    assert old.counts["CAA"] == 3 and old.caa_unsupported == 0
    # (TP + w*CAA) / (TP + CAA + FP) = (1 + 0.5*3) / 4
    assert ddx_scores(old, 0.5)["diagnostic_safety"] == pytest.approx(0.625)


def test_a_can_t_miss_turn_citing_a_case_finding_supports_the_alternative() -> None:
    turns = [
        T(
            round=6,
            agent="a",
            phase="cant_miss",
            text="Pulmonary embolism cannot be missed: pleuritic chest pain.",
        ),
        T(
            round=6,
            agent="b",
            phase="cant_miss",
            text="Heart failure is unlikely given no edema and a normal BNP.",
        ),
        T(round=6, agent="c", phase="cant_miss", text="Lung cancer can't be missed in a smoker."),
        T(round=4, agent="d", phase="debate", text="Heart failure fits the fever and cough."),
    ]
    c = _classify("alternative", turns)
    caa = c.of("CAA")
    assert [d.system for d in caa] == ["Pulmonary embolism"]
    ev = caa[0].evidence[0]
    assert (ev.source, ev.round, ev.phase, ev.agent) == ("transcript", 6, "cant_miss", "a")
    assert ev.trigger is not None and ev.trigger.startswith("cites chest pain")
    # ruled out in the can't-miss round; named there without a finding of the case; supported outside it
    assert {d.system for d in c.of("FP")} == {"Heart failure", "Lung cancer"} and c.caa_unsupported == 2
    # (1 + 0.5*1) / (1 + 1 + 2)
    assert ddx_scores(c, 0.5)["diagnostic_safety"] == pytest.approx(0.375)


def test_phase_names_compare_without_case_and_punctuation() -> None:
    assert phase_key("Can't Miss") == phase_key("cant_miss") == phase_key("CANT-MISS") == "cantmiss"
    turns = [T(round=1, agent="a", phase="Can't Miss", text="Pulmonary embolism: pleuritic chest pain.")]
    assert [d.system for d in _classify("alternative", turns).of("CAA")] == ["Pulmonary embolism"]


def test_negated_case_finding_is_not_evidence() -> None:
    c = classify_differential(
        ["pneumonia"],
        [D(diagnosis="Pneumonia"), D(diagnosis="Meningitis", status="alternative")],
        [T(round=1, agent="a", phase="cant_miss", text="Meningitis: headache and neck stiffness.")],
        case_text="He has a cough. He denies headache and has no neck stiffness.",
    )
    assert c.counts["CAA"] == 0 and c.caa_unsupported == 1


def test_reasoning_mode_accepts_the_item_s_own_reasoning_citing_the_case() -> None:
    cited = _classify(
        "alternative", mode="transcript_or_reasoning", reasoning="pleuritic chest pain, recent flight"
    )
    assert cited.counts["CAA"] == 3 and cited.of("CAA")[0].evidence[0].source == "differential"
    vague = _classify("alternative", mode="transcript_or_reasoning", reasoning="could be anything serious")
    assert vague.counts["CAA"] == 0 and vague.caa_unsupported == 3
    strict = _classify(
        "alternative", reasoning="pleuritic chest pain, recent flight"
    )  # default: transcript only
    assert strict.counts["CAA"] == 0


def _scorer_ctx(status: str) -> ScoringContext:
    case = Case(id="c", input=CaseInput(vignette=CASE), reference=Reference(differential=["pneumonia"]))
    diff = [D(diagnosis="Pneumonia")] + [D(diagnosis=n, status=status) for n in WRONG]  # type: ignore[arg-type]
    return ScoringContext(case=case, output=SystemOutput(structured=StructuredOutput(differential=diff)))


def test_scorer_breakdown_and_task_metric() -> None:
    scorer = DdxScorer()
    gamed = scorer(_scorer_ctx("alternative"))
    assert gamed.breakdown["caa_unsupported"] == 3 and gamed.breakdown["CAA"] == 0
    assert gamed.breakdown["diagnostic_safety"] == pytest.approx(0.25)
    values: dict[str, object] = {}
    for metric in scorer.metrics:
        values.update(metric.compute([gamed, scorer(_scorer_ctx("proposed"))]))
    assert values["caa_unsupported_share"] == pytest.approx(1.0)  # 3 / (3 + 0)
    assert values["diagnostic_safety"] == pytest.approx(0.25)
    label = DdxScorer(DdxOptions(caa_support="label"))(_scorer_ctx("alternative"))
    assert label.breakdown["diagnostic_safety"] == pytest.approx(0.625)
