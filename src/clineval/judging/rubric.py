"""``rubric`` (tier 4): HealthBench rubric grading (Arora et al. 2025, "HealthBench: Evaluating Large
Language Models Towards Improved Human Health", OpenAI; reference code openai/simple-evals
``healthbench_eval.py``). Reported, never gated (``gates = False``).

A case carries physician-written rubric items ``{criterion, points, tags}`` in
``reference.data["rubric"]`` (points may be negative: undesirable behaviour). The judge (the task's
``judge:``, prompt ``rubric_item_v1``) is asked once per item whether the response meets the criterion
(``{"criteria_met": bool}``; with ``samples`` > 1 the majority, a tie being no decision). Per case::

    score = Σ_{items met} points / Σ_{items with points > 0} points

which is at most 1 and may be negative (negative items met). As in HealthBench the clipping to [0, 1]
is applied to the **mean** over cases (``rubric_score = clip(mean(score_i), 0, 1)``), not to each case;
``score_clipped`` per case is also recorded. A case with an item the judge could not decide is not
scored (NaN, label ``judge_error``): a missing item would bias the score either way. Per tag (the
rubric items' tags ``axis:...`` / ``level:...`` / ``cluster:...``: the case's score over the items with
that tag; the case's example tags ``theme:...`` / ``physician_agreed_category:...``: its whole score),
``rubric_score[<tag>]`` is the clipped mean over the cases that have the tag, as in HealthBench.

**No answer is graded like the reference does.** simple-evals grades whatever the system returned, an
empty reply included, so a system that fails on hard cases is not flattered by dropping them, and negative
criteria such as "fails to advise ..." apply to an empty reply as to any other. Here too: an empty or
blank response (label ``empty``) is sent to the grader as written, and a failed call (label ``failed``, the
failure kind in ``breakdown["error"]``; a missing prediction is one) is sent as an empty reply (``""``,
the assistant turn with no content); the case scores what the grader decides, by the same formula, and
keeps its label. (Until issue 22 these scored 0 without a grader call: on a harsh grader, 64 of 304
figures differed from the reference; docs/judging/tier4_judge.md.) ``rubric_score`` and every
``rubric_score[<tag>]`` count these cases; ``rubric_score_answered`` is the clipped mean over the graded
(answered, label ``graded``) cases only, and ``rubric_failed_rate`` / ``rubric_empty_rate`` say how many
there were. A case whose grader
could not decide an item is ``judge_error`` whatever the response (the reference retries until it can).

**Grader prompt.** ``grader_prompt: hardened`` (the default, prompt ``rubric_item_v1``) marks the
conversation and the response as untrusted data; ``grader_prompt: healthbench_reference`` (prompt
``rubric_healthbench_reference_v1``) sends the reference's grader prompt verbatim with the reference's
sampling (temperature 0.5, max_tokens 2048, system message "You are a helpful assistant."), for figures
comparable with published HealthBench scores (the judge's ``model`` stays the suite's: the reference
grades with ``gpt-4.1-2025-04-14``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clineval.core.helpers.columns import ScoreColumn
from clineval.core.judging import JudgeRequest, judgments_of, sample_decisions
from clineval.core.output import SystemOutput
from clineval.core.protocols import Metric, ScoringContext
from clineval.core.run import MetricValue
from clineval.core.score import Score
from clineval.core.specs import canonical_json
from clineval.judging.dimensions import response_text
from clineval.judging.injection import injection_hits
from clineval.metrics.basic import LabelRate
from clineval.metrics.intervals import bootstrap_interval

PROMPT = "rubric_item_v1"
REFERENCE_PROMPT = "rubric_healthbench_reference_v1"
# simple-evals' grading sampler: ChatCompletionSampler(model="gpt-4.1-2025-04-14",
# system_message=OPENAI_SYSTEM_MESSAGE_API, max_tokens=2048) with its default temperature 0.5; the system
# message is the template's system block, so a judge ``system_prompt`` must not replace it.
REFERENCE_SETTINGS: dict[str, Any] = {"temperature": 0.5, "max_tokens": 2048, "system_prompt": None}


def response_kind(output: SystemOutput) -> Literal["graded", "failed", "empty"]:
    """``failed`` (the call failed), ``empty`` (nothing but whitespace) or ``graded`` (an answer)."""
    if output.failed:
        return "failed"
    return "graded" if response_text(output).strip() else "empty"


def graded_response(output: SystemOutput) -> str:
    """What the grader is shown as the assistant's turn: the response as returned (a blank one as
    written), ``""`` for a failed call (simple-evals grades the empty reply)."""
    if output.failed:
        return ""
    text = response_text(output)
    return text if text.strip() else (output.text or "")


def rubric_score(items: Sequence[Mapping[str, Any]], met: Sequence[bool]) -> float | None:
    """Σ points of the met items / Σ positive points (None when no item has positive points)."""
    possible = math.fsum(float(i["points"]) for i in items if float(i["points"]) > 0)
    if possible <= 0:
        return None
    return math.fsum(float(i["points"]) for i, m in zip(items, met, strict=True) if m) / possible


def clip01(value: float) -> float:
    return min(1.0, max(0.0, value))


def reference_conversation(conversation: Sequence[Mapping[str, Any]], response: str) -> str:
    """The conversation as the reference grader sees it: "role: content" turns, the response last."""
    turns = [*conversation, {"role": "assistant", "content": response}]
    return "\n\n".join(f"{t['role']}: {t['content']}" for t in turns)


def reference_item(item: Mapping[str, Any]) -> str:
    """A rubric item as the reference writes it (``str(RubricItem)``): "[points] criterion"."""
    return f"[{item['points']}] {item['criterion']}"


def case_scores(
    items: Sequence[Mapping[str, Any]], met: Sequence[bool], example_tags: Sequence[Any]
) -> tuple[float | None, dict[str, float]]:
    """The case's score and its tag scores (rubric-item tags over their items; example tags = the score)."""
    score = rubric_score(items, met)
    tag_scores: dict[str, float] = {}
    if score is not None:  # example tags first: a rubric tag of the same name wins, as in the reference
        for tag in example_tags:
            tag_scores[str(tag)] = score
    for tag in sorted({str(t) for i in items for t in i.get("tags") or []}):
        chosen = [(i, m) for i, m in zip(items, met, strict=True) if tag in (i.get("tags") or [])]
        value = rubric_score([i for i, _ in chosen], [m for _, m in chosen])
        if value is not None:
            tag_scores[tag] = value
    return score, tag_scores


class RubricOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    samples: int = Field(default=1, ge=1, le=15)
    grader_prompt: Literal["hardened", "healthbench_reference"] = "hardened"
    prompt: str = Field(default=PROMPT, pattern=r"^[A-Za-z0-9_]+$")
    max_chars: int = Field(default=20000, ge=100)
    seed: int = 0
    n_resamples: int = Field(default=2000, ge=1)

    @model_validator(mode="after")
    def _one_prompt(self) -> RubricOptions:
        if self.grader_prompt == "healthbench_reference" and self.prompt != PROMPT:
            raise ValueError("give either 'prompt' or 'grader_prompt: healthbench_reference', not both")
        return self

    @property
    def template(self) -> str:
        return REFERENCE_PROMPT if self.grader_prompt == "healthbench_reference" else self.prompt


class RubricMean:
    """``rubric_score`` = clip((1/n) Σ score_i, 0, 1) over the n scored cases (HealthBench's clipped
    mean), ``rubric_score_ci`` = the 95% percentile bootstrap interval of the mean, ends clipped (clipping
    is monotone, so this is the interval of the clipped mean), ``rubric_score_unclipped`` the plain
    mean; ``rubric_score[<tag>]`` the clipped mean of the per-case tag scores (see the module). Failed
    and empty responses count (graded as the reference grades them); ``rubric_score_answered`` is the
    clipped mean over the graded cases alone."""

    name = "rubric_score"
    breakdown_keys: tuple[str, ...] = ("tag_scores",)

    def __init__(self, seed: int, n_resamples: int) -> None:
        self.seed, self.n_resamples = seed, n_resamples

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        scored = column.scorable()
        values: list[float] = column.values[scored].tolist()
        if not values:
            return {self.name: math.nan, f"{self.name}_ci": [math.nan, math.nan]}
        mean = math.fsum(values) / len(values)
        lo, hi = bootstrap_interval(values, seed=self.seed, n_resamples=self.n_resamples)
        found: dict[str, MetricValue] = {
            self.name: clip01(mean),
            f"{self.name}_ci": [clip01(lo), clip01(hi)],
            f"{self.name}_unclipped": mean,
        }
        by_tag: dict[str, list[float]] = {}
        for breakdown in column.iter_breakdowns():
            for tag, value in (breakdown.get("tag_scores") or {}).items():
                by_tag.setdefault(tag, []).append(float(value))
        for tag in sorted(by_tag):
            found[f"{self.name}[{tag}]"] = clip01(math.fsum(by_tag[tag]) / len(by_tag[tag]))
        answered: list[float] = column.values[scored & (column.labels == "graded")].tolist()
        found[f"{self.name}_answered"] = clip01(math.fsum(answered) / len(answered)) if answered else math.nan
        return found


class RubricScorer:
    """See the module docstring."""

    tier = 4
    gates = False

    def __init__(self, options: RubricOptions | None = None) -> None:
        self.options = options or RubricOptions()
        self.name = "rubric"
        self.prompt = self.options.template
        self.judge_prompts = (self.prompt,)
        reference = self.options.grader_prompt == "healthbench_reference"
        # per prompt, the judge options the suite overrides for it (config.build): the reference's sampling
        self.judge_settings: dict[str, dict[str, Any]] = (
            {self.prompt: dict(REFERENCE_SETTINGS)} if reference else {}
        )
        self.metrics: Sequence[Metric] = (
            RubricMean(self.options.seed, self.options.n_resamples),
            LabelRate("failed", name="rubric_failed_rate"),
            LabelRate("empty", name="rubric_empty_rate"),
        )

    @staticmethod
    def items(ctx: ScoringContext) -> list[Mapping[str, Any]]:
        rubric = ctx.case.reference.data.get("rubric")
        return [i for i in rubric if isinstance(i, Mapping)] if isinstance(rubric, list) else []

    def judge_requests(self, ctx: ScoringContext) -> list[JudgeRequest]:
        conversation = ctx.case.input.data.get("conversation") or [
            {"role": "user", "content": ctx.case.input.question or ""}
        ]
        shown = graded_response(ctx.output)[: self.options.max_chars]
        reference = self.prompt == REFERENCE_PROMPT
        return [
            JudgeRequest(
                key=canonical_json([self.prompt, index, item["criterion"]]),
                prompt=self.prompt,
                data={
                    "conversation": conversation,
                    "response": shown,
                    "criterion": item["criterion"],
                    "points": item["points"],
                    **(
                        {
                            "conversation_text": reference_conversation(conversation, shown),
                            "rubric_item": reference_item(item),
                        }
                        if reference
                        else {}
                    ),
                },
                reply_field="criteria_met",
                samples=self.options.samples,
            )
            for index, item in enumerate(self.items(ctx))
        ]

    def __call__(self, ctx: ScoringContext) -> Score:
        response = response_text(ctx.output)
        hits = injection_hits({"case": ctx.case.input.question or "", "response": response})
        flags: dict[str, Any] = {"injection_flagged": bool(hits), "injection_hits": hits, "tier": self.tier}
        items = self.items(ctx)
        if not items:
            return Score(value=math.nan, label="unscorable", explanation="no rubric items", breakdown=flags)
        kind = response_kind(ctx.output)
        error = ctx.output.error
        flags["error"] = error.kind if error is not None else None
        judgments = judgments_of(ctx)
        if judgments is None:
            return Score(
                value=math.nan, label="no_judge", explanation="the task has no judge", breakdown=flags
            )
        graded: list[dict[str, Any]] = []
        for item, request in zip(items, self.judge_requests(ctx), strict=True):
            decisions = sample_decisions(judgments, request)
            votes = [
                d.value for d in decisions if d is not None and d.error is None and isinstance(d.value, bool)
            ]
            yes, no = votes.count(True), votes.count(False)
            graded.append(
                {
                    "criterion": item["criterion"],
                    "points": item["points"],
                    "tags": list(item.get("tags") or []),
                    "met": True if yes > no else False if no > yes else None,
                    "votes": votes,
                    "reason": next((d.reason for d in decisions if d is not None and d.reason), ""),
                    "errors": [d.error if d is not None else "no judge decision" for d in decisions],
                }
            )
        undecided = sum(1 for g in graded if g["met"] is None)
        details = {**flags, "items": graded, "undecided": undecided}
        if undecided:
            why = f"the judge could not decide {undecided} of {len(graded)} rubric items"
            return Score(value=math.nan, label="judge_error", explanation=why, breakdown=details)
        met = [bool(g["met"]) for g in graded]
        score, tag_scores = case_scores(items, met, ctx.case.reference.data.get("example_tags") or [])
        if score is None:
            return Score(
                value=math.nan, label="unscorable", explanation="no positive points", breakdown=details
            )
        possible = math.fsum(float(i["points"]) for i in items if float(i["points"]) > 0)
        achieved = math.fsum(float(i["points"]) for i, m in zip(items, met, strict=True) if m)
        breakdown = {
            **details,
            "achieved": achieved,
            "possible": possible,
            "score_clipped": clip01(score),
            "met": sum(met),
            "tag_scores": tag_scores,
        }
        explanation = f"{achieved:g} of {possible:g} points ({sum(met)} of {len(met)} criteria met)"
        if kind == "failed":
            why = f"the system failed ({error.kind if error else 'unknown'}), graded as an empty reply: "
            explanation = why + explanation
        elif kind == "empty":
            explanation = "empty response, graded as such: " + explanation
        return Score(value=score, label=kind, explanation=explanation, breakdown=breakdown)


def make_rubric_scorer(options: Mapping[str, Any]) -> RubricScorer:
    return RubricScorer(RubricOptions.model_validate(options))
