"""The values of DDx scoring: outcome classes, the evidence behind each decision, one case's classification.

Classes (LDDx metrics guide, Local-DDx by Baglecake, MIT; names kept):

- ``TP``: a system diagnosis equivalent to a ground-truth diagnosis (each ground truth counted once);
- ``FP``: a system diagnosis equivalent to no ground-truth diagnosis: a ``proposed`` item, or an
  ``alternative`` without support (``status`` "alternative", explanation "alternative without can't-miss
  support"; counted in ``caa_unsupported``);
- ``CAA``: clinically appropriate alternative, "a reasonable alternative supported by evidence in the 'Can't
  Miss' round": an ``alternative`` item outside the ground truth that a can't-miss turn names with a finding
  of the case (``clineval.ddx.support``);
- ``AE``: appropriately excluded, a ground-truth diagnosis the system considered and explicitly ruled out
  (a negated mention in the transcript, or ``status: excluded`` in the differential **with support**:
  ``clineval.ddx.support``; the status alone is no evidence, and an unsupported exclusion of a
  ground truth is an FN, explanation "excluded without support", counted in ``ae_unsupported``);
- ``TM-SM``: a missed ground-truth diagnosis that the triage / symptom-management turns treated: an action
  given that treats it or its key findings ("missed Dehydration but gave fluids";
  ``clineval.ddx.treatment``);
- ``FN``: a ground-truth diagnosis missed, and neither AE nor TM-SM.

``BROADER`` (clineval's, issue 22): a system diagnosis more general than a ground truth (an ancestor, or a
grouping class: "Diabetes mellitus" for "type 2 diabetes", "bronchial disease" for "bronchiectasis"). It is
never a hit (not TP, not in top-k or reciprocal rank); it counts like an FP in the denominators of precision,
clinical reasoning quality and diagnostic safety, and as partial credit in ``recall_broader`` only.

Two bookkeeping classes are recorded but never counted: ``DUP`` (a second system item equivalent to a
ground truth already matched) and ``EXCLUDED`` (an excluded system item that is not a ground truth).

The optional LLM equivalence judge (``clineval.core.judging``) is asked only about the pairs left open
here (``unresolved_pairs``); its confirmations make a second, separate classification
(``judged_match``, tier ``llm_judge``), never a change to the deterministic one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from clineval.core.judging import JudgeDecision, JudgeRequest, pair_key

DdxClass = Literal["TP", "FP", "FN", "CAA", "AE", "TM-SM", "BROADER", "DUP", "EXCLUDED"]
COUNTED: tuple[DdxClass, ...] = ("TP", "FP", "FN", "CAA", "AE", "TM-SM", "BROADER")
GROUND_TRUTH_SIDE: frozenset[str] = frozenset({"TP", "FN", "AE", "TM-SM"})
UNMATCHED_SYSTEM_SIDE: frozenset[str] = frozenset({"FP", "CAA", "EXCLUDED", "BROADER"})
LLM_JUDGE_TIER = "llm_judge"


class EquivalenceLike(Protocol):
    """What a match function returns next to the index (``clineval.text.names.equivalence.Equivalence``)."""

    @property
    def equivalent(self) -> bool: ...

    @property
    def tier(self) -> str | None: ...

    @property
    def confidence(self) -> float: ...

    @property
    def explanation(self) -> str: ...


MatchFn = Callable[[str, Sequence[str]], "tuple[int | None, EquivalenceLike]"]
"""``match(name, candidates) -> (index of the equivalent candidate or None, equivalence)``."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """Why a decision was taken: the text, where it came from (``differential`` | ``status`` |
    ``transcript``), and for transcript text the round, phase and agent."""

    text: str
    source: str
    round: int | None = None
    phase: str | None = None
    agent: str | None = None
    trigger: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "source": self.source}
        for key in ("round", "phase", "agent", "trigger"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True, slots=True)
class DdxDecision:
    """One class decision: the ground-truth and/or system name, the system rank (1-based, among the
    ranked ``proposed`` items), the equivalence tier and confidence of the match, the evidence, and for a
    system item its ``status`` (proposed / alternative / excluded)."""

    cls: DdxClass
    ground_truth: str | None = None
    system: str | None = None
    rank: int | None = None
    tier: str | None = None
    confidence: float | None = None
    explanation: str = ""
    evidence: tuple[Evidence, ...] = ()
    status: str | None = None

    def as_dict(self) -> dict[str, Any]:
        status = {} if self.status is None else {"status": self.status}
        return {
            "class": self.cls,
            "ground_truth": self.ground_truth,
            "system": self.system,
            "rank": self.rank,
            "tier": self.tier,
            "confidence": None if self.confidence is None else round(self.confidence, 4),
            "explanation": self.explanation,
            "evidence": [e.as_dict() for e in self.evidence],
            **status,
        }


@dataclass(frozen=True, slots=True)
class DdxClassification:
    """All decisions of one case, the ground-truth count, and the ranks (1-based, among the ranked
    ``proposed`` items) of the system items equivalent to a ground truth (``hit_ranks``, sorted), and of
    those equivalent to the first ground truth (``first_gt_ranks``); ``broader_ground_truth``: the ground
    truths not found (not TP) that a ``BROADER`` item names (partial credit); ``beyond_k``: the items past
    the first ``max_differential`` distinct diagnoses (not scored); ``shotgun_rows``: the action-map rows the
    triage / symptom-management turns gave when more than allowed (then no treatment counted), else 0."""

    decisions: tuple[DdxDecision, ...]
    n_ground_truth: int
    hit_ranks: tuple[int, ...] = ()
    first_gt_ranks: tuple[int, ...] = ()
    broader_ground_truth: int = 0
    beyond_k: int = 0
    shotgun_rows: int = 0
    counts: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        tally = Counter(d.cls for d in self.decisions)
        object.__setattr__(self, "counts", {c: tally.get(c, 0) for c in COUNTED})

    def of(self, cls: DdxClass) -> list[DdxDecision]:
        return [d for d in self.decisions if d.cls == cls]

    @property
    def considered(self) -> int:
        """Diagnoses considered = ground-truth count + FP + CAA + BROADER (= TP + FN + AE + TM-SM + FP + CAA
        + BROADER): every ground-truth diagnosis once, plus every distinct system diagnosis outside it."""
        c = self.counts
        return self.n_ground_truth + c["FP"] + c["CAA"] + c["BROADER"]

    @property
    def caa_unsupported(self) -> int:
        """The ``alternative`` items counted as FP for want of support."""
        return sum(1 for d in self.decisions if d.cls == "FP" and d.status == "alternative")

    @property
    def ae_unsupported(self) -> int:
        """The ground truths the system gave ``status: excluded`` without support, counted as FN."""
        return sum(1 for d in self.decisions if d.cls == "FN" and d.status == "excluded")


def unresolved_pairs(
    classification: DdxClassification, match: MatchFn, *, max_pairs: int = 50
) -> list[JudgeRequest]:
    """The pairs the deterministic tiers left open: each unmatched system diagnosis (FP, CAA, EXCLUDED; in
    list order) x each ground truth the differential did not match (FN, TM-SM, AE from the transcript),
    except pairs ``match`` relates at all (e.g. a ``hierarchy`` pair not counted as TP: it is resolved as
    broader / narrower); the first ``max_pairs``."""
    systems = [d.system for d in classification.decisions if d.cls in UNMATCHED_SYSTEM_SIDE and d.system]
    truths = [
        d.ground_truth
        for d in classification.decisions
        if d.cls in GROUND_TRUTH_SIDE and d.system is None and d.ground_truth
    ]
    requests: list[JudgeRequest] = []
    for name in systems:
        for gt in truths:
            if len(requests) >= max_pairs:
                return requests
            if match(name, [gt])[0] is None:
                requests.append(JudgeRequest.of(name, gt))
    return requests


@dataclass(frozen=True, slots=True)
class JudgedEquivalence:
    """A pair the LLM judge confirmed (no confidence: the judge gives none)."""

    reason: str
    model: str
    equivalent: bool = True
    tier: str | None = LLM_JUDGE_TIER
    confidence: float = 0.0

    @property
    def explanation(self) -> str:
        return f"LLM judge ({self.model}): {self.reason}" if self.reason else f"LLM judge ({self.model})"


def judged_match(
    match: MatchFn, judgments: Mapping[str, JudgeDecision], requests: Sequence[JudgeRequest]
) -> MatchFn:
    """``match``, and where it finds nothing for a requested system name, the first candidate that is a
    requested ground truth the judge called equivalent (``equivalent is True``; None is never a match).

    Deterministic matches come first, and the judge can only pair a system diagnosis and a ground truth
    that were both unmatched deterministically, so every deterministic TP stays a TP."""
    asked: dict[str, set[str]] = {}
    for r in requests:
        decision = judgments.get(r.key)
        if decision is not None and decision.equivalent is True:
            asked.setdefault(r.a, set()).add(r.b)

    def match_with_judge(name: str, candidates: Sequence[str]) -> tuple[int | None, EquivalenceLike]:
        idx, eq = match(name, candidates)
        if idx is not None or name not in asked:
            return idx, eq
        for i, cand in enumerate(candidates):
            if cand in asked[name]:
                decision = judgments[pair_key(name, cand)]
                return i, JudgedEquivalence(decision.reason, decision.model)
        return idx, eq

    return match_with_judge
