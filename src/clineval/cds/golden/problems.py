"""``problems_identified`` (tier 3): does the recommendation identify the problems the golden set expects?

Four-tier evaluation design, golden set: "Each case includes ... Expected problems identified". The
case's ``reference.data["expected_problems"]`` (E, distinct names) is compared with the problems the
output identifies (I, distinct names): its ``problems`` list, else the ``proposed`` items of its
``differential`` (an ``excluded`` or ``alternative`` item is not a problem the system states).

Matching is the clinical equivalence layer (``clineval.text.best_match``: same name, curated synonym,
abbreviation, conservative word overlap), **without the hierarchy tier**: a broader name ("acute coronary
syndrome" for NSTEMI, "lung disease" for COPD) is not the expected problem, as an ancestor is not a DDx hit.
Each expected problem, in order, is matched to the most equivalent identified problem not matched yet (one
to one, so naming a problem twice counts once); with m the matched pairs, per case::

    recall    = m / |E|
    precision = m / |I|                         (None when I is empty)
    Jaccard   = m / (|E| + |I| - m)             (|E ∩ I| / |E ∪ I| under the matching)

``value`` = Jaccard, so ``problem_jaccard`` (its mean over the cases, 95% bootstrap interval) is the metric
that gates: **recall alone is inflated by listing every problem** (a list of all 14 golden-set problems
has recall 1.0 on every case), precision alone by listing one safe problem, and even F1 lets the list of
all 14 (0.207) beat the best constant answer (0.196, "community-acquired pneumonia" everywhere); Jaccard
does not (0.103 against 0.188; ``tests/test_golden_label_scorers.py``). It is the set overlap the metrics
overview uses for clinical accuracy. ``problem_recall`` and ``problem_precision`` (means of the per-case
values; precision over the cases with a non-empty list) are reported beside it and tracked. An output with
no problem list (nor a proposed differential) scores 0 (label ``no_problem_list``): it identified nothing;
a failed call 0 (``failed``). Labels: ``all_found`` (recall 1), ``partial``, ``none_found``,
``no_problem_list``, ``failed``, ``no_reference``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.cds.golden.labels import BreakdownAverage, failed_score, label_of, no_reference, recommendation
from clineval.core import Metric, Score, ScoringContext, StructuredOutput
from clineval.metrics.basic import Accuracy
from clineval.text import best_match

KEY = "expected_problems"


class ProblemsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 0
    n_resamples: int = Field(default=2000, ge=1)


def identified_problems(rec: StructuredOutput | None) -> list[str] | None:
    """The distinct problems the output states (None when it states no list at all)."""
    if rec is None:
        return None
    if rec.problems is not None:
        names = rec.problems
    elif rec.differential is not None:
        names = [d.diagnosis for d in rec.differential if d.status == "proposed"]
    else:
        return None
    seen: dict[str, str] = {}
    for name in names:
        if name.strip():
            seen.setdefault(" ".join(name.lower().split()), name.strip())
    return list(seen.values())


def match_problems(expected: Sequence[str], identified: Sequence[str]) -> dict[str, Any]:
    """Recall, precision, Jaccard and the pairs (see the module docstring): each expected problem, in
    order, is matched to the most equivalent identified problem not matched yet (one to one)."""
    free = list(identified)
    matched: list[dict[str, Any]] = []
    missed: list[str] = []
    for name in expected:
        index, eq = best_match(name, free, allow_hierarchy=False)
        if index is None:
            missed.append(name)
        else:
            matched.append({"expected": name, "identified": free.pop(index), "tier": eq.tier})
    m, n_e, n_i = len(matched), len(expected), len(identified)
    return {
        "recall": m / n_e,
        "precision": m / n_i if n_i else None,
        "jaccard": m / (n_e + n_i - m),
        "matched": matched,
        "missed": missed,
        "extra": free,
    }


class ProblemsScorer:
    name = "problems_identified"
    tier = 3

    def __init__(self, options: ProblemsOptions | None = None) -> None:
        self.options = options or ProblemsOptions()
        seed, n = self.options.seed, self.options.n_resamples
        self.metrics: Sequence[Metric] = (
            Accuracy(name="problem_jaccard", ci="bootstrap", seed=seed, n_resamples=n),
            BreakdownAverage("recall", name="problem_recall", seed=seed, n_resamples=n),
            BreakdownAverage("precision", name="problem_precision", seed=seed, n_resamples=n),
        )

    def __call__(self, ctx: ScoringContext) -> Score:
        raw = label_of(ctx, KEY)
        expected = list(dict.fromkeys(str(p) for p in raw if str(p).strip())) if isinstance(raw, list) else []
        if not expected:
            return no_reference(KEY)
        base: dict[str, Any] = {"expected": expected}
        zero = {
            "recall": 0.0,
            "precision": None,
            "jaccard": 0.0,
            "matched": [],
            "missed": expected,
            "extra": [],
        }
        if ctx.output.failed:
            return failed_score(ctx, {**base, **zero})
        identified = identified_problems(recommendation(ctx))
        if identified is None:
            why = "the output states no problem list (nor a proposed differential)"
            return Score(value=0.0, label="no_problem_list", explanation=why, breakdown={**base, **zero})
        found = match_problems(expected, identified)
        label = "all_found" if found["recall"] == 1.0 else "partial" if found["recall"] > 0 else "none_found"
        missed, extra = ", ".join(found["missed"]) or "-", ", ".join(found["extra"]) or "-"
        diff = f"missed: {missed}; not expected: {extra}" if found["missed"] or found["extra"] else None
        return Score(
            value=found["jaccard"],
            label=label,
            explanation=diff,
            breakdown={**base, "identified": identified, **found},
        )


def make_problems_scorer(options: Mapping[str, Any]) -> ProblemsScorer:
    return ProblemsScorer(ProblemsOptions.model_validate(dict(options)))
