"""Credibility of each agent of a multi-agent discussion (LDDx's "Dr. Reed assessment").

``credibility = (2.5·Insight + 1.5·Synthesis + 1.0·Action) × Professional Valence`` (LDDx metrics guide,
GitHub Baglecake/Local-DDx ``METRICS_GUIDE.md``; component rules as its ``ddx_synthesis`` modules apply
them, documented in ``docs/ddx/process_metrics.md``). Two schemes:

``per_round`` (LDDx v6-v8; default): every turn is scored; an agent's score in a phase is the mean of its
turns' scores there; its credibility is the mean over the phases it spoke in (bounded by 0..120).

- In an independent-differentials phase, for a turn with a structured differential of n diagnoses and
  mean evidence ē per diagnosis: Insight = min(3n + 2ē, 20), Synthesis = min(4n, 20),
  Action = 20 if the first diagnosis has ≥ 2 evidence items, else 10.
- Any other turn: Insight = min(2.5 × #INSIGHT keywords present, 20), Synthesis = min(4 × #SYNTHESIS
  stems present, 20), Action = min(3 × #ACTION keywords present, 20).
- Professional Valence from the e ELEVATING keywords present and the text length L (characters):
  1.2 if e ≥ 4 and L > 200; 1.0 if e ≥ 2 and L > 100; 0.8 if L > 50; else 0.6.

``pooled`` (LDDx v10): one score per agent over all its turns: n = diagnoses in all its structured
differentials, ē = their mean evidence; Insight = 3n + 2ē, Synthesis = 4n (uncapped); Action = 20 if the
agent's first turn has a structured differential whose first diagnosis has ≥ 2 evidence items, else 0;
Valence as above on all its text joined, with ELEVATING_V10 (ELEVATING + differential, pathophysiology,
mechanism).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from clineval.core.output import TranscriptTurn
from clineval.ddx.process.transcript import Differential, count_present, evidence_count, turn_differential

CredibilityScheme = Literal["per_round", "pooled"]

INSIGHT = ("evidence", "diagnosis", "symptoms", "findings", "clinical", "pathophysiology",
           "risk factors", "differential", "presentation")  # fmt: skip
SYNTHESIS = ("integrat", "combin", "togeth", "consid", "balanc", "weigh")
ACTION = ("recommend", "suggest", "should", "need", "action", "next", "plan")
ELEVATING = ("evidence", "research", "studies", "guidelines", "consider", "alternative", "question",
             "challenge", "disagree")  # fmt: skip
ELEVATING_V10 = (*ELEVATING, "differential", "pathophysiology", "mechanism")


@dataclass(frozen=True, slots=True)
class Credibility:
    """One agent's (or one turn's) components; ``score = base × valence``."""

    insight: float
    synthesis: float
    action: float
    valence: float

    @property
    def base(self) -> float:
        return 2.5 * self.insight + 1.5 * self.synthesis + 1.0 * self.action

    @property
    def score(self) -> float:
        return self.base * self.valence


def professional_valence(text: str, keywords: Sequence[str] = ELEVATING) -> float:
    """1.2 / 1.0 / 0.8 / 0.6 from elevating keywords present and text length (module docstring)."""
    elevating, length = count_present(text, keywords), len(text)
    if elevating >= 4 and length > 200:
        return 1.2
    if elevating >= 2 and length > 100:
        return 1.0
    return 0.8 if length > 50 else 0.6


def _structured_components(diff: Differential, *, cap: float | None) -> tuple[float, float, int]:
    n = len(diff)
    mean_evidence = sum(evidence_count(v) for v in diff.values()) / n if n else 0.0
    insight, synthesis = 3.0 * n + 2.0 * mean_evidence, 4.0 * n
    if cap is not None:
        insight, synthesis = min(insight, cap), min(synthesis, cap)
    first = evidence_count(next(iter(diff.values()))) if diff else 0
    return insight, synthesis, first


def turn_credibility(turn: TranscriptTurn, *, independent: bool) -> Credibility:
    """The ``per_round`` score of one turn (``independent``: the turn is in an independent-ddx phase)."""
    diff = turn_differential(turn) if independent else None
    if diff:
        insight, synthesis, first = _structured_components(diff, cap=20.0)
        action = 20.0 if first >= 2 else 10.0
    else:
        insight = min(2.5 * count_present(turn.text, INSIGHT), 20.0)
        synthesis = min(4.0 * count_present(turn.text, SYNTHESIS), 20.0)
        action = min(3.0 * count_present(turn.text, ACTION), 20.0)
    return Credibility(insight, synthesis, action, professional_valence(turn.text))


def _pooled(turns: Sequence[TranscriptTurn]) -> Credibility:
    n = evidence = 0
    for turn in turns:
        diff = turn_differential(turn) or {}
        n += len(diff)
        evidence += sum(evidence_count(v) for v in diff.values())
    mean_evidence = evidence / n if n else 0.0
    first_diff = turn_differential(turns[0]) if turns else None
    first = evidence_count(next(iter(first_diff.values()))) if first_diff else 0
    text = " ".join(t.text for t in turns)
    return Credibility(3.0 * n + 2.0 * mean_evidence, 4.0 * n, 20.0 if first >= 2 else 0.0,
                       professional_valence(text, ELEVATING_V10))  # fmt: skip


def credibility_scores(
    turns: Sequence[TranscriptTurn],
    *,
    scheme: CredibilityScheme = "per_round",
    independent_phases: Collection[str] = (),
    exclude_phases: Collection[str] = (),
) -> dict[str, float]:
    """Credibility per agent (first-appearance order). ``exclude_phases`` drops turns of those phases."""
    kept = [t for t in turns if t.phase not in exclude_phases]
    by_agent: dict[str, list[TranscriptTurn]] = {}
    for turn in kept:
        by_agent.setdefault(turn.agent, []).append(turn)
    if scheme == "pooled":
        return {agent: _pooled(agent_turns).score for agent, agent_turns in by_agent.items()}
    if scheme != "per_round":
        raise ValueError(f"credibility scheme must be 'per_round' or 'pooled', got {scheme!r}")
    result: dict[str, float] = {}
    for agent, agent_turns in by_agent.items():
        phases: dict[str | None, list[float]] = {}
        for turn in agent_turns:
            score = turn_credibility(turn, independent=turn.phase in independent_phases).score
            phases.setdefault(turn.phase, []).append(score)
        means = [sum(s) / len(s) for s in phases.values()]
        result[agent] = sum(means) / len(means)
    return result
