"""Agreement between reviewers and the automated verdicts, and between reviewers: Cohen's kappa with a
95% interval.

Cohen's kappa (Cohen 1960; weighted: Cohen 1968) on a k x k table of counts n_ij (rater A's category i,
rater B's category j; N = Σ n_ij, p_ij = n_ij / N, row and column margins p_i. and p_.j), with agreement
weights w_ij::

    p_o = Σ_ij w_ij p_ij            p_e = Σ_ij w_ij p_i. p_.j            κ = (p_o - p_e) / (1 - p_e)

Unweighted: w_ij = 1 if i = j else 0. Weighted (ordinal judge grades 1-5): **quadratic** weights,
w_ij = 1 - (i - j)² / (k - 1)², over the full scale k = 5 whatever grades occur.

The interval is analytic: κ ± 1.96 SE, clipped to [-1, 1], with the large-sample variance of Fleiss,
Cohen and Everitt (1969)::

    Var(κ) = [Σ_ij p_ij (w_ij - (w̄_i. + w̄_.j)(1 - κ))² - (κ - p_e (1 - κ))²] / (N (1 - p_e)²)
    w̄_i. = Σ_j p_.j w_ij        w̄_.j = Σ_i p_i. w_ij

(statsmodels' ``cohens_kappa`` uses the same formulas: the tests check against it). κ is NaN when
p_e = 1 (both raters used a single, identical category: agreement by chance is total) or N = 0.

Comparisons (:func:`run_agreement`): every reviewer's current verdict of an item against the scorer's
value (``reviewer_vs_scorer``; MCQ on the label correct | incorrect | unparsed, DDx pairs on equivalence,
checks and rules on pass | fail) or the judge's majority grade (``reviewer_vs_judge``, weighted); and,
for every two reviewers, their current verdicts on the items both reviewed (``between_reviewers``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from clineval.store import ResultStore
from clineval.view.adjudication import Adjudication, current, history
from clineval.view.review_items import GRADES, UNPARSED

Z95 = 1.959963984540054
WEIGHTS = ("none", "linear", "quadratic")


@dataclass(frozen=True)
class Kappa:
    """κ, its standard error and 95% interval, the observed (unweighted) agreement, and N."""

    kappa: float
    se: float
    low: float
    high: float
    observed: float
    n: int
    weights: str


def table(pairs: Iterable[tuple[Hashable, Hashable]], categories: Sequence[Hashable]) -> list[list[int]]:
    """The k x k table of counts of (rater A, rater B) category pairs, in ``categories`` order."""
    index = {c: i for i, c in enumerate(categories)}
    counts = [[0] * len(categories) for _ in categories]
    for a, b in pairs:
        if a not in index or b not in index:
            raise ValueError(f"category {a if a not in index else b!r} is not one of {list(categories)}")
        counts[index[a]][index[b]] += 1
    return counts


def _weights(k: int, weights: str) -> list[list[float]]:
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    if weights == "none" or k < 2:
        return [[1.0 if i == j else 0.0 for j in range(k)] for i in range(k)]
    power = 1 if weights == "linear" else 2
    return [[1.0 - (abs(i - j) / (k - 1)) ** power for j in range(k)] for i in range(k)]


def kappa_from_table(counts: Sequence[Sequence[int]], weights: str = "none") -> Kappa:
    """Cohen's κ of a square table of counts (see the module docstring for the formulas)."""
    k = len(counts)
    if any(len(row) != k for row in counts):
        raise ValueError("the agreement table must be square")
    n = sum(sum(row) for row in counts)
    nan = math.nan
    if n == 0:
        return Kappa(nan, nan, nan, nan, nan, 0, weights)
    w = _weights(k, weights)
    p = [[c / n for c in row] for row in counts]
    rows = [sum(r) for r in p]
    cols = [sum(p[i][j] for i in range(k)) for j in range(k)]
    p_o = sum(w[i][j] * p[i][j] for i in range(k) for j in range(k))
    p_e = sum(w[i][j] * rows[i] * cols[j] for i in range(k) for j in range(k))
    observed = sum(p[i][i] for i in range(k))
    if math.isclose(p_e, 1.0):
        return Kappa(nan, nan, nan, nan, observed, n, weights)
    kappa = (p_o - p_e) / (1 - p_e)
    w_row = [sum(cols[j] * w[i][j] for j in range(k)) for i in range(k)]
    w_col = [sum(rows[i] * w[i][j] for i in range(k)) for j in range(k)]
    term = sum(
        p[i][j] * (w[i][j] - (w_row[i] + w_col[j]) * (1 - kappa)) ** 2 for i in range(k) for j in range(k)
    )
    var = (term - (kappa - p_e * (1 - kappa)) ** 2) / (n * (1 - p_e) ** 2)
    se = math.sqrt(max(var, 0.0))
    low, high = max(-1.0, kappa - Z95 * se), min(1.0, kappa + Z95 * se)
    return Kappa(kappa, se, low, high, observed, n, weights)


def cohens_kappa(
    pairs: Iterable[tuple[Hashable, Hashable]], categories: Sequence[Hashable], weights: str = "none"
) -> Kappa:
    """Cohen's κ of paired ratings over ``categories`` (ordered: the order is the scale when weighted)."""
    return kappa_from_table(table(pairs, categories), weights)


# -- per run --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgreementRow:
    """One agreement figure of a run: what was compared, on which item kind, by whom."""

    comparison: str  # reviewer_vs_scorer | reviewer_vs_judge | between_reviewers
    item_kind: str
    raters: str  # "all reviewers" or "A / B"
    result: Kappa


def _mcq_label(row: Adjudication, value: Any) -> str:
    if value == UNPARSED:
        return UNPARSED
    return "correct" if value == row.automated_value.get("gold") else "incorrect"


_SCALES: dict[str, tuple[tuple[Hashable, ...], str]] = {
    "mcq": (("correct", "incorrect", UNPARSED), "none"),
    "ddx_pair": ((True, False), "none"),
    "check": (("pass", "fail"), "none"),
    "rule": (("pass", "fail"), "none"),
    "label": (("correct", "incorrect"), "none"),
    "judge_dimension": (GRADES, "quadratic"),
}


def _category(row: Adjudication, value: Any) -> Hashable:
    return _mcq_label(row, value) if row.item_kind == "mcq" else value  # type: ignore[no-any-return]


def _rows_by_kind(rows: Iterable[Adjudication]) -> dict[str, list[Adjudication]]:
    out: dict[str, list[Adjudication]] = {}
    for row in rows:
        out.setdefault(row.item_kind, []).append(row)
    return out


def agreement_rows(rows: Iterable[Adjudication]) -> list[AgreementRow]:
    """Every agreement figure of a set of stored reviews (each reviewer's current verdicts)."""
    latest = list(current(rows).values())
    out: list[AgreementRow] = []
    for kind, kind_rows in sorted(_rows_by_kind(latest).items()):
        categories, weights = _SCALES[kind]
        versus = "reviewer_vs_judge" if kind == "judge_dimension" else "reviewer_vs_scorer"
        auto: Callable[[Adjudication], Hashable] = lambda r: _category(r, r.automated_value["value"])  # noqa: E731
        pairs = [(auto(r), _category(r, r.corrected_value)) for r in kind_rows]
        out.append(AgreementRow(versus, kind, "all reviewers", cohens_kappa(pairs, categories, weights)))
        by_item: dict[tuple[str, str, str], dict[str, Adjudication]] = {}
        for r in kind_rows:
            by_item.setdefault((r.task_id, r.case_id, r.item_key), {})[r.reviewer] = r
        reviewers = sorted({r.reviewer for r in kind_rows})
        for a, b in combinations(reviewers, 2):
            both = [(v[a], v[b]) for v in by_item.values() if a in v and b in v]
            if both:
                pairs = [(_category(x, x.corrected_value), _category(y, y.corrected_value)) for x, y in both]
                figure = cohens_kappa(pairs, categories, weights)
                out.append(AgreementRow("between_reviewers", kind, f"{a} / {b}", figure))
    return out


def run_agreement(store: ResultStore, run_id: str) -> list[AgreementRow]:
    """The agreement figures of one run's reviews."""
    return agreement_rows(history(store, run_id))
