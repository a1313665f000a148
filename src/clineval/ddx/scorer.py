"""``ddx``: differential-diagnosis scoring with outcome classes (TP, FP, FN, CAA, AE, TM-SM, and clineval's
BROADER; see ``clineval.ddx.classes``) and the LDDx metrics guide's scores (``ddx_scores``).

The classification of one case is ``clineval.ddx.classify.classify_differential`` (re-exported here;
rules in its docstring and docs/ddx/ddx_scoring.md): greedy equivalence matching of the system's items to the
ground truth (a name more general than a ground truth is never a hit), CAA only for alternatives a can't-miss
turn supports with a finding of the case (``ddx_support``: a quotation of the case or a sentence naming
many diagnoses supports none), AE from a supported ``status: excluded`` or a ruled-out mention, TM-SM for a
missed diagnosis whose triage / symptom-management turns gave an action that treats it (``ddx_treatment``,
cited action map ``data/tm_sm_actions.yaml``; a shotgun of treatments counts for none); only the first
``max_differential`` diagnoses of a list are scored.

With an ``equivalence_judge`` on the task, ``DdxScorer.judge_requests`` names the pairs left open
(``unresolved_pairs``: unmatched system diagnosis x unmatched ground truth, at most ``judge_max_pairs``);
the judge's confirmations make a second classification (tier ``llm_judge``) whose scores are recorded
under separate keys (``recall_judged``...). The deterministic scores, value and label never change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from clineval.core.judging import JudgeDecision, JudgeRequest, judgments_of
from clineval.core.protocols import Metric, ScoringContext
from clineval.core.score import Score
from clineval.ddx.classes import LLM_JUDGE_TIER, DdxClassification, MatchFn, judged_match, unresolved_pairs
from clineval.ddx.classify import DEFAULT_MAX_DIFFERENTIAL, DEFAULT_TM_SM_PHASES, classify_differential
from clineval.ddx.formulas import ddx_scores
from clineval.ddx.support import DEFAULT_CANT_MISS_PHASES, CaaSupport
from clineval.ddx.treatment import SHOTGUN_ROWS
from clineval.metrics.basic import LabelRate
from clineval.metrics.breakdown import BreakdownRate
from clineval.metrics.macro import MACRO_KEYS, ClassTotals, MacroMean, MicroRatio, WhenRecorded
from clineval.text.names.equivalence import best_match

__all__ = ["DdxOptions", "DdxScorer", "classify_differential", "ddx_scores", "make_ddx_scorer"]


class DdxOptions(BaseModel):
    """Options of the ``ddx`` scorer: ``scorers: [{ddx: {caa_weight: 0.3, ks: [1, 5]}}]``.

    ``caa_weight`` (w, default 0.5): credit of a clinically appropriate alternative in
    ``clinical_reasoning_quality`` and ``diagnostic_safety``. LDDx chooses w per case from a performance
    tier (-0.2, 0.0, 0.3 or 0.7 in its published results); clineval keeps one fixed w per task so that
    cases are comparable, and records it in each breakdown. ``true_diagnosis``: ``any`` (a top-k hit is
    any ground truth) or ``first`` (only the first ground truth, e.g. DDXPlus's pathology).
    ``caa_support``: what makes an ``alternative`` a CAA (``transcript``, the default: a can't-miss turn of
    ``cant_miss_phases`` names it with a finding of the case; ``transcript_or_reasoning``: or its own
    reasoning cites one; ``label``: the label alone, gameable, the behaviour before issue 22); the same
    policy decides whether an ``excluded`` ground truth is AE. ``max_differential`` (K, default 10): only
    the first K distinct diagnoses of a list are scored (like top-k recall; the rest are counted in
    ``beyond_k`` and the task metric ``truncated_rate``); None scores the whole list (gameable: listing every
    diagnosis raises recall to 1). ``max_treatment_rows`` (default 8): triage / symptom-management turns
    giving agents of more action-map rows are a shotgun treatment and none counts for TM-SM; None: no limit.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    caa_weight: float = Field(default=0.5, ge=-1.0, le=1.0)
    hierarchy_counts_as_tp: bool = True
    ks: tuple[int, ...] = Field(default=(1, 3, 5, 10), min_length=1)
    true_diagnosis: Literal["any", "first"] = "any"
    tm_sm_phases: tuple[str, ...] = DEFAULT_TM_SM_PHASES
    caa_support: CaaSupport = "transcript"
    cant_miss_phases: tuple[str, ...] = DEFAULT_CANT_MISS_PHASES
    max_differential: int | None = Field(default=DEFAULT_MAX_DIFFERENTIAL, ge=1)
    max_treatment_rows: int | None = Field(default=SHOTGUN_ROWS, ge=1)
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

    @model_validator(mode="after")
    def _ks_within_k(self) -> DdxOptions:
        k = self.max_differential
        if k is not None and max(self.ks) > k:
            raise ValueError(
                f"ks {list(self.ks)} reach past max_differential {k}: only the first {k} diagnoses are "
                f"scored, so top-{max(self.ks)} would equal top-{k}; lower ks or raise max_differential"
            )
        return self


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
            mean("recall_broader"),
            *(BreakdownRate(f"top{k}", name=f"top{k}_accuracy", confidence=opts.confidence) for k in opts.ks),
            MicroRatio(("TP",), ("n_ground_truth",), name="recall_micro"),
            MicroRatio(("BROADER",), ("TP", "FP", "CAA", "BROADER"), name="broader_share"),
            MicroRatio(("caa_unsupported",), ("caa_unsupported", "CAA"), name="caa_unsupported_share"),
            BreakdownRate("truncated", name="truncated_rate", confidence=opts.confidence),
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
        case_input = ctx.case.input
        return classify_differential(
            gt,
            differential,
            transcript,
            match=match,
            findings=ctx.case.reference.findings,
            hierarchy_counts_as_tp=opts.hierarchy_counts_as_tp,
            tm_sm_phases=opts.tm_sm_phases,
            case_text=case_input.vignette or case_input.question,
            caa_support=opts.caa_support,
            cant_miss_phases=opts.cant_miss_phases,
            max_differential=opts.max_differential,
            max_treatment_rows=opts.max_treatment_rows,
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
            "caa_unsupported": result.caa_unsupported,
            "ae_unsupported": result.ae_unsupported,
            "beyond_k": result.beyond_k,
            "truncated": result.beyond_k > 0,
            "shotgun_treatment_rows": result.shotgun_rows,
            "broader_ground_truth": result.broader_ground_truth,
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
