"""Cohen's kappa, unweighted and weighted, with the large-sample standard error.

On a k x k table of counts n_ij (rater A's category i, rater B's category j; N = Σ n_ij, p_ij = n_ij / N,
margins p_i. and p_.j) with agreement weights w_ij in [0, 1] (w_ii = 1)::

    p_o = Σ_ij w_ij p_ij          p_e = Σ_ij w_ij p_i. p_.j          κ = (p_o - p_e) / (1 - p_e)

* Unweighted (Cohen 1960, "A coefficient of agreement for nominal scales", Educ. Psychol. Meas. 20:37):
  w_ij = 1 if i = j else 0.
* Quadratic-weighted (Cohen 1968, "Weighted kappa", Psychol. Bull. 70:213), for ordinal grades on a numeric
  scale [L, H]: w_ij = 1 - (x_i - x_j)² / (H - L)², x_i the category's **value** (not its rank), so a
  category nobody used changes nothing (its row and column are empty) and a half grade (the median of two
  clinicians, 3.5) sits halfway. With the 1-5 scale this is statsmodels' ``cohens_kappa(wt="quadratic")``
  on the full 5 x 5 table and scikit-learn's ``cohen_kappa_score(weights="quadratic", labels=[1..5])``;
  without ``labels`` scikit-learn spaces the categories *present* one apart (grades {2, 3, 5}: 3 -> 5 counts
  as one step), which differs whenever a grade in between is unused (tests/test_reference.py shows it).

The point estimate is computed in exact rational arithmetic (``fractions.Fraction``) from the integer
counts: κ = 0 **exactly** when one rater is constant (then p_o = p_e = Σ_i p_i. w_ic), and κ = 1 exactly
for perfect agreement, with no rounding residue to mislead a threshold.

Standard error: the large-sample variance of Fleiss, Cohen & Everitt (1969), "Large sample standard errors
of kappa and weighted kappa", Psychol. Bull. 72:323, eq. (12)/(13) (valid for κ ≠ 0)::

    Var(κ) = [Σ_ij p_ij (w_ij - (w̄_i. + w̄_.j)(1 - κ))² - (κ - p_e (1 - κ))²] / (N (1 - p_e)²)
    w̄_i. = Σ_j p_.j w_ij          w̄_.j = Σ_i p_i. w_ij

which is statsmodels' ``std_kappa`` (its ``kappa_low`` / ``kappa_upp`` are κ ∓ 1.96 SE, unclipped) and
``clineval.view.agreement.kappa_from_table``.

κ is **undefined** when p_e = 1 (both raters used one and the same category: chance agreement is total):
:class:`KappaUndefinedError`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from clineval.judging.qualification.errors import KappaUndefinedError

Z95 = 1.959963984540054


@dataclass(frozen=True)
class KappaTable:
    """A square table of counts over ``categories`` (in scale order) and its agreement weights."""

    categories: tuple[Hashable, ...]
    counts: tuple[tuple[int, ...], ...]
    weights: tuple[tuple[Fraction, ...], ...]

    @property
    def n(self) -> int:
        return sum(sum(row) for row in self.counts)


@dataclass(frozen=True)
class KappaEstimate:
    """κ, its FCE-1969 standard error, p_o, p_e, the exact-agreement share and N."""

    kappa: float
    se: float
    p_o: float
    p_e: float
    observed: float
    n: int

    @property
    def disagreement_expected(self) -> float:
        """D_e = 1 - p_e: the weighted disagreement expected by chance (κ = 1 - D_o / D_e)."""
        return 1.0 - self.p_e


def identity_weights(k: int) -> tuple[tuple[Fraction, ...], ...]:
    return tuple(tuple(Fraction(int(i == j)) for j in range(k)) for i in range(k))


def quadratic_weights(
    values: Sequence[Fraction], low: Fraction, high: Fraction
) -> tuple[tuple[Fraction, ...], ...]:
    """w_ij = 1 - (x_i - x_j)² / (H - L)² on the values of the categories."""
    if high <= low:
        raise ValueError(f"the scale needs high > low, got [{low}, {high}]")
    span = (high - low) ** 2
    return tuple(tuple(1 - (a - b) ** 2 / span for b in values) for a in values)


def table_of(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    categories: Sequence[Hashable],
    weights: tuple[tuple[Fraction, ...], ...],
) -> KappaTable:
    """The table of counts of the pairs (a_i, b_i) over ``categories``."""
    if len(a) != len(b):
        raise ValueError(f"the two raters rated {len(a)} and {len(b)} items: pairs are needed")
    index = {c: i for i, c in enumerate(categories)}
    counts = [[0] * len(categories) for _ in categories]
    for x, y in zip(a, b, strict=True):
        if x not in index or y not in index:
            raise ValueError(f"category {x if x not in index else y!r} is not one of {list(categories)}")
        counts[index[x]][index[y]] += 1
    return KappaTable(tuple(categories), tuple(tuple(r) for r in counts), weights)


def kappa_of_table(t: KappaTable) -> KappaEstimate:
    """κ and its standard error (module docstring); :class:`KappaUndefinedError` when p_e = 1 or N = 0."""
    k, n = len(t.categories), t.n
    if n == 0:
        raise KappaUndefinedError("no paired ratings: kappa is undefined")
    w, c = t.weights, t.counts
    rows = [sum(c[i]) for i in range(k)]
    cols = [sum(c[i][j] for i in range(k)) for j in range(k)]
    p_o = Fraction(sum(w[i][j] * c[i][j] for i in range(k) for j in range(k)), n)
    p_e = Fraction(sum(w[i][j] * rows[i] * cols[j] for i in range(k) for j in range(k)), n * n)
    if p_e == 1:
        raise KappaUndefinedError(
            "both raters gave every item the same single category: chance agreement is total (p_e = 1), "
            "kappa is undefined"
        )
    kappa = (p_o - p_e) / (1 - p_e)
    kf, pe = float(kappa), float(p_e)
    pr = [r / n for r in rows]
    pc = [x / n for x in cols]
    wf = [[float(x) for x in row] for row in w]
    w_row = [sum(pc[j] * wf[i][j] for j in range(k)) for i in range(k)]
    w_col = [sum(pr[i] * wf[i][j] for i in range(k)) for j in range(k)]
    term = math.fsum(
        c[i][j] / n * (wf[i][j] - (w_row[i] + w_col[j]) * (1 - kf)) ** 2 for i in range(k) for j in range(k)
    )
    var = (term - (kf - pe * (1 - kf)) ** 2) / (n * (1 - pe) ** 2)
    observed = sum(c[i][i] for i in range(k)) / n
    return KappaEstimate(kf, math.sqrt(max(var, 0.0)), float(p_o), pe, observed, n)


def cohen_kappa(
    a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable]
) -> KappaEstimate:
    """Unweighted Cohen's κ of paired ratings (e.g. met / not met)."""
    return kappa_of_table(table_of(a, b, categories, identity_weights(len(categories))))


def half_steps(low: int, high: int) -> tuple[Fraction, ...]:
    """The values L, L + 1/2, ..., H: integer grades and the medians of an even number of them."""
    return tuple(Fraction(low) + Fraction(i, 2) for i in range(2 * (high - low) + 1))


def weighted_table(a: Sequence[float], b: Sequence[float], low: int = 1, high: int = 5) -> KappaTable:
    """The table of grade pairs on the half-step grid of [low, high] with quadratic value weights."""
    grid = half_steps(low, high)
    fa, fb = [_on_grid(x, low, high) for x in a], [_on_grid(x, low, high) for x in b]
    return table_of(fa, fb, grid, quadratic_weights(grid, Fraction(low), Fraction(high)))


def weighted_kappa(a: Sequence[float], b: Sequence[float], low: int = 1, high: int = 5) -> KappaEstimate:
    """Quadratic-weighted κ of grades on [low, high] (half grades allowed, see :func:`half_steps`)."""
    return kappa_of_table(weighted_table(a, b, low, high))


def _on_grid(x: float, low: int, high: int) -> Fraction:
    value = Fraction(x).limit_denominator(2)
    if value.denominator > 2 or value != Fraction(x) or not low <= value <= high:
        raise ValueError(f"grade {x!r} is not a whole or half grade in [{low}, {high}]")
    return value
