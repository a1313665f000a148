"""Process metrics: TempoScore, credibility, weighted consensus, the ``process`` scorer, LDDx agreement."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from clineval.core import Case, CaseInput, Reference, ScoringContext, StructuredOutput, SystemOutput
from clineval.core import TranscriptTurn as Turn
from clineval.ddx.process.consensus import consensus
from clineval.ddx.process.credibility import credibility_scores, professional_valence, turn_credibility
from clineval.ddx.process.scorer import (
    ProcessScorer,
    debate_tempo,
    independent_tempo,
    is_high_value,
    make_process_scorer,
    tempo_scores,
)
from clineval.ddx.process.transcript import differential_from_text, normalize_diagnosis
from clineval.scoring.registry import SCORERS
from tests.helpers import shared_data

IND, DEB = "team_independent_differentials", "refinement_and_justification"


def turn(agent: str, text: str, phase: str, **extra: Any) -> Turn:
    return Turn(round=1, agent=agent, text=text, phase=phase, **extra)


# --- TempoScore ---------------------------------------------------------------------------------------


def test_independent_tempo_unique_and_total() -> None:
    turns = [
        turn("a", '{"AKI": ["oliguria"], "Vasculitis": ["rash", "biopsy"]}', IND),
        turn("b", '```json\n{"**aki**": ["creatinine"], "Sepsis": []}\n```', IND),
    ]
    assert independent_tempo(turns) == pytest.approx(1.3)  # aki, vasculitis, sepsis
    assert independent_tempo(turns, count="total") == pytest.approx(1.4)
    assert independent_tempo([turn("c", "no json here", IND)]) == 1.0


def test_high_value_and_debate_tempo() -> None:
    assert is_high_value("The evidence does not support it; an alternative is likely.")
    assert not is_high_value("The evidence is weak.")
    assert is_high_value("**Your Position**: agree")
    hv = "evidence support challenge"
    # 2 agents, 3 high-value turns: C = 1.5 -> 2.0; capped at 2.5 with 4 of 4
    assert (
        debate_tempo([turn("a", hv, DEB), turn("a", hv, DEB), turn("b", hv, DEB), turn("b", "ok", DEB)])
        == 2.0
    )
    assert debate_tempo([turn(x, hv, DEB) for x in "aabb"]) == 2.5
    assert debate_tempo([turn("a", "ok", DEB)]) == 0.5


def test_tempo_scores_per_phase_other_rounds_one() -> None:
    turns = [
        turn("a", '{"X": []}', IND),
        turn("a", "evidence support challenge", DEB),
        turn("a", "hi", "voting"),
    ]
    assert tempo_scores(turns) == {IND: pytest.approx(1.1), DEB: 1.5, "voting": 1.0}  # C = 1/1


# --- differential parsing -----------------------------------------------------------------------------


def test_differential_formats() -> None:
    items = '{"DIFFERENTIAL_DIAGNOSIS": [{"Diagnosis": "Gout", "Reasoning": "urate"}], "NOTE": "x"}'
    assert differential_from_text(items) == {"Gout": ["urate"]}
    assert differential_from_text('{"Diagnosis": "RA", "Confidence": "80%", broken') == {"RA": []}
    numbered = "<DIFFERENTIAL_DIAGNOSIS>\n1. Psoriatic Arthritis - [Confidence: 90%]\n2. Gout - [5%]"
    assert list(differential_from_text(numbered) or {}) == ["Psoriatic Arthritis", "Gout"]
    assert differential_from_text("1. Gout - because") is None  # no differential heading
    assert normalize_diagnosis(" 2. **Acute  Kidney Injury**. ") == "acute kidney injury"


# --- credibility ----------------------------------------------------------------------------------------


def test_professional_valence_levels() -> None:
    assert professional_valence("evidence research studies consider " + "x" * 200) == 1.2
    assert professional_valence("evidence research " + "x" * 100) == 1.0
    assert professional_valence("x" * 51) == 0.8
    assert professional_valence("short") == 0.6


def test_turn_credibility_structured_and_keywords() -> None:
    # n=2 diagnoses, mean evidence 1.5: I = min(6+3, 20) = 9, S = 8, A = 20 (first has 2); base 22.5+12+20
    t = turn("a", '{"AKI": ["oliguria", "creatinine"], "CIN": ["contrast"]}', IND)
    c = turn_credibility(t, independent=True)
    assert (c.insight, c.synthesis, c.action, c.valence) == (9.0, 8.0, 20.0, 0.8)  # 57 characters
    assert c.score == pytest.approx(54.5 * 0.8)
    # keywords: insight {evidence, clinical} = 5; synthesis {consid} = 4; action {should, plan} = 6
    k = turn_credibility(turn("a", "Clinical evidence: consider it; we should plan.", DEB), independent=False)
    assert (k.insight, k.synthesis, k.action, k.valence) == (5.0, 4.0, 6.0, 0.6)
    assert k.base == 2.5 * 5 + 1.5 * 4 + 6


def test_credibility_schemes() -> None:
    t1 = turn("a", '{"AKI": ["x", "y"]}', IND)  # I = 3+4 = 7, S = 4, A = 20 -> 43.5 * 0.6
    t2 = turn("a", "plan", DEB)  # A = 3 -> 3 * 0.6
    t3 = turn("a", "should", DEB)  # A = 3 -> 3 * 0.6
    per_round = credibility_scores([t1, t2, t3], independent_phases=[IND])
    assert per_round["a"] == pytest.approx((43.5 * 0.6 + 3 * 0.6) / 2)  # mean over 2 phases
    excluded = credibility_scores([t1, t2, t3], independent_phases=[IND], exclude_phases=[DEB])
    assert excluded["a"] == pytest.approx(43.5 * 0.6)
    pooled = credibility_scores([t1, t2], scheme="pooled")  # n=1, ē=2: I=7, S=4, A=20 (first turn)
    assert pooled["a"] == pytest.approx(43.5 * 0.6)
    stored = turn("b", '{"Ignored": ["x", "y"]}', IND, structured_data=None)
    assert credibility_scores([stored], scheme="pooled")["b"] == 0.0  # the system's None is respected
    with pytest.raises(ValueError, match="scheme"):
        credibility_scores([t1], scheme="bogus")  # type: ignore[arg-type]


# --- consensus ------------------------------------------------------------------------------------------


def _ballot(agent: str, *names: str) -> list[dict[str, Any]]:
    return [{"agent": agent, "diagnosis": n, "rank": i} for i, n in enumerate(names, start=1)]


def test_consensus_borda_and_weighted() -> None:
    votes = _ballot("a", "X", "Y", "Z") + _ballot("b", "Y", "X", "Z") + _ballot("c", "**y**", "Z")
    plain = consensus(votes)
    assert [(i.diagnosis, i.score, i.voters) for i in plain] == [("Y", 7.0, 3), ("X", 5.0, 2), ("Z", 3.0, 3)]
    # weights a=10, b=1, c=1: median 1, cap 2 -> a counts 2: Y = 4+3+2, X = 6+2, Z = 2+1+1
    weighted = consensus(votes, {"a": 10.0, "b": 1.0, "c": 1.0})
    assert [(i.diagnosis, i.score) for i in weighted] == [("Y", 9.0), ("X", 8.0), ("Z", 4.0)]
    uncapped = consensus(votes, {"a": 10.0, "b": 1.0, "c": 1.0}, cap=None, k=1)
    assert [(i.diagnosis, i.score) for i in uncapped] == [("X", 32.0)]
    missing = consensus(votes, {"a": 3.0, "b": 1.0})  # c gets the median 2: Y = 2*3 + 3*1 + 2*2
    assert (missing[0].diagnosis, missing[0].score) == ("Y", 13.0)
    points = consensus(
        [{"agent": "a", "diagnosis": "X", "points": 5}, {"agent": "b", "diagnosis": "x", "points": 1}]
    )
    assert [(i.diagnosis, i.score) for i in points] == [("X", 6.0)]


def test_consensus_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="points' or 'rank"):
        consensus([{"agent": "a", "diagnosis": "X"}])
    with pytest.raises(ValueError, match="diagnosis"):
        consensus([{"agent": "a", "diagnosis": " ", "rank": 1}])
    with pytest.raises(ValueError, match="k must"):
        consensus(_ballot("a", "X"), k=0)


# --- scorer -------------------------------------------------------------------------------------------


def _ctx(structured: StructuredOutput | None) -> ScoringContext:
    case = Case(id="c1", input=CaseInput(vignette="v"), reference=Reference())
    return ScoringContext(case=case, output=SystemOutput(structured=structured))


def test_scorer_breakdown_and_metrics() -> None:
    turns = [
        turn("a", '{"AKI": ["x", "y"], "CIN": ["z"]}', IND),
        turn("b", '{"AKI": ["x"]}', IND),
        turn("a", "evidence support challenge", DEB),
        turn("b", "ok", DEB),
    ]
    votes = _ballot("a", "AKI", "CIN") + _ballot("b", "CIN", "AKI")
    scorer = SCORERS.get("process")({})
    score = scorer(_ctx(StructuredOutput(transcript=turns, votes=votes)))
    b = score.breakdown
    assert b["tempo_scores"] == {IND: pytest.approx(1.2), DEB: 1.0}
    assert score.value == pytest.approx(1.1) and score.label == "scored"
    assert b["debate_quality"] == 1.0 and set(b["credibility"]) == {"a", "b"}
    assert b["consensus_unweighted"][0]["score"] == 3.0 and b["weighted_top1_same"] is not None
    empty = scorer(_ctx(None))
    assert math.isnan(empty.value) and empty.label == "no_transcript"
    metrics: dict[str, Any] = {}
    for metric in scorer.metrics:
        metrics.update(metric.compute([score, empty]))
    assert metrics["tempo_debate"] == 1.0 and metrics["tempo_independent"] == pytest.approx(1.2)
    assert metrics["n"] == 2
    lddx_parse = [turn("a", '{"AKI": ["x"], "CIN": []}', IND, structured_data=None)]
    text = scorer(_ctx(StructuredOutput(transcript=lddx_parse)))
    assert text.breakdown["tempo_scores"][IND] == pytest.approx(1.2)  # default: read from the text
    trusted = make_process_scorer({"use_structured_data": True})(
        _ctx(StructuredOutput(transcript=lddx_parse))
    )
    assert trusted.breakdown["tempo_scores"][IND] == 1.0  # the system parsed nothing
    with pytest.raises(ValueError):
        make_process_scorer({"bogus": 1})
    assert isinstance(make_process_scorer({"credibility": "pooled", "k": 3}), ProcessScorer)


# --- the LDDx files -------------------------------------------------------------------------------------


def _report_module() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "scripts" / "lddx_process_report.py"
    spec = importlib.util.spec_from_file_location("lddx_process_report", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_agreement_with_lddx_stored_values() -> None:
    root = shared_data("lddx")
    report = _report_module()
    rows = report.load_all(root)
    assert len(rows) == 46  # 11 v8_5 + 30 v8_6 + 5 v10
    agree = {key: dict(c) for key, c in report.agreement(rows).items()}
    for phase in ("specialized_ranking", "symptom_management", "master_list_generation", "post_debate_voting",
                  "cant_miss", DEB, "debate_quality"):  # fmt: skip
        assert agree[phase] == {"n": 41, "ours": 41, "compat": 41}, phase
    # guide's unique count from the text vs LDDx's repeated count of what its parser found
    assert agree[IND] == {"n": 41, "ours": 1, "compat": 22}
    assert agree["credibility_v8"] == {"n": 343, "ours": 0, "compat": 343}
    assert agree["credibility_v10"] == {"n": 25, "ours": 0, "compat": 25}
    assert all(r["voting_scores_reproduced"] for r in rows if "voting_scores_reproduced" in r)
