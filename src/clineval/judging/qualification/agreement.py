"""Agreement of a judge with the clinicians' reference, per dimension or criterion group.

Each item has the judge's grade (the majority of its K samples, ``qualification.stability.majority``) and the
reference (one clinician's label, or the consensus of several: ``qualification.reviewers.consensus``).

**Grades 1-5** (tier-4 dimensions): quadratic-weighted κ (Cohen 1968; ``kappa``) and the mean bias.
**Met / not met** (rubric criteria; the equivalence judge's same / not same): Cohen's κ (Cohen 1960), the
balanced F1 and the bias.

**Balanced F1** = (F1_met + F1_not_met) / 2, with F1_c = 2 TP_c / (2 TP_c + FP_c + FN_c) for class c (the
judge's label as the prediction, the reference as the truth). This is the macro F1 over the two classes,
``sklearn.metrics.f1_score(average="macro")``, and it is HealthBench's meta-evaluation figure
(``pairwise_model_f1_balanced`` in openai/simple-evals ``healthbench_meta_eval.py``: the mean of the F1 of
the positive and of the negative class; Arora et al. 2025 compare their grader with physicians by it).
"Macro F1" and "mean of F1 met and F1 not met" are the same number for two classes. Unlike plain F1 it does
not reward a judge that says "met" to everything when most criteria are met.

**Bias** = (1/n) Σ (judge_i - reference_i): grades on the 1-5 scale (+0.4: the judge grades 0.4 higher on
average), met as 1/0 (+0.1: the judge says "met" on 10 points more of the items). Bland-Altman t interval.

**Intervals of κ** (95%). Shown only from ``MIN_N_INTERVAL`` items on (below, ``interval`` is None and
``note`` says so). Otherwise the **envelope** (lowest low, highest high) of three intervals, each kept in
the figure:

* ``analytic``: κ ± 1.96 SE with the Fleiss-Cohen-Everitt SE (statsmodels' ``kappa_low`` / ``kappa_upp``),
  clipped to [-1, 1];
* ``bootstrap``: the seeded percentile bootstrap over items (``qualification.intervals``);
* ``wilson``: the Wilson interval [q_lo, q_hi] of the share q = d/n of the items the two disagree on
  (d items off the diagonal), carried to κ at the observed margins. κ = 1 - D_o / D_e and
  D_o = q v̄, v̄ the mean disagreement weight (v = 1 - w) of a disagreeing item, so
  κ in [1 - q_hi v̄ / D_e, 1 - q_lo v̄ / D_e]. v̄ is the observed mean when d > 0; when d = 0 a disagreement
  the data have not shown is taken to be as large as a chance disagreement is on average,
  v̄ = D_e / (1 - s_e), s_e = Σ_i p_i. p_.i the chance of an identical label. For unweighted κ v = 1 and
  this is the Wilson interval of the disagreement rate through κ's exact linear relation with it.

Why three: each alone can be too narrow. The analytic SE shrinks to 0 as κ -> 1 (at κ = 1 it is 0: the
interval [1, 1]); the percentile bootstrap under-covers at small n and also gives [1, 1] with no
disagreement; the Wilson one ignores the sampling of the margins and is narrow at moderate κ, but keeps
a proper width near κ = 1 where the other two collapse. Simulated coverage (results/coverage.md, 1000
tables per cell, n = 10-100, κ 0.6-0.97): the envelope 93.7-99.8% (95.2-99.8% from n = 20), the analytic
one down to 39% and the bootstrap to 39% (binary κ = 0.9, n = 10), the Wilson one down to 77%.

At **perfect agreement** (d = 0) this gives [1 - u_n / (1 - s_e), 1] with u_n = z²/(n + z²) (Wilson, 0 of
n): exact for unweighted κ; for quadratic weights a perfect judge is bounded like a judge with one
disagreement of average chance size (99 items graded 1-5: perfect [0.951, 1]; one item off by 1 grade
[0.979, 1], by 2 grades [0.916, 1], by 4 grades [0.670, 1]). Assuming the worst unseen disagreement
(1 against 5, v = 1) would give the perfect judge [0.790, 1], wider than a judge with a real 2-grade miss.

**The judge used one category** (a constant judge): κ = 0 exactly by construction, whatever the items; no
interval (``note`` says why). Such a judge fails the κ threshold anyway.

**Undefined** (:class:`KappaUndefinedError`, the CLI's exit 2): the reference uses one category only (every
clinician grade 4, every criterion met). Then κ is 0 or undefined for every judge and no judge can be told
from chance: the labels, not the judge, are at fault.

Balanced F1 and bias get the bootstrap / t interval under the same minimum n.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from clineval.judging.qualification.errors import KappaUndefinedError
from clineval.judging.qualification.intervals import (
    N_RESAMPLES,
    bootstrap_tables,
    kappa_of_tables,
    mean_difference_interval,
    percentile_interval,
    reference_has_variation,
    wilson_interval,
)
from clineval.judging.qualification.kappa import (
    Z95,
    KappaEstimate,
    KappaTable,
    identity_weights,
    kappa_of_table,
    table_of,
    weighted_table,
)

MIN_N_INTERVAL = 10  # items; fewer: no interval (NOTES.md: coverage below this is poor for every method)
GRADE_SCALE = (1, 5)
BINARY = (True, False)


@dataclass(frozen=True)
class KappaFigure:
    """κ with every piece of its interval: the analytic (FCE) and bootstrap ones and the one shown."""

    kappa: float
    n: int
    se: float
    observed: float
    p_e: float
    analytic: tuple[float, float]
    bootstrap: tuple[float, float]
    bootstrap_dropped: int
    wilson: tuple[float, float]
    interval: tuple[float, float] | None
    note: str = ""


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its 95% interval (None below the minimum n)."""

    value: float
    interval: tuple[float, float] | None
    n: int


@dataclass(frozen=True)
class GradeAgreement:
    kappa: KappaFigure
    bias: Estimate


@dataclass(frozen=True)
class BinaryAgreement:
    kappa: KappaFigure
    balanced_f1: Estimate
    f1_met: float
    f1_not_met: float
    bias: Estimate


def check_reference(reference: Sequence[Hashable], what: str) -> None:
    """:class:`KappaUndefinedError` naming ``what`` when the reference has no variance."""
    if not reference:
        raise KappaUndefinedError(f"{what}: no labelled item has a judge grade: nothing to compare")
    values = set(reference)
    if len(values) == 1:
        raise KappaUndefinedError(
            f"{what}: every one of the {len(reference)} clinician labels is {next(iter(values))!r}: with no "
            "variance in the labels kappa is undefined (no judge can be told from chance); label items "
            "that differ"
        )


def kappa_figure(
    t: KappaTable, est: KappaEstimate, *, seed: int, n_resamples: int, min_n: int
) -> KappaFigure:
    """The κ figure of a judge-by-reference table (rows judge, columns reference; module docstring)."""
    counts = np.asarray(t.counts, dtype=np.float64)
    weights = np.asarray([[float(w) for w in row] for row in t.weights])
    lo, hi = max(-1.0, est.kappa - Z95 * est.se), min(1.0, est.kappa + Z95 * est.se)
    a_idx = [
        i for i in range(len(t.categories)) for j in range(len(t.categories)) for _ in range(t.counts[i][j])
    ]
    b_idx = [
        j for i in range(len(t.categories)) for j in range(len(t.categories)) for _ in range(t.counts[i][j])
    ]
    tables = bootstrap_tables(a_idx, b_idx, len(t.categories), seed=seed, n_resamples=n_resamples)
    stats = kappa_of_tables(tables, weights)
    stats[~reference_has_variation(tables)] = np.nan
    b_lo, b_hi, dropped = percentile_interval(stats)
    w_lo, w_hi = disagreement_interval(counts, weights)
    base = KappaFigure(
        est.kappa, est.n, est.se, est.observed, est.p_e, (lo, hi), (b_lo, b_hi), dropped, (w_lo, w_hi), None
    )
    if est.n < min_n:
        return _with(base, None, f"n = {est.n} items: too few for an interval (at least {min_n})")
    if (counts.sum(axis=1) > 0).sum() == 1:
        return _with(base, None, "the judge gave every item the same label: kappa = 0 by construction")
    shown = (min(lo, b_lo, w_lo), max(hi, b_hi, w_hi))
    why = "no disagreement: " if est.observed == 1.0 else ""
    return _with(base, shown, why + "envelope of the analytic, bootstrap and Wilson intervals")


def disagreement_interval(counts: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """κ's interval from the Wilson interval of the disagreement share at the observed margins (module
    docstring); rows judge, columns reference."""
    n = counts.sum()
    rows, cols = counts.sum(axis=1) / n, counts.sum(axis=0) / n
    d_e = 1.0 - float(rows @ weights @ cols)
    off = round(float(n - np.trace(counts)))
    seen = float((counts * (1.0 - weights)).sum()) / off if off else 0.0
    v_bar = seen if off else d_e / (1.0 - float(rows @ cols))  # unseen: as large as chance on average
    q_lo, q_hi = wilson_interval(off, round(float(n)))
    return max(-1.0, 1.0 - q_hi * v_bar / d_e), min(1.0, 1.0 - q_lo * v_bar / d_e)


def _with(fig: KappaFigure, interval: tuple[float, float] | None, note: str) -> KappaFigure:
    return KappaFigure(**{**fig.__dict__, "interval": interval, "note": note})


def grade_agreement(
    judge: Sequence[int],
    reference: Sequence[float],
    *,
    what: str,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    min_n: int = MIN_N_INTERVAL,
) -> GradeAgreement:
    """Quadratic-weighted κ and bias of the judge's grades against the reference grades (1-5, halves)."""
    check_reference(reference, what)
    t = weighted_table(judge, reference, *GRADE_SCALE)
    figure = kappa_figure(t, kappa_of_table(t), seed=seed, n_resamples=n_resamples, min_n=min_n)
    span = float(GRADE_SCALE[1] - GRADE_SCALE[0])
    return GradeAgreement(figure, _bias([j - r for j, r in zip(judge, reference, strict=True)], span, min_n))


def binary_agreement(
    judge: Sequence[bool],
    reference: Sequence[bool],
    *,
    what: str,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    min_n: int = MIN_N_INTERVAL,
) -> BinaryAgreement:
    """Cohen's κ, balanced F1 and bias of the judge's met / not met against the reference."""
    check_reference(reference, what)
    t = table_of(judge, reference, BINARY, identity_weights(2))
    figure = kappa_figure(t, kappa_of_table(t), seed=seed, n_resamples=n_resamples, min_n=min_n)
    counts = np.asarray(t.counts, dtype=np.float64)[None]
    f1_met, f1_not = (float(x) for x in class_f1(counts)[0])
    a_idx = [0 if j else 1 for j in judge]
    b_idx = [0 if r else 1 for r in reference]
    tables = bootstrap_tables(a_idx, b_idx, 2, seed=seed, n_resamples=n_resamples)
    boot = class_f1(tables).mean(axis=1)
    boot[~reference_has_variation(tables)] = np.nan
    b_lo, b_hi, _ = percentile_interval(boot)
    n = len(judge)
    f1 = Estimate((f1_met + f1_not) / 2, (b_lo, b_hi) if n >= min_n else None, n)
    diffs = [float(j) - float(r) for j, r in zip(judge, reference, strict=True)]
    return BinaryAgreement(figure, f1, f1_met, f1_not, _bias(diffs, 1.0, min_n))


def class_f1(tables: np.ndarray) -> np.ndarray:
    """F1 of each class of each (…, k, k) table (rows judge, columns reference): 2 TP / (row + column)."""
    diag = np.diagonal(tables, axis1=-2, axis2=-1)
    total = tables.sum(axis=-1) + tables.sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, 2 * diag / total, np.nan)


def _bias(diffs: list[float], span: float, min_n: int) -> Estimate:
    mean, lo, hi = mean_difference_interval(diffs, (-span, span))
    shown = (lo, hi) if len(diffs) >= min_n and math.isfinite(lo) else None
    return Estimate(mean, shown, len(diffs))
