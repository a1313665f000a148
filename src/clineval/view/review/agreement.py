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
value (``reviewer_vs_scorer``) or the judge's majority grade (``reviewer_vs_judge``, weighted); and, for
every two reviewers, their current verdicts on the items both reviewed (``between_reviewers``). Each is on
**the reviewed value itself** (``on = "value"``): the answer letter the MCQ scorer extracted, a DDx pair's
equivalence, pass | fail of a check or rule, a judge grade. So a reviewer's "agree" is an agreement and a
"disagree" a disagreement: the observed agreement of reviewer vs scorer is the share of "agree" verdicts.
For MCQ a second row compares the **outcome** the value leads to (``on = "outcome"``: correct | incorrect |
unparsed against the gold letter), which is what moves accuracy: a correction from B to C when the gold is
A is a disagreement on the value and an agreement on the outcome. (Before issue 22 the MCQ row compared only
the outcome, under the name "reviewer vs scorer": two "disagree" reviews, B -> C and unparsed -> the gold
letter, showed observed agreement 0.500 and κ 0.333 [0.025, 0.641].)

The interval needs ``n >= MIN_N_INTERVAL`` paired ratings: it is a large-sample normal approximation, and
below 10 pairs it claims a precision the data cannot give (at n = 2 the case above had a width of 0.6 around
a κ that two more reviews could move anywhere). Below that, κ is shown with "n too small for an interval".
Reviews are of the items someone chose to review, so reviewer-vs-scorer figures describe those items, not
the scorer's agreement on the whole run.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from clineval.store import ResultStore
from clineval.view.review.adjudication import Adjudication, current, history
from clineval.view.review.items import GRADES, UNPARSED

Z95 = 1.959963984540054
WEIGHTS = ("none", "linear", "quadratic")
MIN_N_INTERVAL = 10  # fewer paired ratings: no interval (see the module docstring)


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

    @property
    def agreed(self) -> int:
        """Pairs with the same category (exact agreement, whatever the weights)."""
        return round(self.observed * self.n) if self.n else 0

    @property
    def min_n_interval(self) -> int:
        return MIN_N_INTERVAL

    @property
    def has_interval(self) -> bool:
        """The interval is shown only from ``MIN_N_INTERVAL`` pairs on (and when it is defined)."""
        return self.n >= MIN_N_INTERVAL and math.isfinite(self.low) and math.isfinite(self.high)


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
    on: str = "value"  # "value": the reviewed value itself; "outcome": MCQ correct | incorrect | unparsed
    categories: tuple[Hashable, ...] = ()  # the table's categories, in order

    @property
    def compared(self) -> str:
        """What the figure compares, in words."""
        if self.on == "outcome":
            return "score outcome (correct / incorrect / unparsed)"
        return _VALUE_WORDS.get(self.item_kind, "reviewed value")


def _mcq_label(row: Adjudication, value: Any) -> str:
    """An MCQ value's outcome against the item's gold letter."""
    if value == UNPARSED:
        return UNPARSED
    return "correct" if value == row.automated_value.get("gold") else "incorrect"


_SCALES: dict[str, tuple[tuple[Hashable, ...], str]] = {
    "ddx_pair": ((True, False), "none"),
    "check": (("pass", "fail"), "none"),
    "rule": (("pass", "fail"), "none"),
    "label": (("correct", "incorrect"), "none"),
    "judge_dimension": (GRADES, "quadratic"),
}
_OUTCOMES: tuple[Hashable, ...] = ("correct", "incorrect", UNPARSED)
_VALUE_WORDS = {
    "mcq": "extracted answer (letter)",
    "ddx_pair": "equivalent? (yes / no)",
    "check": "check (pass / fail)",
    "rule": "rule (pass / fail)",
    "label": "label (correct / incorrect)",
    "judge_dimension": "grade 1-5",
}


def _scale(kind: str, rows: Sequence[Adjudication]) -> tuple[tuple[Hashable, ...], str]:
    """The categories and weights of a kind; MCQ: each letter seen (automated or corrected), then unparsed."""
    if kind != "mcq":
        return _SCALES[kind]
    seen = {v for r in rows for v in (r.automated_value["value"], r.corrected_value)}
    return (*sorted(str(v) for v in seen if v != UNPARSED), UNPARSED), "none"


def _rows_by_kind(rows: Iterable[Adjudication]) -> dict[str, list[Adjudication]]:
    out: dict[str, list[Adjudication]] = {}
    for row in rows:
        out.setdefault(row.item_kind, []).append(row)
    return out


def _versus_scorer(kind: str, rows: Sequence[Adjudication]) -> list[AgreementRow]:
    categories, weights = _scale(kind, rows)
    versus = "reviewer_vs_judge" if kind == "judge_dimension" else "reviewer_vs_scorer"
    pairs = [(r.automated_value["value"], r.corrected_value) for r in rows]
    out = [
        AgreementRow(
            versus, kind, "all reviewers", cohens_kappa(pairs, categories, weights), "value", categories
        )
    ]
    if kind == "mcq":
        outcomes = [(_mcq_label(r, a), _mcq_label(r, b)) for r, (a, b) in zip(rows, pairs, strict=True)]
        figure = cohens_kappa(outcomes, _OUTCOMES)
        out.append(AgreementRow(versus, kind, "all reviewers", figure, "outcome", _OUTCOMES))
    return out


def agreement_rows(rows: Iterable[Adjudication]) -> list[AgreementRow]:
    """Every agreement figure of a set of stored reviews (each reviewer's current verdicts)."""
    latest = list(current(rows).values())
    out: list[AgreementRow] = []
    for kind, kind_rows in sorted(_rows_by_kind(latest).items()):
        categories, weights = _scale(kind, kind_rows)
        out += _versus_scorer(kind, kind_rows)
        by_item: dict[tuple[str, str, str], dict[str, Adjudication]] = {}
        for r in kind_rows:
            by_item.setdefault((r.task_id, r.case_id, r.item_key), {})[r.reviewer] = r
        reviewers = sorted({r.reviewer for r in kind_rows})
        for a, b in combinations(reviewers, 2):
            both = [
                (v[a].corrected_value, v[b].corrected_value) for v in by_item.values() if a in v and b in v
            ]
            if both:
                figure = cohens_kappa(both, categories, weights)
                out.append(AgreementRow("between_reviewers", kind, f"{a} / {b}", figure, "value", categories))
    return out


def run_agreement(store: ResultStore, run_id: str) -> list[AgreementRow]:
    """The agreement figures of one run's reviews."""
    return agreement_rows(history(store, run_id))
