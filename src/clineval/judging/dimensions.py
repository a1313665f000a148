"""``judge_dimensions`` (tier 4): a scoped LLM judge grading coherence, completeness, uncertainty
calibration and differential consideration, each 1-5 and separately: the dimensions are never merged
into one number. Tier 4 is reported, never gated (``gates = False``).

Per case and dimension the judge (the task's ``judge:``, a model other than the system's; prompt
``judge_dimension_v1``, versioned and hashed in the run's spec) is asked ``samples`` times (default 3;
each sample has its own cache key, and the judge's temperature makes them independent). The case's grade
on a dimension is the **majority vote** of the samples' integer grades: the most frequent grade; when
several grades are equally frequent, the low median of the valid grades (conservative: with grades 2, 3
and 5 the grade is 3; with 3 and 5 it is 3). A sample whose reply is not an integer 1-5 is a judge error
and does not vote; a dimension with no valid sample has no grade. Logged with each grade: the samples,
their population variance, and the flips (samples whose grade differs from the majority).

The case and the output under judgement are given to the judge as delimited JSON data. Both are scanned
(``clineval.judging.injection``: after NFKC, invisible characters removed and homoglyphs folded) for text
that addresses a grader, in English and other languages ("ignore the rubric", "give 5", an unquoted
``grade: 5``, "ignora las instrucciones anteriores"...): ``injection_hits`` lists each pattern with where it
was found (``case`` / ``response``). The judge's own ``"injection"`` field is read from every reply:
``injection_judge`` is True when a sample said so. ``injection_flagged`` is either of them (recorded and
reported, the grades are kept as the judge gave them).

``Score.value`` is the fraction of dimensions that received a grade (judge coverage), never a quality
number; NaN when the system failed, gave nothing to judge, or the task has no judge.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from clineval.core.helpers.columns import ScoreColumn
from clineval.core.judging import JudgeDecision, JudgeRequest, judgments_of, sample_decisions
from clineval.core.output import SystemOutput
from clineval.core.protocols import Metric, ScoringContext
from clineval.core.run import MetricValue
from clineval.core.score import Score
from clineval.core.specs import canonical_json
from clineval.judging.injection import INJECTION_PATTERNS, injection_hits, injection_matches
from clineval.metrics.breakdown import BreakdownRate
from clineval.metrics.intervals import bootstrap_interval

__all__ = ["INJECTION_PATTERNS", "JudgeDimensionsScorer", "injection_matches", "response_text"]

DIMENSIONS = ("coherence", "completeness", "uncertainty_calibration", "differential_consideration")
PROMPT = "judge_dimension_v1"


def response_text(output: SystemOutput) -> str:
    """The output under judgement: its text, else its structured output as JSON (unset parts left out)."""
    if output.text and output.text.strip():
        return output.text
    if output.structured is not None:
        return json.dumps(output.structured.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
    return ""


def case_context(ctx: ScoringContext) -> str:
    """What the judge is told about the case: vignette / question, context passages, patient data."""
    inp = ctx.case.input
    parts = [p for p in (inp.vignette, inp.question if inp.question != inp.vignette else None) if p]
    parts.extend(inp.context)
    if inp.data.get("patient") is not None:
        parts.append("Patient: " + json.dumps(inp.data["patient"], ensure_ascii=False, sort_keys=True))
    return "\n\n".join(parts)


def injection_note(hits: Sequence[Mapping[str, str]], judge: bool | None) -> str:
    """The explanation's words for a flagged case ('' when nothing was flagged)."""
    notes = []
    for where, who in (("response", "the output"), ("case", "the case text")):
        found = [h["pattern"] for h in hits if h["where"] == where]
        if found:
            notes.append(f"{who} addresses the grader ({', '.join(found)})")
    if judge:
        notes.append("the judge reported an injection attempt")
    return "".join(f"; {n}" for n in notes)


def majority_grade(grades: Sequence[int]) -> int | None:
    """The most frequent grade; a tie between the most frequent grades -> the low median of all grades."""
    if not grades:
        return None
    counts = Counter(grades).most_common()
    if len(counts) == 1 or counts[0][1] > counts[1][1]:
        return counts[0][0]
    return int(statistics.median_low(grades))


def valid_grade(decision: JudgeDecision | None) -> int | None:
    value = None if decision is None or decision.error is not None else decision.value
    if isinstance(value, bool) or not isinstance(value, int | float) or not float(value).is_integer():
        return None
    return int(value) if 1 <= value <= 5 else None


class JudgeDimensionsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    dimensions: list[str] = Field(default_factory=lambda: list(DIMENSIONS), min_length=1)
    samples: int = Field(default=3, ge=1, le=15)
    prompt: str = Field(default=PROMPT, pattern=r"^[A-Za-z0-9_]+$")
    max_chars: int = Field(default=20000, ge=100)
    seed: int = 0

    @field_validator("dimensions")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = [d for d in value if d not in DIMENSIONS]
        if unknown or len(set(value)) != len(value):
            raise ValueError(f"dimensions must be distinct names among {', '.join(DIMENSIONS)}; got {value}")
        return value


class GradeMean:
    """``judge_<dimension>`` = (1/n) Σ g_i over the n cases with a majority grade g_i on the dimension
    (1-5), and ``judge_<dimension>_ci``: the 95% percentile bootstrap interval of that mean (seeded)."""

    breakdown_keys: tuple[str, ...] = ("grades",)

    def __init__(self, dimension: str, seed: int) -> None:
        self.dimension, self.seed, self.name = dimension, seed, f"judge_{dimension}"

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        grades = [
            float(g) for b in column.iter_breakdowns() if (g := (b.get("grades") or {}).get(self.dimension))
        ]
        if not grades:
            return {self.name: math.nan, f"{self.name}_ci": [math.nan, math.nan]}
        lo, hi = bootstrap_interval(grades, seed=self.seed, bounds=(1.0, 5.0))  # grades 1-5
        return {self.name: math.fsum(grades) / len(grades), f"{self.name}_ci": [lo, hi]}


class SampleStats:
    """``judge_flip_rate`` = Σ flips / Σ valid samples over every case and dimension (a flip: a sample
    whose grade differs from the majority); ``judge_mean_variance`` = the mean over (case, dimension) of
    the samples' population variance; ``judge_sample_error_rate`` = samples without a valid grade / all."""

    name = "judge_flip_rate"
    breakdown_keys: tuple[str, ...] = ("dimensions",)

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        dims = [d for b in column.iter_breakdowns() for d in (b.get("dimensions") or {}).values()]
        valid = sum(len(d["samples"]) - d["errors"] for d in dims)
        asked = sum(len(d["samples"]) for d in dims)
        variances = [d["variance"] for d in dims if d["variance"] is not None]
        return {
            "judge_flip_rate": sum(d["flips"] for d in dims) / valid if valid else math.nan,
            "judge_mean_variance": math.fsum(variances) / len(variances) if variances else math.nan,
            "judge_sample_error_rate": (asked - valid) / asked if asked else math.nan,
        }


class JudgeDimensionsScorer:
    """See the module docstring."""

    tier = 4
    gates = False

    def __init__(self, options: JudgeDimensionsOptions | None = None) -> None:
        self.options = options or JudgeDimensionsOptions()
        self.name = "judge_dimensions"
        self.judge_prompts = (self.options.prompt,)
        dims: list[Metric] = [GradeMean(d, self.options.seed) for d in self.options.dimensions]
        injected = BreakdownRate("injection_flagged", name="judge_injection_flagged_rate")
        self.metrics: Sequence[Metric] = (*dims, SampleStats(), injected)

    def _requests(self, ctx: ScoringContext) -> list[JudgeRequest]:
        response = response_text(ctx.output)
        if ctx.output.failed or not response.strip():
            return []
        limit = self.options.max_chars
        data = {"context": case_context(ctx)[:limit], "response": response[:limit]}
        return [
            JudgeRequest(
                key=canonical_json([self.options.prompt, dim]),
                prompt=self.options.prompt,
                data={**data, "dimension": dim},
                reply_field="grade",
                samples=self.options.samples,
            )
            for dim in self.options.dimensions
        ]

    def judge_requests(self, ctx: ScoringContext) -> list[JudgeRequest]:
        return self._requests(ctx)

    def _dimension(self, request: JudgeRequest, judgments: Mapping[str, JudgeDecision]) -> dict[str, Any]:
        decisions = sample_decisions(judgments, request)
        grades = [valid_grade(d) for d in decisions]
        valid = [g for g in grades if g is not None]
        grade = majority_grade(valid)
        return {
            "grade": grade,
            "samples": grades,
            "variance": statistics.pvariance(valid) if valid else None,
            "flips": sum(1 for g in valid if g != grade),
            "errors": len(grades) - len(valid),
            "reasons": [d.reason if d is not None else None for d in decisions],
            "sample_errors": [None if d is None else d.error for d in decisions],
            "prompt_hash": next((d.prompt_hash for d in decisions if d is not None), None),
            "model": next((d.model for d in decisions if d is not None), None),
            "cached": [d is not None and d.cached for d in decisions],
            "injection": [None if d is None else d.injection for d in decisions],
        }

    def __call__(self, ctx: ScoringContext) -> Score:
        response = response_text(ctx.output)
        hits = injection_hits({"case": case_context(ctx), "response": response})
        matches = list(dict.fromkeys(h["pattern"] for h in hits))
        flags: dict[str, Any] = {
            "injection_flagged": bool(hits),
            "injection_matches": matches,
            "injection_hits": hits,
            "injection_judge": None,
        }
        if ctx.output.failed:
            return Score(value=math.nan, label="failed", explanation="the system failed", breakdown=flags)
        if not response.strip():
            return Score(value=math.nan, label="empty", explanation="nothing to judge", breakdown=flags)
        judgments = judgments_of(ctx)
        if judgments is None:
            return Score(
                value=math.nan, label="no_judge", explanation="the task has no judge", breakdown=flags
            )
        dims = {r.data["dimension"]: self._dimension(r, judgments) for r in self._requests(ctx)}
        said = [f for d in dims.values() for f in d["injection"] if f is not None]
        flags["injection_judge"] = True if True in said else False if said else None
        flags["injection_flagged"] = bool(hits) or flags["injection_judge"] is True
        grades = {d: v["grade"] for d, v in dims.items()}
        graded = sum(1 for g in grades.values() if g is not None)
        label = "graded" if graded == len(dims) else "partially_graded" if graded else "ungraded"
        shown = ", ".join(f"{d} {g if g is not None else '-'}" for d, g in grades.items())
        explanation = f"grades (1-5, majority of {self.options.samples}): {shown}"
        explanation += injection_note(hits, flags["injection_judge"])
        breakdown = {**flags, "grades": grades, "dimensions": dims, "tier": self.tier}
        return Score(value=graded / len(dims), label=label, explanation=explanation, breakdown=breakdown)


def make_judge_dimensions_scorer(options: Mapping[str, Any]) -> JudgeDimensionsScorer:
    return JudgeDimensionsScorer(JudgeDimensionsOptions.model_validate(options))
