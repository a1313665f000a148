"""ClinicalAccuracy: weighted Jaccard agreement of the clinical entities of an output and its reference.

Entities are extracted by ``clineval.text.entities`` (dictionary based: diagnoses, medications,
procedures, labs/findings, each normalised to a concept key), with negation from the project's
ConText detector (``clineval.text.assertion``; Harkema et al. 2009): "no fever" claims no fever.
A is the set of non-negated concept keys of the output, B of the reference, per category c::

    J_w = Σ_c w_c |A_c ∩ B_c| / Σ_c w_c |A_c ∪ B_c|

(weighted Jaccard over categories, as in the weighted set-overlap of Ioffe 2010, "Improved consistent
sampling, weighted minhash", with one weight per category). A category with A_c ∪ B_c = ∅ adds nothing
to either sum, so the weights are in effect renormalised over the categories either text mentions; a
category with weight 0 is ignored. Default weights: diagnoses 0.4, medications 0.3, procedures 0.15,
labs_findings 0.15 (``DEFAULT_WEIGHTS``; the diagnosis and treatment carry most of a clinical answer).

Fallback: when neither text has an entity in a weighted category, J_w is undefined; the value is then
1.0 if the normalised texts (``normalize_for_match``) are equal, else 0.0, and ``method`` says
``"string"`` instead of ``"entities"``.

Texts compared. Output: ``output.structured`` when it has an answer, differential or recommended
actions (the answer, then each non-excluded differential diagnosis, then each action, one a line);
otherwise ``output.text``. Reference, the first non-empty of: ``reference.answer_text``,
``reference.data["rationale"]``, ``reference.differential`` (one a line). No reference: NaN
(``no_reference``); a failed system call: 0.0 (``failed``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from clineval.core import Metric, Score, ScoringContext
from clineval.metrics.basic import Accuracy, Count
from clineval.text.assertion import _modifiers, _negated_by
from clineval.text.entities import (
    CATEGORIES,
    Category,
    Entity,
    EntityVocabulary,
    SpanNegation,
)
from clineval.text.entities import entity_sets as _entity_sets
from clineval.text.entities import extract_entities as _extract_entities
from clineval.text.matching import normalize_for_match

DEFAULT_WEIGHTS: dict[Category, float] = {
    "diagnoses": 0.4,
    "medications": 0.3,
    "procedures": 0.15,
    "labs_findings": 0.15,
}


def context_negation(words: Sequence[str]) -> SpanNegation:
    """The ConText detector of ``clineval.text.assertion`` over one sentence's tokens."""
    mods = _modifiers(words)
    if not mods:
        return _never
    return lambda start, end: _negated_by(mods, start, end)


def _never(start: int, end: int) -> str | None:
    return None


def extract_entities(text: str, vocabulary: EntityVocabulary | None = None) -> list[Entity]:
    """``clineval.text.entities.extract_entities`` with ConText negation."""
    return _extract_entities(text, negation=context_negation, vocabulary=vocabulary)


def entity_sets(text: str, vocabulary: EntityVocabulary | None = None) -> dict[Category, set[str]]:
    """Category -> concept keys ``text`` claims (negated mentions left out), ConText negation."""
    return _entity_sets(text, negation=context_negation, vocabulary=vocabulary)


def weighted_jaccard(
    a: Mapping[Category, set[str]], b: Mapping[Category, set[str]], weights: Mapping[Category, float]
) -> float | None:
    """J_w = Σ_c w_c |A_c ∩ B_c| / Σ_c w_c |A_c ∪ B_c|; None when the denominator is 0."""
    num = den = 0.0
    for category, w in weights.items():
        if w <= 0:
            continue
        sa, sb = a.get(category, set()), b.get(category, set())
        num += w * len(sa & sb)
        den += w * len(sa | sb)
    return num / den if den > 0 else None


def clinical_accuracy(
    output: str,
    reference: str,
    weights: Mapping[Category, float] = DEFAULT_WEIGHTS,
    vocabulary: EntityVocabulary | None = None,
) -> tuple[float, dict[str, Any]]:
    """(J_w or the string fallback, breakdown: method, per category matched / missed / extra keys)."""
    a = entity_sets(output, vocabulary)
    b = entity_sets(reference, vocabulary)
    value = weighted_jaccard(a, b, weights)
    per: dict[str, dict[str, list[str]]] = {
        c: {"matched": sorted(a[c] & b[c]), "missed": sorted(b[c] - a[c]), "extra": sorted(a[c] - b[c])}
        for c in CATEGORIES
    }
    breakdown: dict[str, Any] = {"method": "entities", "categories": per, "weights": dict(weights)}
    if value is None:
        breakdown["method"] = "string"
        value = 1.0 if normalize_for_match(output) == normalize_for_match(reference) else 0.0
    return value, breakdown


def output_text(ctx: ScoringContext) -> str:
    """The output text compared (module docstring)."""
    s = ctx.output.structured
    if s is not None and (s.answer or s.differential or s.recommended_actions):
        parts = [s.answer or ""]
        parts += [d.diagnosis for d in s.differential or () if d.status != "excluded"]
        parts += [a.action for a in s.recommended_actions or ()]
        return "\n".join(p for p in parts if p)
    return ctx.output.text or ""


def reference_text(ctx: ScoringContext) -> str:
    """The reference text compared (module docstring)."""
    ref = ctx.case.reference
    rationale = ref.data.get("rationale")
    for candidate in (ref.answer_text, rationale if isinstance(rationale, str) else None):
        if candidate and candidate.strip():
            return candidate
    return "\n".join(ref.differential)


class ClinicalAccuracyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: dict[Category, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    seed: int = 0

    @field_validator("weights")
    @classmethod
    def _check(cls, value: dict[Category, float]) -> dict[Category, float]:
        if any(w < 0 or not math.isfinite(w) for w in value.values()) or not any(value.values()):
            raise ValueError("weights must be finite, >= 0, and not all 0")
        return value


class ClinicalAccuracyScorer:
    """Scorer ``clinical_accuracy``: value J_w (module docstring); metrics ``clinical_accuracy`` (mean),
    ``clinical_accuracy_ci`` (seeded percentile bootstrap) and ``n``."""

    name = "clinical_accuracy"

    def __init__(self, options: ClinicalAccuracyOptions | None = None) -> None:
        self.options = options or ClinicalAccuracyOptions()
        self.metrics: Sequence[Metric] = (
            Accuracy(
                ci="bootstrap", confidence=self.options.confidence, seed=self.options.seed, name=self.name
            ),
            Count(),
        )

    def __call__(self, ctx: ScoringContext) -> Score:
        reference = reference_text(ctx)
        if not reference.strip():
            return Score(value=math.nan, label="no_reference", explanation="the case has no reference text")
        error = ctx.output.error
        if error is not None:
            return Score(
                value=0.0, label="failed", explanation=error.message[:500], breakdown={"error": error.kind}
            )
        value, breakdown = clinical_accuracy(output_text(ctx), reference, self.options.weights)
        return Score(value=value, label=breakdown["method"], breakdown=breakdown)


def make_clinical_accuracy_scorer(options: Mapping[str, Any]) -> ClinicalAccuracyScorer:
    return ClinicalAccuracyScorer(ClinicalAccuracyOptions.model_validate(dict(options)))
