"""Consensus of the agents' ballots: Borda points, optionally weighted by each agent's credibility.

A ballot line is ``{"agent", "diagnosis", "points"}`` or ``{"agent", "diagnosis", "rank"}`` (1 = first
choice). Borda points (Borda 1781; LDDx's preferential vote): a line with ``points`` counts them as given;
a ranked line counts ``m − rank + 1`` where m is the length of that agent's ballot (3/2/1 for a top-3
ballot). Names are merged by ``normalize_diagnosis``; a diagnosis an agent lists twice counts once, with
its best points.

``score(d) = Σ_agents points_a(d) × w_a``; unweighted: ``w_a = 1``. Weighted (credibility), as in LDDx:
``w_a = min(weight_a, cap × median(positive weights))`` so one agent cannot dominate (``cap=None``: no
cap); an agent without a weight gets the median weight (LDDx used 1.0, which on a 0-120 credibility scale
silences the agent). Ranked by score, then number of voters, then first appearance; ``k`` keeps the top k.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clineval.ddx.process.transcript import normalize_diagnosis


@dataclass(frozen=True, slots=True)
class ConsensusItem:
    diagnosis: str  # the first spelling seen, cleaned of markup
    score: float
    voters: int

    def as_dict(self) -> dict[str, Any]:
        return {"diagnosis": self.diagnosis, "score": self.score, "voters": self.voters}


def ballot_points(votes: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """``{agent: {normalized diagnosis: points}}`` from ballot lines (module docstring)."""
    lines: dict[str, list[tuple[str, float | None, float | None]]] = {}
    for i, vote in enumerate(votes):
        agent, diagnosis = vote.get("agent"), vote.get("diagnosis")
        if not isinstance(diagnosis, str) or not normalize_diagnosis(diagnosis):
            raise ValueError(f"vote {i}: 'diagnosis' must be a non-empty string, got {diagnosis!r}")
        points, rank = vote.get("points"), vote.get("rank")
        if points is None and rank is None:
            raise ValueError(f"vote {i}: needs 'points' or 'rank'")
        key = normalize_diagnosis(diagnosis)
        lines.setdefault(str(agent), []).append(
            (key, None if points is None else float(points), None if rank is None else float(rank))
        )
    ballots: dict[str, dict[str, float]] = {}
    for agent, agent_lines in lines.items():
        size = len({key for key, _, _ in agent_lines})
        ballot = ballots.setdefault(agent, {})
        for key, points, rank in agent_lines:
            value = points if points is not None else size - (rank or 1.0) + 1.0
            ballot[key] = max(value, ballot.get(key, value))
    return ballots


def capped_weights(
    weights: Mapping[str, float], agents: Sequence[str], cap: float | None
) -> dict[str, float]:
    """Each agent's weight: its own capped at ``cap × median(positive weights)``; absent: the median."""
    positive = [w for w in weights.values() if w > 0]
    median = statistics.median(positive) if positive else 1.0
    limit = cap * median if cap is not None else float("inf")
    return {a: min(weights[a], limit) if a in weights else median for a in agents}


def consensus(
    votes: Sequence[Mapping[str, Any]],
    weights: Mapping[str, float] | None = None,
    k: int | None = None,
    *,
    cap: float | None = 2.0,
) -> list[ConsensusItem]:
    """The ranked consensus list (Borda; credibility-weighted when ``weights`` is given)."""
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if cap is not None and cap <= 0:
        raise ValueError(f"cap must be > 0, got {cap}")
    ballots = ballot_points(votes)
    agent_weight = (
        capped_weights(weights, list(ballots), cap) if weights is not None else dict.fromkeys(ballots, 1.0)
    )
    names: dict[str, str] = {}
    for vote in votes:
        key = normalize_diagnosis(str(vote["diagnosis"]))
        names.setdefault(key, str(vote["diagnosis"]).replace("*", "").strip())
    order = {key: i for i, key in enumerate(names)}
    totals: dict[str, float] = {}
    voters: dict[str, int] = {}
    for agent, ballot in ballots.items():
        for key, points in ballot.items():
            totals[key] = totals.get(key, 0.0) + points * agent_weight[agent]
            voters[key] = voters.get(key, 0) + 1
    ranked = sorted(totals, key=lambda key: (-totals[key], -voters[key], order[key]))
    items = [ConsensusItem(names[key], totals[key], voters[key]) for key in ranked]
    return items[:k] if k is not None else items
