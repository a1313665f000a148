"""``ddx``: differential-diagnosis scoring with outcome classes (TP, FP, FN, CAA, AE, TM-SM; see
``clineval.scoring.ddx_classes``) and the LDDx metrics guide's scores (``ddx_scores``).

Classification (``classify_differential``), with ``match`` an equivalence function
(default ``clineval.text.equivalence.best_match``):

1. the system's items are taken in their order; each is matched against the ground-truth diagnoses
   not yet matched (greedy, first come first served). ``proposed`` or ``alternative`` + match -> TP;
   ``excluded`` + match -> AE (evidence: the item and its reasoning). A match of the ``hierarchy`` tier
   counts only with ``hierarchy_counts_as_tp`` (default True; the tier is reported either way). An item
   equivalent only to an already matched ground truth is a ``DUP`` (not counted);
2. unmatched ``proposed`` items -> FP; unmatched ``alternative`` items -> CAA; unmatched ``excluded``
   items -> ``EXCLUDED`` (not counted); a name already classified so (same normalised text) -> ``DUP``;
3. each ground truth still unmatched: AE if the transcript mentions it in a ruled-out scope
   (``clineval.scoring.assertion``; evidence: the latest such sentence, its round and phase); else
   TM-SM if the triage / symptom-management turns (``tm_sm_phases``) address at least half (and at
   least one) of its key findings (``findings[gt]``; a finding is addressed when one sentence of those
   turns contains it, or all its content words: ``explain_match`` rules containment / all_tokens;
   evidence: those sentences); else FN.

Ranks: the ``proposed`` items, in order, are the ranked list (1-based). A hit is a proposed item
equivalent (as counted above) to a ground truth, duplicates included.

With an ``equivalence_judge`` on the task, ``DdxScorer.judge_requests`` names the pairs left open
(``unresolved_pairs``: unmatched system diagnosis x unmatched ground truth, at most ``judge_max_pairs``);
the judge's confirmations make a second classification (tier ``llm_judge``) whose scores are recorded
under separate keys (``recall_judged``...). The deterministic scores, value and label never change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from clineval.core.judging import JudgeDecision, JudgeRequest, judgments_of
from clineval.core.output import DifferentialItem, TranscriptTurn
from clineval.core.protocols import Metric, ScoringContext
from clineval.core.score import Score
from clineval.metrics.basic import LabelRate
from clineval.metrics.breakdown import BreakdownRate
from clineval.metrics.ddx import MACRO_KEYS, ClassTotals, MacroMean, MicroRatio, WhenRecorded
from clineval.scoring.assertion import Passage, ruled_out_mentions, split_sentences
from clineval.scoring.ddx_classes import (
    LLM_JUDGE_TIER,
    DdxClassification,
    DdxDecision,
    Evidence,
    MatchFn,
    judged_match,
    unresolved_pairs,
)
from clineval.scoring.ddx_formulas import ddx_scores
from clineval.text.equivalence import best_match, synonyms_of
from clineval.text.matching import explain_match, normalize_for_match

DEFAULT_TM_SM_PHASES = ("symptom_management", "triage")


def _findings_of(gt: str, findings: Mapping[str, Sequence[str]]) -> Sequence[str]:
    if gt in findings:
        return findings[gt]
    wanted = normalize_for_match(gt)
    return next((f for k, f in findings.items() if normalize_for_match(k) == wanted), ())


def _tm_sm_evidence(
    gt: str, findings: Mapping[str, Sequence[str]], turns: Sequence[TranscriptTurn]
) -> list[Evidence]:
    key_findings = [f for f in _findings_of(gt, findings) if f.strip()]
    if not key_findings or not turns:
        return []
    found: list[Evidence] = []
    for finding in key_findings:
        hit = next(
            (
                Evidence(sentence[:300], "transcript", t.round, t.phase, t.agent, trigger=finding)
                for t in turns
                for sentence in split_sentences(t.text)
                if explain_match(sentence, finding).rule in ("containment", "all_tokens")
            ),
            None,
        )
        if hit is not None:
            found.append(hit)
    return found if 2 * len(found) >= len(key_findings) else []


def _reserved(gts: Sequence[str], differential: Sequence[DifferentialItem]) -> dict[int, int]:
    """Ground truth index -> the first differential item that names it at a same-disease tier (exact,
    synonym, overlap), by the deterministic matcher."""
    reserved: dict[int, int] = {}
    for j, item in enumerate(differential):
        for gi, gt in enumerate(gts):
            if gi not in reserved:
                _, eq = best_match(item.diagnosis, [gt], allow_hierarchy=False)
                if eq.equivalent:
                    reserved[gi] = j
    return reserved


def classify_differential(
    ground_truth: Sequence[str],
    differential: Sequence[DifferentialItem],
    transcript: Sequence[TranscriptTurn] | None = None,
    *,
    match: MatchFn = best_match,
    findings: Mapping[str, Sequence[str]] | None = None,
    hierarchy_counts_as_tp: bool = True,
    tm_sm_phases: Sequence[str] = DEFAULT_TM_SM_PHASES,
) -> DdxClassification:
    """Per-diagnosis class decisions for one case (see the module docstring for the rules)."""
    gts = [g for g in ground_truth if g.strip()]
    open_gt = list(range(len(gts)))  # indices of ground truths not yet matched
    decided: dict[int, DdxDecision] = {}
    system_side: list[DdxDecision] = []
    hit_ranks: list[int] = []
    first_ranks: list[int] = []
    seen_other: set[str] = set()
    rank = 0
    reserved = _reserved(gts, differential)
    for j, item in enumerate(differential):
        if item.status == "proposed":
            rank += 1
        item_rank = rank if item.status == "proposed" else None
        name = item.diagnosis
        # a ground truth a later item names exactly (or as a synonym) is kept for it: "Hemochromatosis-Related
        # Osteoarthritis" must not take "osteoarthritis" from a later "Osteoarthritis"
        pool = [i for i in open_gt if reserved.get(i, j) <= j]
        found, eq = match(name, [gts[i] for i in pool]) if pool else (None, None)
        idx = open_gt.index(pool[found]) if found is not None else None
        if eq is not None and eq.tier == "hierarchy" and not hierarchy_counts_as_tp:
            idx = None
        tier = eq.tier if eq is not None and idx is not None else None
        conf = eq.confidence if eq is not None and idx is not None and tier != LLM_JUDGE_TIER else None
        why = eq.explanation if eq is not None else ""
        ev = (Evidence(f"{name}: {item.reasoning}" if item.reasoning else name, "differential"),)
        if idx is not None:
            gi = open_gt.pop(idx)
            if item.status == "excluded":
                ev = (Evidence(ev[0].text, "status"),)
                decided[gi] = DdxDecision("AE", gts[gi], name, None, tier, conf, why, ev)
            else:
                decided[gi] = DdxDecision("TP", gts[gi], name, item_rank, tier, conf, why, ev)
                if item_rank is not None:
                    hit_ranks.append(item_rank)
                    if gi == 0:
                        first_ranks.append(item_rank)
            continue
        dup_idx, dup_eq = match(name, gts)
        if dup_idx is not None and (dup_eq.tier != "hierarchy" or hierarchy_counts_as_tp):
            system_side.append(
                DdxDecision(
                    "DUP",
                    gts[dup_idx],
                    name,
                    item_rank,
                    dup_eq.tier,
                    None if dup_eq.tier == LLM_JUDGE_TIER else dup_eq.confidence,
                    dup_eq.explanation,
                    ev,
                )
            )
            if item_rank is not None and item.status != "excluded":
                hit_ranks.append(item_rank)
                if dup_idx == 0:
                    first_ranks.append(item_rank)
            continue
        key = normalize_for_match(name)
        if key in seen_other:  # the same non-ground-truth name again (e.g. proposed, then alternative)
            system_side.append(DdxDecision("DUP", None, name, item_rank, explanation="repeated", evidence=ev))
            continue
        seen_other.add(key)
        cls = {"proposed": "FP", "alternative": "CAA", "excluded": "EXCLUDED"}[item.status]
        system_side.append(DdxDecision(cls, None, name, item_rank, None, None, why, ev))  # type: ignore[arg-type]
    turns = list(transcript or ())
    if open_gt and turns:
        passages = [Passage(t.text, t.round, t.phase, t.agent) for t in turns]
        mentions = ruled_out_mentions([gts[i] for i in open_gt], passages, names_for=synonyms_of)
    else:
        mentions = {}
    phase_turns = [t for t in turns if t.phase in tm_sm_phases]
    for gi in open_gt:
        gt = gts[gi]
        negated = mentions.get(gt)
        if negated:
            last = negated[-1]
            p = last.passage
            ev = (Evidence(last.sentence, "transcript", p.round, p.phase, p.agent, last.trigger),)
            why = f"ruled out in the transcript ({len(negated)} negated mention(s); latest shown)"
            decided[gi] = DdxDecision("AE", gt, None, explanation=why, evidence=ev)
            continue
        tm = _tm_sm_evidence(gt, findings or {}, phase_turns)
        if tm:
            why = f"missed, but {len(tm)} key finding(s) addressed in {'/'.join(tm_sm_phases)}"
            decided[gi] = DdxDecision("TM-SM", gt, None, explanation=why, evidence=tuple(tm))
        else:
            decided[gi] = DdxDecision("FN", gt, None, explanation="not in the differential")
    decisions = (*(decided[i] for i in sorted(decided)), *system_side)
    return DdxClassification(decisions, len(gts), tuple(sorted(hit_ranks)), tuple(sorted(first_ranks)))


class DdxOptions(BaseModel):
    """Options of the ``ddx`` scorer: ``scorers: [{ddx: {caa_weight: 0.3, ks: [1, 5]}}]``.

    ``caa_weight`` (w, default 0.5): credit of a clinically appropriate alternative in
    ``clinical_reasoning_quality`` and ``diagnostic_safety``. LDDx chooses w per case from a performance
    tier (-0.2, 0.0, 0.3 or 0.7 in its published results); clineval keeps one fixed w per task so that
    cases are comparable, and records it in each breakdown. ``true_diagnosis``: ``any`` (a top-k hit is
    any ground truth) or ``first`` (only the first ground truth, e.g. DDXPlus's pathology).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    caa_weight: float = Field(default=0.5, ge=-1.0, le=1.0)
    hierarchy_counts_as_tp: bool = True
    ks: tuple[int, ...] = Field(default=(1, 3, 5, 10), min_length=1)
    true_diagnosis: Literal["any", "first"] = "any"
    tm_sm_phases: tuple[str, ...] = DEFAULT_TM_SM_PHASES
    use_transcript: bool = True
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    seed: int = 0
    n_resamples: int = Field(default=2000, ge=1)
    judge_max_pairs: int = Field(default=50, ge=0)

    @field_validator("ks")
    @classmethod
    def _positive(cls, ks: tuple[int, ...]) -> tuple[int, ...]:
        if any(k < 1 for k in ks):
            raise ValueError(f"every k must be >= 1, got {list(ks)}")
        return tuple(sorted(set(ks)))


def _label(scores: Mapping[str, float | bool | None], ks: Sequence[int], tp: int) -> str:
    for k in ks:
        if scores.get(f"top{k}"):
            return f"top{k}"
    return "found" if tp else "missed"


class DdxScorer:
    """Scores a ranked differential; ``value`` = recall (TP / ground truth), NaN without ground truth."""

    name = "ddx"

    def __init__(self, options: DdxOptions | None = None, *, match: MatchFn = best_match) -> None:
        self.options = opts = options or DdxOptions()
        self.match = match

        def mean(key: str, name: str | None = None) -> MacroMean:
            return MacroMean(
                key, name=name, seed=opts.seed, n_resamples=opts.n_resamples, confidence=opts.confidence
            )

        self.metrics: Sequence[Metric] = (
            *(mean(key) for key in MACRO_KEYS),
            mean("reciprocal_rank", "mrr"),
            *(BreakdownRate(f"top{k}", name=f"top{k}_accuracy", confidence=opts.confidence) for k in opts.ks),
            MicroRatio(("TP",), ("n_ground_truth",), name="recall_micro"),
            ClassTotals(),
            LabelRate("failed", name="ddx_failed_rate"),
            WhenRecorded(
                "recall_judged",
                (
                    *(mean(f"{key}_judged") for key in MACRO_KEYS),
                    mean("reciprocal_rank_judged", "mrr_judged"),
                    *(
                        BreakdownRate(
                            f"top{k}_judged", name=f"top{k}_accuracy_judged", confidence=opts.confidence
                        )
                        for k in opts.ks
                    ),
                    MicroRatio(("TP_judged",), ("n_ground_truth",), name="recall_micro_judged"),
                    MicroRatio(("judge_errors",), ("judge_pairs",), name="judge_error_rate"),
                ),
                name="ddx_judged",
            ),
        )

    def _classify(self, ctx: ScoringContext, gt: list[str], match: MatchFn) -> DdxClassification:
        opts = self.options
        structured = None if ctx.output.failed else ctx.output.structured
        differential = list(structured.differential or []) if structured else []
        transcript = list(structured.transcript or []) if structured and opts.use_transcript else []
        return classify_differential(
            gt,
            differential,
            transcript,
            match=match,
            findings=ctx.case.reference.findings,
            hierarchy_counts_as_tp=opts.hierarchy_counts_as_tp,
            tm_sm_phases=opts.tm_sm_phases,
        )

    def _requests(self, result: DdxClassification) -> list[JudgeRequest]:
        return unresolved_pairs(result, self.match, max_pairs=self.options.judge_max_pairs)

    def judge_requests(self, ctx: ScoringContext) -> list[JudgeRequest]:
        """The pairs the deterministic tiers could not resolve (for the runner's equivalence judge)."""
        gt = [g for g in ctx.case.reference.differential if g.strip()]
        return self._requests(self._classify(ctx, gt, self.match)) if gt else []

    def _judged(
        self,
        ctx: ScoringContext,
        gt: list[str],
        result: DdxClassification,
        judgments: Mapping[str, JudgeDecision],
    ) -> dict[str, Any]:
        """The judged scores (``<key>_judged``), counts, matches, and every judge decision of this case."""
        opts = self.options
        requests = self._requests(result)
        judged = self._classify(ctx, gt, judged_match(self.match, judgments, requests))
        scores = ddx_scores(judged, opts.caa_weight, ks=opts.ks, true_diagnosis=opts.true_diagnosis)
        missing = JudgeDecision(None, "", "", "no judge decision for this pair")
        decisions = [(r, judgments.get(r.key, missing)) for r in requests]
        return {
            **{f"{key}_judged": value for key, value in scores.items()},
            **{f"{cls}_judged": n for cls, n in judged.counts.items()},
            "judge_pairs": len(requests),
            "judge_errors": sum(1 for _, d in decisions if d.equivalent is None),
            "judge_decisions": [{"system": r.a, "ground_truth": r.b, **d.as_dict()} for r, d in decisions],
            "judged_matches": [d.as_dict() for d in judged.decisions if d.tier == LLM_JUDGE_TIER],
        }

    def __call__(self, ctx: ScoringContext) -> Score:
        opts = self.options
        gt = [g for g in ctx.case.reference.differential if g.strip()]
        if not gt:
            return Score(
                value=math.nan,
                label="no_reference",
                explanation="the case has no ground-truth differential",
                breakdown={"n_ground_truth": 0},
            )
        structured = None if ctx.output.failed else ctx.output.structured
        differential = list(structured.differential or []) if structured else []
        result = self._classify(ctx, gt, self.match)
        scores = ddx_scores(result, opts.caa_weight, ks=opts.ks, true_diagnosis=opts.true_diagnosis)
        first = result.hit_ranks if opts.true_diagnosis == "any" else result.first_gt_ranks
        breakdown: dict[str, Any] = {
            **scores,
            **result.counts,
            "n_ground_truth": result.n_ground_truth,
            "considered": result.considered,
            "first_hit_rank": first[0] if first else None,
            "caa_weight": opts.caa_weight,
            "decisions": [d.as_dict() for d in result.decisions],
        }
        judgments = judgments_of(ctx)
        if judgments is not None:
            breakdown.update(self._judged(ctx, gt, result, judgments))
        error = ctx.output.error
        if error is not None:
            breakdown["error"] = error.kind
            return Score(value=0.0, label="failed", explanation=error.message[:500], breakdown=breakdown)
        label = _label(scores, opts.ks, result.counts["TP"]) if differential else "no_differential"
        return Score(value=float(scores["recall"] or 0.0), label=label, breakdown=breakdown)


def make_ddx_scorer(options: Mapping[str, Any]) -> DdxScorer:
    """Registry factory: validates ``options`` (pydantic, extra keys forbidden) and builds the scorer."""
    return DdxScorer(DdxOptions.model_validate(dict(options)))
