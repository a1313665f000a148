"""``reasoning_quality``: a deterministic composite score of a system's clinical reasoning text.

Components (pure functions in ``clineval.quality.reasoning_parts``, each in [0, 1]):

* ``overlap_f1``: SQuAD token F1 of the reasoning against a reference rationale;
* ``structure``: explicit steps, a differential, a conclusion (a third each);
* ``evidence_use``: fraction of the case's supporting findings the reasoning cites;
* ``factual_consistency``: 1 - contradicted / stated values (numbers that differ from the vignette's);
* ``fallacy_penalty``: premature closure, circular statements, unsupported certainty (capped at 1).

``composite = clip(Σ_i w_i c_i / Σ_i w_i - w_f · penalty, 0, 1)`` over the components c_i that apply
(a case with no reference rationale has no ``overlap_f1``; one with nothing to cite no ``evidence_use``;
the remaining weights are renormalised so they still sum to 1). Default weights (``DEFAULT_WEIGHTS``):
overlap 0.25, structure 0.20, evidence 0.30, consistency 0.25; fallacy weight w_f = 0.20. Evidence has
the largest weight because citing the case's findings is what separates grounded reasoning from
plausible text; overlap is kept below it because a rationale can be worded many ways.

Inputs from a case: the reasoning = ``output.structured.reasoning`` joined by new lines, else the
structured differential's "diagnosis: reasoning" lines, else ``output.text``; the reference rationale =
``reference.data["rationale"]`` (a string or a list of strings), else the distinct supporting findings
joined (Open-XDDx); the findings = the distinct values of ``reference.findings``, else
``salient_facts(vignette)``; the vignette = ``input.vignette`` or ``input.question``.
The breakdown stores every component, the weights used, and the structure elements, cited findings,
contradicted values and fallacy patterns detected. Definitions and the Open-XDDx validation:
``docs/quality/reasoning_quality.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from clineval.core import Case, Metric, Score, ScoringContext, SystemOutput
from clineval.metrics.basic import Accuracy, Count
from clineval.metrics.breakdown import BreakdownMean
from clineval.quality.reasoning_parts import (
    cited_findings,
    contradicted_values,
    distinct_findings,
    fallacy_penalty,
    overlap_f1,
    salient_facts,
    structure_parts,
)

COMPONENTS = ("overlap_f1", "structure", "evidence_use", "factual_consistency")
DEFAULT_WEIGHTS: dict[str, float] = {
    "overlap_f1": 0.25,
    "structure": 0.20,
    "evidence_use": 0.30,
    "factual_consistency": 0.25,
}
DEFAULT_FALLACY_WEIGHT = 0.20


def composite(
    components: Mapping[str, float | None],
    penalty: float,
    weights: Mapping[str, float] | None = None,
    fallacy_weight: float = DEFAULT_FALLACY_WEIGHT,
) -> float:
    """``clip(Σ w_i c_i / Σ w_i - fallacy_weight · penalty, 0, 1)`` over the components that are not None."""
    w = DEFAULT_WEIGHTS if weights is None else weights
    present = [(w[k], v) for k, v in components.items() if v is not None and w.get(k, 0.0) > 0]
    total = math.fsum(wi for wi, _ in present)
    base = math.fsum(wi * v for wi, v in present) / total if total > 0 else 0.0
    return min(1.0, max(0.0, base - fallacy_weight * penalty))


def reasoning_text(output: SystemOutput) -> tuple[str, int]:
    """(the reasoning text of an output, the number of diagnoses in its structured differential)."""
    s = output.structured
    n_candidates = len(s.differential or ()) if s is not None else 0
    if s is not None and s.reasoning:
        return "\n".join(s.reasoning), n_candidates
    if s is not None and any(d.reasoning for d in s.differential or ()):
        lines = [
            f"{d.diagnosis}: {d.reasoning}" if d.reasoning else d.diagnosis for d in s.differential or ()
        ]
        return "\n".join(lines), n_candidates
    return output.text or "", n_candidates


def case_inputs(case: Case) -> tuple[str, list[str], str]:
    """(reference rationale, findings to cite, vignette) of a case (module docstring)."""
    vignette = case.input.vignette or case.input.question or ""
    findings = distinct_findings([f for fs in case.reference.findings.values() for f in fs])
    rationale = case.reference.data.get("rationale")
    if isinstance(rationale, list):
        rationale = "\n".join(str(r) for r in rationale)
    if not isinstance(rationale, str) or not rationale.strip():
        rationale = ". ".join(findings)
    return rationale, findings or distinct_findings(salient_facts(vignette)), vignette


def annotated_rationale(findings: Mapping[str, Sequence[str]], *, cite: bool = True) -> str:
    """A rationale built from annotations ``{diagnosis: [supporting findings]}`` (first = most likely):
    a differential line, one numbered step per diagnosis ("<diagnosis> is supported by <f1>, <f2>."; with
    ``cite=False`` "<diagnosis> is considered."), and a conclusion naming the first diagnosis."""
    names = list(findings)
    if not names:
        raise ValueError("findings must name at least one diagnosis")
    lines = [f"The differential diagnosis includes {', '.join(names)}."]
    for i, (name, items) in enumerate(findings.items(), start=1):
        support = ", ".join(items)
        lines.append(
            f"{i}. {name} is supported by {support}." if cite and support else f"{i}. {name} is considered."
        )
    lines.append(f"Therefore, the most likely diagnosis is {names[0]}.")
    return "\n".join(lines)


class ReasoningOptions(BaseModel):
    """``scorers: [{reasoning_quality: {weights: {evidence_use: 0.4, ...}, fallacy_weight: 0.2}}]``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    fallacy_weight: float = Field(default=DEFAULT_FALLACY_WEIGHT, ge=0.0, le=1.0)
    match_threshold: float = Field(default=0.6, gt=0.0, le=1.0)
    seed: int = 0

    @field_validator("weights")
    @classmethod
    def _check_weights(cls, weights: dict[str, float]) -> dict[str, float]:
        unknown = set(weights) - set(COMPONENTS)
        if unknown:
            raise ValueError(f"unknown component(s) {sorted(unknown)}; known: {list(COMPONENTS)}")
        merged = {**DEFAULT_WEIGHTS, **weights}  # a component not named keeps its default weight
        if any(v < 0 for v in merged.values()) or not any(v > 0 for v in merged.values()):
            raise ValueError("weights must be >= 0 with at least one > 0")
        return merged


class ReasoningQualityScorer:
    name = "reasoning_quality"

    def __init__(self, options: ReasoningOptions | None = None) -> None:
        self.options = options or ReasoningOptions()
        self.metrics: Sequence[Metric] = (
            Accuracy(ci="bootstrap", seed=self.options.seed, name="reasoning_quality"),
            *(BreakdownMean(k, name=f"reasoning_{k}") for k in (*COMPONENTS, "fallacy_penalty")),
            Count(),
        )

    def analyse(self, text: str, case: Case, n_candidates: int = 0) -> dict[str, Any]:
        """Every component of one reasoning text for one case (the ``breakdown``; ``composite`` in it)."""
        o = self.options
        rationale, findings, vignette = case_inputs(case)
        parts = structure_parts(text, n_candidates)
        cited = cited_findings(text, findings, o.match_threshold) if findings else []
        checkable, contradicted = contradicted_values(text, vignette)
        penalty, found = fallacy_penalty(text)
        components: dict[str, float | None] = {
            "overlap_f1": overlap_f1(text, rationale) if rationale.strip() else None,
            "structure": parts.value,
            "evidence_use": sum(cited) / len(cited) if cited else None,
            "factual_consistency": 1.0 - len(contradicted) / len(checkable) if checkable else 1.0,
        }
        return {
            **components,
            "fallacy_penalty": penalty,
            "composite": composite(components, penalty, o.weights, o.fallacy_weight),
            "weights": {**o.weights, "fallacy": o.fallacy_weight},
            "structure_elements": {
                "steps": parts.steps,
                "differential": parts.differential,
                "conclusion": parts.conclusion,
            },
            "findings_cited": [f for f, c in zip(findings, cited, strict=True) if c],
            "findings_missed": [f for f, c in zip(findings, cited, strict=True) if not c],
            "values_stated": [v.text for v in checkable],
            "values_contradicted": [v.text for v in contradicted],
            "fallacies": [{"pattern": f.pattern, "text": f.text} for f in found],
        }

    def __call__(self, ctx: ScoringContext) -> Score:
        if ctx.output.failed:
            error = ctx.output.error
            return Score(value=math.nan, label="failed", explanation=error.message[:500] if error else None)
        text, n_candidates = reasoning_text(ctx.output)
        if not text.strip():
            return Score(value=0.0, label="no_reasoning", explanation="the output has no reasoning text")
        breakdown = self.analyse(text, ctx.case, n_candidates)
        return Score(value=breakdown["composite"], label="scored", breakdown=breakdown)


def make_reasoning_quality_scorer(options: Mapping[str, Any]) -> ReasoningQualityScorer:
    """Registry factory: validates ``options`` (pydantic, extra keys forbidden) and builds the scorer."""
    return ReasoningQualityScorer(ReasoningOptions.model_validate(dict(options)))
