"""``process``: process metrics of a multi-agent transcript (TempoScore, credibility, weighted consensus).

TempoScore per phase (LDDx metrics guide, GitHub Baglecake/Local-DDx ``METRICS_GUIDE.md``):

- independent-differentials phase: ``1.0 + 0.1 × D``; D = distinct diagnoses (``normalize_diagnosis``)
  over the phase's structured differentials (``count="unique"``, the guide's definition), or every
  listed diagnosis with repeats (``count="total"``, what LDDx v8 computes); no cap;
- debate phase: ``min(C + 0.5, 2.5)`` with symbolic curvature ``C = H / P``: H = high-value turns in
  the phase, P = distinct agents in it. A turn is high-value when ≥ 3 of REASONING_KEYWORDS occur in it
  or it holds one of STRUCTURED_MARKERS (an argument in the debate template's bold sections);
- any other phase: 1.0.

``debate_quality`` = the debate phase's TempoScore (as LDDx stores it). Per case ``value`` = mean
TempoScore over the transcript's phases (NaN without a transcript). ``breakdown``: ``tempo_scores``
{phase: score}, ``tempo_independent``/``tempo_debate`` (mean over phases of that kind, None if absent),
``debate_quality``, ``credibility`` {agent: score}, ``consensus_unweighted``/``consensus_weighted``
[{diagnosis, score, voters}] and ``weighted_top1_same`` (None without votes). A turn's ``structured_data``
extra (the system's own parse) is ignored unless ``use_structured_data`` is set: differentials are read
from the text. Definitions in full:
``docs/ddx/process_metrics.md``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clineval.core import Metric, Score, ScoringContext, TranscriptTurn
from clineval.ddx.process.consensus import consensus
from clineval.ddx.process.credibility import CredibilityScheme, credibility_scores
from clineval.ddx.process.transcript import count_present, normalize_diagnosis, turn_differential
from clineval.metrics.basic import Count
from clineval.metrics.breakdown import BreakdownMean, BreakdownRate

INDEPENDENT_PHASES = ("team_independent_differentials", "team_differentials", "independent_differentials")
DEBATE_PHASES = ("refinement_and_justification", "refinement", "debate")
REASONING_KEYWORDS = ("evidence", "support", "challenge", "disagree", "alternative", "clinical reasoning",
                      "risk factor", "contradict", "position", "recommendations", "differential")  # fmt: skip
STRUCTURED_MARKERS = ("**Your Position**", "**Clinical Evidence**", "**Reasoning**",
                      "**Alternative Considerations**", "**Final Recommendations**")  # fmt: skip
PhaseKind = Literal["independent", "debate", "other"]


def is_high_value(text: str, *, min_keywords: int = 3) -> bool:
    """≥ ``min_keywords`` reasoning keywords present (case-insensitive) or a structured-argument marker."""
    return count_present(text, REASONING_KEYWORDS) >= min_keywords or any(
        m in text for m in STRUCTURED_MARKERS
    )


def independent_tempo(
    turns: Sequence[TranscriptTurn], *, count: Literal["unique", "total"] = "unique"
) -> float:
    """``1.0 + 0.1 × D`` over the turns' structured differentials (module docstring)."""
    names = [name for t in turns for name in (turn_differential(t) or {})]
    n = len({normalize_diagnosis(x) for x in names}) if count == "unique" else len(names)
    return 1.0 + 0.1 * n


def debate_tempo(turns: Sequence[TranscriptTurn]) -> float:
    """``min(H / P + 0.5, 2.5)``: H high-value turns, P distinct agents (0.5 with no agents)."""
    participants = len({t.agent for t in turns})
    curvature = sum(is_high_value(t.text) for t in turns) / participants if participants else 0.0
    return min(curvature + 0.5, 2.5)


def phase_kind(phase: str | None, independent: Collection[str], debate: Collection[str]) -> PhaseKind:
    return "independent" if phase in independent else "debate" if phase in debate else "other"


def tempo_scores(
    turns: Sequence[TranscriptTurn],
    *,
    independent: Collection[str] = INDEPENDENT_PHASES,
    debate: Collection[str] = DEBATE_PHASES,
    count: Literal["unique", "total"] = "unique",
) -> dict[str, float]:
    """TempoScore of each phase, in order of first appearance (turns without a phase: ``"(none)"``)."""
    phases: dict[str | None, list[TranscriptTurn]] = {}
    for turn in turns:
        phases.setdefault(turn.phase, []).append(turn)
    scores: dict[str, float] = {}
    for phase, phase_turns in phases.items():
        kind = phase_kind(phase, independent, debate)
        value = (independent_tempo(phase_turns, count=count) if kind == "independent"
                 else debate_tempo(phase_turns) if kind == "debate" else 1.0)  # fmt: skip
        scores[phase if phase is not None else "(none)"] = value
    return scores


class ProcessOptions(BaseModel):
    """``scorers: [{process: {credibility: pooled, k: 5}}]``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    independent_phases: list[str] = Field(default_factory=lambda: list(INDEPENDENT_PHASES))
    debate_phases: list[str] = Field(default_factory=lambda: list(DEBATE_PHASES))
    count: Literal["unique", "total"] = "unique"
    credibility: CredibilityScheme = "per_round"
    exclude_from_credibility: list[str] = Field(default_factory=list)
    use_structured_data: bool = False  # True: trust the system's own ``structured_data`` (LDDx-compatible)
    k: int | None = Field(default=None, ge=1)
    cap: float | None = Field(default=2.0, gt=0)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


class ProcessScorer:
    name = "process"

    def __init__(self, options: ProcessOptions | None = None) -> None:
        self.options = options or ProcessOptions()
        self.metrics: Sequence[Metric] = (
            BreakdownMean("tempo_mean"),
            BreakdownMean("tempo_independent"),
            BreakdownMean("tempo_debate"),
            BreakdownMean("debate_quality"),
            BreakdownRate("weighted_top1_same", name="weighted_top1_same_rate"),
            Count(),
        )

    def analyse(self, turns: Sequence[TranscriptTurn], votes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Every process metric of one transcript and ballot (the ``breakdown`` of a case)."""
        o = self.options
        tempo = tempo_scores(turns, independent=o.independent_phases, debate=o.debate_phases, count=o.count)
        kinds = {p: phase_kind(p, o.independent_phases, o.debate_phases) for p in tempo}
        cred = credibility_scores(turns, scheme=o.credibility, independent_phases=o.independent_phases,
                                  exclude_phases=o.exclude_from_credibility)  # fmt: skip
        plain = consensus(votes, k=o.k) if votes else []
        weighted = consensus(votes, cred, k=o.k, cap=o.cap) if votes else []
        debate = _mean([v for p, v in tempo.items() if kinds[p] == "debate"])
        return {
            "tempo_scores": tempo,
            "tempo_mean": _mean(list(tempo.values())),
            "tempo_independent": _mean([v for p, v in tempo.items() if kinds[p] == "independent"]),
            "tempo_debate": debate,
            "debate_quality": debate,
            "credibility": cred,
            "consensus_unweighted": [i.as_dict() for i in plain],
            "consensus_weighted": [i.as_dict() for i in weighted],
            "weighted_top1_same": (plain[0].diagnosis == weighted[0].diagnosis) if plain else None,
        }

    def __call__(self, ctx: ScoringContext) -> Score:
        if ctx.output.failed:
            error = ctx.output.error
            return Score(value=math.nan, label="failed", explanation=error.message[:500] if error else None)
        structured = ctx.output.structured
        turns = list(structured.transcript or []) if structured is not None else []
        if not turns:
            return Score(value=math.nan, label="no_transcript", explanation="the output has no transcript")
        if not self.options.use_structured_data:
            turns = [TranscriptTurn(**t.model_dump(exclude={"structured_data"})) for t in turns]
        votes = list(structured.votes or []) if structured is not None else []
        breakdown = self.analyse(turns, votes)
        return Score(value=float(breakdown["tempo_mean"]), label="scored", breakdown=breakdown)


def make_process_scorer(options: Mapping[str, Any]) -> ProcessScorer:
    """Registry factory: validates ``options`` (pydantic, extra keys forbidden) and builds the scorer."""
    return ProcessScorer(ProcessOptions.model_validate(dict(options)))
