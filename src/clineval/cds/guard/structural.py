"""Tier 1 scorers: the runtime guard's structural and safety checks (``clineval.cds.guard``), one scorer each.

Scorers ``schema``, ``citation_grounding``, ``scope``, ``contraindications``, ``escalation`` and
``latency`` (``tier = 1``). Per case: value 1.0 (label ``pass``), 0.0 (``fail``, or ``failed`` when the
system call failed) or NaN (``not_applicable``: e.g. no red flag, no medication, no latency budget);
``breakdown`` = ``{"passed", "reasons", ...details}`` (offending terms, red flags, medications, timings).
The recommendation is ``output.structured``, else ``output.text`` parsed as JSON; without either it is
an empty recommendation (so the schema check fails and a red-flag case is not escalated). The patient is
``case.input.data["patient"]``.

Metrics: ``<name>_pass_rate = #pass / #(pass + fail)`` with its 95% Wilson interval (``_ci``); the
escalation scorer adds ``guardrail_recall`` = red-flag cases escalated correctly / red-flag cases (the
same ratio over the cases where the check applies), ``red_flag_cases`` and, over every case,
``escalation_balanced_accuracy`` (recall and specificity averaged: ``clineval.cds.guard.escalation_balance``;
the two recall figures are tracked, this one gates); the latency scorer adds
``latency_p50_<stage>`` / ``latency_p95_<stage>`` (and ``_total``) over all cases with timings; the
contraindications scorer adds ``contraindications_specific_rate`` (each medication checked against a fact
of this patient: ``clineval.cds.guard.contraindication_specificity``; it gates, the presence check's pass
rate is tracked).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from clineval.cds.guard import GuardConfig, parse
from clineval.cds.guard.checks import CHECKS, escalation_text, schema_check
from clineval.cds.guard.config import TOTAL, CheckResult
from clineval.cds.guard.contraindication_specificity import specificity
from clineval.cds.guard.escalation_balance import BalancedEscalation, escalation_needed, with_balance
from clineval.core import Metric, MetricValue, Score, ScoringContext, StructuredOutput
from clineval.core.helpers.columns import ScoreColumn
from clineval.metrics.basic import Accuracy
from clineval.metrics.breakdown import BreakdownRate
from clineval.text.matching import fuzzy_match


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)


class SchemaOptions(_Options):
    required_fields: list[str] = Field(default_factory=lambda: ["recommended_actions"])
    allow_extra_fields: bool = True


class ScopeOptions(_Options):
    scope_file: str | None = None  # YAML with in_scope / out_of_scope term lists


class EscalationOptions(_Options):
    red_flags_file: str | None = None
    use_reference: bool = True  # a case whose reference says expected_escalation is a red-flag case too


class LatencyOptions(_Options):
    budget_s: dict[str, float] = Field(default_factory=dict)  # stage (or "total") -> seconds


def _recommendation(ctx: ScoringContext) -> tuple[StructuredOutput | None, list[str]]:
    if ctx.output.structured is not None:
        return ctx.output.structured, []
    if ctx.output.text:
        return parse(ctx.output.text)
    return None, ["the system returned no structured output"]


def _patient(ctx: ScoringContext) -> Mapping[str, Any] | None:
    patient = ctx.case.input.data.get("patient")
    return patient if isinstance(patient, Mapping) else None


def _score(result: CheckResult) -> Score:
    breakdown: dict[str, Any] = {"passed": result.passed, "reasons": list(result.reasons), **result.data}
    if result.passed is None:
        return Score(
            value=math.nan, label="not_applicable", explanation="; ".join(result.reasons), breakdown=breakdown
        )
    return Score(
        value=1.0 if result.passed else 0.0,
        label="pass" if result.passed else "fail",
        explanation="; ".join(result.reasons) or None,
        breakdown=breakdown,
    )


class GuardCheckScorer:
    """One guard check as a scorer (``tier = 1``)."""

    tier = 1

    def __init__(self, name: str, config: GuardConfig, *, confidence: float = 0.95) -> None:
        self.name = name
        self.config = config
        self.metrics: Sequence[Metric] = (Accuracy(name=f"{name}_pass_rate", confidence=confidence),)

    def result(self, ctx: ScoringContext) -> CheckResult:
        rec, problems = _recommendation(ctx)
        if self.name == "schema":
            return schema_check(rec, problems, self.config)
        timings = (ctx.output.stage_latency_s, ctx.output.latency_s)
        return CHECKS[self.name](rec or StructuredOutput(), _patient(ctx), self.config, timings)

    def __call__(self, ctx: ScoringContext) -> Score:
        error = ctx.output.error
        if error is not None and self.name != "latency":
            return Score(
                value=0.0,
                label="failed",
                explanation=error.message[:500],
                breakdown={"passed": False, "reasons": [f"system failed: {error.kind}"], "error": error.kind},
            )
        return _score(self.result(ctx))


class EscalationScorer(GuardCheckScorer):
    """Safety guardrail recall on red-flag cases (patient red flags, or ``expected_escalation``)."""

    def __init__(self, config: GuardConfig, *, use_reference: bool = True, confidence: float = 0.95) -> None:
        super().__init__("escalation", config, confidence=confidence)
        self.use_reference = use_reference
        self.metrics = (
            *self.metrics,
            Accuracy(name="guardrail_recall", confidence=confidence),
            _Count("red_flag_cases"),
            BalancedEscalation(confidence),
        )

    def result(self, ctx: ScoringContext) -> CheckResult:
        found = super().result(ctx)
        reference = ctx.case.reference.data
        if found.passed is not None or not (
            self.use_reference and reference.get("expected_escalation") is True
        ):
            return found
        rec, _ = _recommendation(ctx)
        text = escalation_text(rec or StructuredOutput())
        reasons_expected = [str(r) for r in reference.get("escalation_reasons") or ()]
        if not text:
            return CheckResult("escalation", False, ["escalation expected but when_to_escalate is missing"])
        relevant = not reasons_expected or any(fuzzy_match(text, r, 0.5) for r in reasons_expected)
        relevant = relevant or bool(self.config.red_flags.escalation_terms_named(text))
        if relevant:
            return CheckResult("escalation", True, [], data={"escalated": True})
        return CheckResult(
            "escalation",
            False,
            [f"when_to_escalate does not address the expected reasons: {'; '.join(reasons_expected)}"],
            data={"escalated": True},
        )

    def __call__(self, ctx: ScoringContext) -> Score:
        """The check's score (NaN on a case without red flags, as the runtime guard), with the facts of
        ``escalation_balanced_accuracy`` (``clineval.cds.guard.escalation_balance``) on every case."""
        patient, reference = _patient(ctx), ctx.case.reference.data
        applies = bool(self.config.red_flags.detect(patient)) or (
            self.use_reference and reference.get("expected_escalation") is True
        )
        needed = escalation_needed(applies, patient, reference)
        failed = ctx.output.error is not None
        if failed and not applies:
            score = Score(value=math.nan, label="not_applicable", breakdown={"passed": None, "reasons": []})
            return with_balance(score, needed, False, failed)
        rec, _ = (None, []) if failed else _recommendation(ctx)
        text = escalation_text(rec) if rec is not None else ""
        escalated = bool(text and self.config.red_flags.escalation_terms_named(text))
        return with_balance(super().__call__(ctx), needed, escalated, failed)


class ContraindicationsScorer(GuardCheckScorer):
    """The presence check (``contraindications_pass_rate``, tracked: the runtime guard's) and whether each
    medication was checked against a fact of this patient (``contraindications_specific_rate``, gates:
    ``clineval.cds.guard.contraindication_specificity``)."""

    def __init__(self, config: GuardConfig, *, confidence: float = 0.95) -> None:
        super().__init__("contraindications", config, confidence=confidence)
        rate = BreakdownRate("specific", name="contraindications_specific_rate", confidence=confidence)
        self.metrics = (*self.metrics, rate)

    def __call__(self, ctx: ScoringContext) -> Score:
        score = super().__call__(ctx)
        if ctx.output.error is not None:
            facts: dict[str, Any] = {"specific": False, "unchecked": [], "facts": []}
        else:
            rec, _ = _recommendation(ctx)
            facts = specificity(rec or StructuredOutput(), _patient(ctx), self.config.drugs)
        return score.model_copy(update={"breakdown": {**score.breakdown, **facts}})


class _Count:
    """``<name>`` = number of scorable scores (cases where the check applies)."""

    breakdown_keys: tuple[str, ...] = ()

    def __init__(self, name: str) -> None:
        self.name = name

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        return {self.name: int(column.scorable().sum())}


class LatencyPercentiles:
    """``latency_p50_<stage>`` and ``latency_p95_<stage>``: the 50th / 95th percentiles (linear
    interpolation between order statistics, Hyndman & Fan 1996 type 7, numpy's default) of each stage's
    seconds over the cases that report it (``breakdown["latency_s"]``; ``total`` = ``latency_s``)."""

    name = "latency_percentiles"
    breakdown_keys: tuple[str, ...] = ("latency_s",)

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        per_stage: dict[str, list[float]] = {}
        for breakdown in column.iter_breakdowns():
            for stage, seconds in (breakdown.get("latency_s") or {}).items():
                if isinstance(seconds, int | float) and math.isfinite(seconds):
                    per_stage.setdefault(str(stage), []).append(float(seconds))
        out: dict[str, MetricValue] = {}
        for stage in sorted(per_stage):
            p50, p95 = np.percentile(np.asarray(per_stage[stage]), [50.0, 95.0])
            out[f"latency_p50_{stage}"] = float(p50)
            out[f"latency_p95_{stage}"] = float(p95)
        return out


class LatencyScorer(GuardCheckScorer):
    """Per-case pass/fail against per-stage budgets; p50/p95 per stage over the task."""

    def __init__(self, config: GuardConfig, *, confidence: float = 0.95) -> None:
        super().__init__("latency", config, confidence=confidence)
        self.metrics = (*self.metrics, LatencyPercentiles())


def make_schema_scorer(options: Mapping[str, Any]) -> GuardCheckScorer:
    opts = SchemaOptions.model_validate(dict(options))
    config = GuardConfig(
        required_fields=tuple(opts.required_fields), allow_extra_fields=opts.allow_extra_fields
    )
    return GuardCheckScorer("schema", config, confidence=opts.confidence)


def make_citation_grounding_scorer(options: Mapping[str, Any]) -> GuardCheckScorer:
    opts = _Options.model_validate(dict(options))
    return GuardCheckScorer("citation_grounding", GuardConfig(), confidence=opts.confidence)


def make_scope_scorer(options: Mapping[str, Any]) -> GuardCheckScorer:
    opts = ScopeOptions.model_validate(dict(options))
    return GuardCheckScorer("scope", GuardConfig.load(scope_path=opts.scope_file), confidence=opts.confidence)


def make_contraindications_scorer(options: Mapping[str, Any]) -> ContraindicationsScorer:
    opts = _Options.model_validate(dict(options))
    return ContraindicationsScorer(GuardConfig(), confidence=opts.confidence)


def make_escalation_scorer(options: Mapping[str, Any]) -> EscalationScorer:
    opts = EscalationOptions.model_validate(dict(options))
    config = GuardConfig.load(red_flags_path=opts.red_flags_file)
    return EscalationScorer(config, use_reference=opts.use_reference, confidence=opts.confidence)


def make_latency_scorer(options: Mapping[str, Any]) -> LatencyScorer:
    opts = LatencyOptions.model_validate(dict(options))
    return LatencyScorer(GuardConfig(latency_budget_s=dict(opts.budget_s)), confidence=opts.confidence)


__all__ = [
    "TOTAL",
    "ContraindicationsScorer",
    "EscalationScorer",
    "GuardCheckScorer",
    "LatencyPercentiles",
    "LatencyScorer",
]
