"""``severity_agreement`` (tier 3): does the output's severity agree with the golden set's?

Four-tier evaluation design, golden set: "Each case includes ... Expected severity level". Levels, in
order: ``low`` < ``moderate`` < ``high`` < ``critical``. The output's ``severity`` is read as one level
(words: low / mild / minor; moderate / medium / intermediate; high / severe / serious; critical /
life-threatening / emergency); a text naming two levels ("moderate to high") or none is ``unparsed`` and
counts as disagreement, like a missing severity (``no_severity``) or a failed call (``failed``).

Per case ``value`` = 1 when the level equals the expected one, else 0; ``breakdown``: ``expected``,
``predicted`` (None when unparsed, missing or failed), ``within_one`` (|rank difference| <= 1). Metrics:

* ``severity_accuracy`` = mean exact agreement (Wilson 95% interval): tracked, because a constant answer
  reaches the majority class's share (the golden set: "moderate" on 51 of 102 cases, 0.5);
* ``severity_within_one`` = share within one level (Wilson): tracked, because a constant middle level
  reaches most cases (0.81 for "moderate" on the golden set);
* ``severity_kappa`` = Cohen's kappa (Cohen 1960, "A coefficient of agreement for nominal scales"),
  ``(p_o - p_e) / (1 - p_e)``, p_o the observed agreement, p_e = Σ_c p_expected(c) · p_predicted(c) with
  "no level" a category of its own; 0 for any constant answer and about 0 for a random one, so nothing
  that ignores the case beats it: the metric that gates. NaN when p_e = 1 (one category on both sides);
  ``severity_kappa_ci`` a 95% percentile bootstrap over cases (seeded; resamples where kappa is undefined
  are skipped); when the resamples have no spread (every case agrees, or a constant answer: kappa 1 or 0
  in every resample) the no-spread interval of ``clineval.metrics.intervals.constant_interval`` over
  kappa's range [-1, 1] (``[1 - 2 u_n, 1]``, ``[-u_n, u_n]``), never ``[x, x]``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from clineval.cds.golden.labels import failed_score, label_of, no_reference, recommendation
from clineval.core import Metric, MetricValue, Score, ScoringContext
from clineval.core.helpers.columns import ScoreColumn
from clineval.metrics.basic import Accuracy
from clineval.metrics.breakdown import BreakdownRate
from clineval.metrics.intervals import constant_interval

KEY = "severity"
KAPPA_BOUNDS = (-1.0, 1.0)  # kappa's range, for the no-spread interval
LEVELS = ("low", "moderate", "high", "critical")
WORDS = {
    "low": ("low", "mild", "minor"),
    "moderate": ("moderate", "medium", "intermediate"),
    "high": ("high", "severe", "serious"),
    "critical": ("critical", "life-threatening", "life threatening", "emergency"),
}
_PATTERNS = {
    level: re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b") for level, words in WORDS.items()
}


class SeverityOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 0
    n_resamples: int = Field(default=2000, ge=1)


def severity_level(text: str | None) -> str | None:
    """The one level ``text`` names (None: none, or several)."""
    if not text:
        return None
    found = {level for level, pattern in _PATTERNS.items() if pattern.search(text.lower())}
    return found.pop() if len(found) == 1 else None


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float:
    """Cohen's kappa of (expected, predicted) labels; NaN when undefined (no pairs, or p_e = 1)."""
    n = len(pairs)
    if not n:
        return math.nan
    observed = sum(1 for e, p in pairs if e == p) / n
    left, right = Counter(e for e, _ in pairs), Counter(p for _, p in pairs)
    chance = math.fsum(left[c] * right[c] for c in left) / (n * n)
    return math.nan if chance >= 1.0 else (observed - chance) / (1.0 - chance)


def _resampled_kappas(pairs: Sequence[tuple[str, str]], seed: int, n_resamples: int) -> np.ndarray:
    """Kappa of each bootstrap resample of the pairs (NaN where undefined), vectorised in chunks."""
    codes = {c: i for i, c in enumerate(sorted({x for pair in pairs for x in pair}))}
    e = np.array([codes[a] for a, _ in pairs])
    p = np.array([codes[b] for _, b in pairs])
    n, rng, out = len(pairs), np.random.default_rng(seed), []
    chunk = max(1, (1 << 22) // n)
    for start in range(0, n_resamples, chunk):
        draws = rng.integers(0, n, size=(min(chunk, n_resamples - start), n))
        ex, pr = e[draws], p[draws]
        observed = (ex == pr).mean(axis=1)
        chance = sum((ex == c).sum(axis=1) * (pr == c).sum(axis=1) for c in range(len(codes))) / (n * n)
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append(np.where(chance >= 1.0, np.nan, (observed - chance) / (1.0 - chance)))
    return np.concatenate(out)


class SeverityKappa:
    """``severity_kappa`` and ``severity_kappa_ci`` (see the module docstring)."""

    name = "severity_kappa"
    breakdown_keys: tuple[str, ...] = ("expected", "predicted")

    def __init__(self, seed: int = 0, n_resamples: int = 2000) -> None:
        self.seed, self.n_resamples = seed, n_resamples

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        pairs = [
            (str(b["expected"]), str(b.get("predicted") or "none"))
            for b in column.iter_breakdowns()
            if b.get("expected") is not None
        ]
        kappa = cohen_kappa(pairs)
        if math.isnan(kappa):
            return {self.name: kappa, f"{self.name}_ci": [math.nan, math.nan]}
        kappas = _resampled_kappas(pairs, self.seed, self.n_resamples)
        kappas = kappas[~np.isnan(kappas)]
        lo, hi = (
            (float(np.percentile(kappas, 2.5)), float(np.percentile(kappas, 97.5)))
            if kappas.size
            else (-1.0, 1.0)
        )
        lo, hi = min(lo, kappa), max(hi, kappa)
        if hi <= lo:  # no spread (every resample agrees: a constant answer, or every case right)
            lo, hi = constant_interval(kappa, len(pairs), bounds=KAPPA_BOUNDS)
        return {self.name: kappa, f"{self.name}_ci": [lo, hi]}


class SeverityScorer:
    name = "severity_agreement"
    tier = 3

    def __init__(self, options: SeverityOptions | None = None) -> None:
        self.options = options or SeverityOptions()
        self.metrics: Sequence[Metric] = (
            Accuracy(name="severity_accuracy"),
            BreakdownRate("within_one", name="severity_within_one"),
            SeverityKappa(self.options.seed, self.options.n_resamples),
        )

    def __call__(self, ctx: ScoringContext) -> Score:
        expected = severity_level(str(label_of(ctx, KEY) or ""))
        if expected is None or str(label_of(ctx, KEY)).strip().lower() not in LEVELS:
            return no_reference(KEY)
        base: dict[str, Any] = {"expected": expected, "predicted": None, "within_one": False}
        if ctx.output.failed:
            return failed_score(ctx, base)
        rec = recommendation(ctx)
        stated = rec.severity if rec is not None else None
        if not stated or not stated.strip():
            return Score(
                value=0.0, label="no_severity", explanation="the output states no severity", breakdown=base
            )
        predicted = severity_level(stated)
        if predicted is None:
            why = f"severity {stated[:80]!r} names no single level ({', '.join(LEVELS)})"
            return Score(
                value=0.0, label="unparsed", explanation=why, breakdown={**base, "stated": stated[:200]}
            )
        distance = abs(LEVELS.index(predicted) - LEVELS.index(expected))
        breakdown = {**base, "predicted": predicted, "within_one": distance <= 1, "stated": stated[:200]}
        if distance == 0:
            return Score(value=1.0, label="agree", breakdown=breakdown)
        why = f"stated {predicted}, expected {expected}"
        return Score(
            value=0.0,
            label="within_one" if distance == 1 else "disagree",
            explanation=why,
            breakdown=breakdown,
        )


def make_severity_scorer(options: Mapping[str, Any]) -> SeverityScorer:
    return SeverityScorer(SeverityOptions.model_validate(dict(options)))
