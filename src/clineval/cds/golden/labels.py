"""What the golden-set label scorers share: reading the output and the label, and their metrics.

The four-tier golden set (``data/golden_set/``) labels each case with its expected problems, the evidence
source types a recommendation should cite and the expected severity (``case.reference.data``:
``expected_problems``, ``evidence_source_types``, ``severity``). Three scorers read them:

* ``problems_identified`` (``clineval.cds.golden.problems``, tier 3): problem recall, precision, F1;
* ``evidence_types_cited`` (``clineval.cds.golden.evidence``, tier 2): coverage of the expected source
  types by evidence the recommendations actually cite and that is grounded in the case;
* ``severity_agreement`` (``clineval.cds.golden.severity``, tier 3): exact, within-one-level and
  chance-corrected (Cohen's kappa) agreement.

The recommendation is ``output.structured``, else ``output.text`` read as JSON (``clineval.cds.guard.parse``,
as tier 1 reads it). A failed system call scores 0 (label ``failed``): it identified, cited and graded
nothing. A case without the label is not scorable (NaN, ``no_reference``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from clineval.cds.guard import parse
from clineval.core import MetricValue, Score, ScoringContext, StructuredOutput
from clineval.core.helpers.columns import ScoreColumn
from clineval.metrics.intervals import bootstrap_interval


def recommendation(ctx: ScoringContext) -> StructuredOutput | None:
    """The structured output, else the text parsed as one; None when there is neither."""
    if ctx.output.structured is not None:
        return ctx.output.structured
    if ctx.output.text and ctx.output.text.strip():
        return parse(ctx.output.text)[0]
    return None


def label_of(ctx: ScoringContext, key: str) -> Any:
    """``case.reference.data[key]`` (None when absent)."""
    return ctx.case.reference.data.get(key)


def failed_score(ctx: ScoringContext, breakdown: dict[str, Any]) -> Score:
    error = ctx.output.error
    return Score(
        value=0.0,
        label="failed",
        explanation=error.message[:500] if error else None,
        breakdown={**breakdown, "error": error.kind if error else None},
    )


def no_reference(key: str) -> Score:
    return Score(value=math.nan, label="no_reference", explanation=f"the case has no reference.data[{key!r}]")


class BreakdownAverage:
    """``<name> = (1/m) Σ breakdown_i[key]`` over the m cases where it is a number (failed cases record 0,
    cases where it is undefined record None and are left out), and ``<name>_ci``: the 95% percentile
    bootstrap interval of that mean (seeded; ``clineval.metrics.intervals.bootstrap_interval``). NaN when
    m = 0."""

    def __init__(self, key: str, *, name: str, seed: int = 0, n_resamples: int = 2000) -> None:
        self.key, self.name = key, name
        self.seed, self.n_resamples = seed, n_resamples
        self.breakdown_keys: tuple[str, ...] = (key,)

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        values = [
            float(v)
            for b in column.iter_breakdowns()
            if isinstance(v := b.get(self.key), int | float) and not isinstance(v, bool) and not math.isnan(v)
        ]
        if not values:
            return {self.name: math.nan, f"{self.name}_ci": [math.nan, math.nan]}
        lo, hi = bootstrap_interval(values, seed=self.seed, n_resamples=self.n_resamples)
        return {self.name: math.fsum(values) / len(values), f"{self.name}_ci": [lo, hi]}
