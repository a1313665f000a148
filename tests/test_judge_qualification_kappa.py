"""κ by hand on small tables: unweighted, quadratic-weighted, half grades, degenerate tables."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from clineval.judging.qualification import KappaUndefinedError
from clineval.judging.qualification.kappa import (
    Z95,
    cohen_kappa,
    half_steps,
    identity_weights,
    kappa_of_table,
    table_of,
    weighted_kappa,
    weighted_table,
)


def test_hand_computed_two_by_two() -> None:
    # 50 items: both met 20, judge met / clinician not 5, judge not / clinician met 10, both not 15.
    # p_o = 35/50 = 0.7; judge met 25/50, clinician met 30/50: p_e = .5 * .6 + .5 * .4 = .5; κ = .2 / .5 = .4
    judge = [True] * 25 + [False] * 25
    clinician = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    est = cohen_kappa(judge, clinician, (True, False))
    assert est.kappa == pytest.approx(0.4, abs=1e-15) and est.p_o == 0.7 and est.p_e == 0.5 and est.n == 50
    # Fleiss-Cohen-Everitt by hand: rows (.5, .5), columns (.6, .4), 1 - κ = .6; cell (i, j) uses w̄_i. + w̄_.j
    # = p_.i + p_j. for identity weights: diagonal .4 (1 - 1.1 x .6)² + .3 (1 - .9 x .6)², off-diagonal
    # .1 (.6 + .5)² .36 + .2 (.4 + .5)² .36; minus (κ - p_e (1 - κ))² = (.4 - .3)², over N (1 - p_e)² = 12.5
    term = 0.4 * (1 - 1.1 * 0.6) ** 2 + 0.3 * (1 - 0.9 * 0.6) ** 2 + 0.1 * 1.21 * 0.36 + 0.2 * 0.81 * 0.36
    assert est.se == pytest.approx(math.sqrt((term - 0.01) / 12.5), rel=1e-12)


def test_hand_computed_quadratic_weighted_three_grades() -> None:
    # pairs (judge, clinician): (1,1) (2,2) (3,3) (1,2) (3,2) (2,1): grades 1-3 used on the 1-5 scale
    # disagreement weights (x - y)²/16: three pairs one grade apart -> D_o = 3 x (1/16) / 6 = 1/32
    # margins judge (2, 2, 2)/6, clinician (2, 3, 1)/6: D_e = Σ p_i p_j (i - j)²/16 = (21/18)/16 = 7/96
    # κ = 1 - D_o / D_e = 1 - 3/7 = 4/7
    judge, clin = [1, 2, 3, 1, 3, 2], [1, 2, 3, 2, 2, 1]
    pj, pc = [Fraction(2, 6)] * 3, [Fraction(2, 6), Fraction(3, 6), Fraction(1, 6)]
    d_e = sum(pj[i] * pc[j] * Fraction((i - j) ** 2, 16) for i in range(3) for j in range(3))
    assert d_e == Fraction(7, 96)
    expected = 1 - Fraction(1, 32) / d_e
    assert expected == Fraction(4, 7)
    assert weighted_kappa(judge, clin).kappa == float(expected)


def test_a_constant_rater_gives_kappa_exactly_zero_and_perfect_agreement_exactly_one() -> None:
    clin = [1, 2, 2, 3, 4, 5, 5, 3, 2, 4, 1, 3]
    for grade in range(1, 6):
        assert weighted_kappa([grade] * len(clin), clin).kappa == 0.0
    assert weighted_kappa(clin, clin).kappa == 1.0
    assert cohen_kappa([True] * 7, [True, False] * 3 + [True], (True, False)).kappa == 0.0


def test_kappa_is_undefined_when_both_raters_use_one_same_category() -> None:
    with pytest.raises(KappaUndefinedError, match="p_e = 1"):
        weighted_kappa([4, 4, 4], [4, 4, 4])
    with pytest.raises(KappaUndefinedError, match="no paired ratings"):
        cohen_kappa([], [], (True, False))


def test_half_grades_sit_halfway_on_the_value_scale() -> None:
    assert half_steps(1, 5) == tuple(Fraction(x, 2) for x in range(2, 11))
    t = weighted_table([3, 4], [3.5, 3.5])
    i = t.categories.index(Fraction(7, 2))
    assert t.counts[t.categories.index(Fraction(3))][i] == 1 and t.weights[i][i] == 1
    assert t.weights[t.categories.index(Fraction(3))][i] == 1 - Fraction(1, 4) / 16
    with pytest.raises(ValueError, match="not a whole or half grade"):
        weighted_table([3.25], [3])
    with pytest.raises(ValueError, match=r"in \[1, 5\]"):
        weighted_table([6], [3])


def test_unused_categories_change_nothing() -> None:
    # value weights: the same pairs on the 1-5 scale (9 half-step categories) or on categories 1, 2, 5 only
    judge, clin = [1, 2, 5, 5, 2, 1, 5], [1, 5, 5, 2, 2, 2, 5]
    full = weighted_kappa(judge, clin)
    cats = (Fraction(1), Fraction(2), Fraction(5))
    from clineval.judging.qualification.kappa import quadratic_weights

    small = kappa_of_table(table_of(judge, clin, cats, quadratic_weights(cats, Fraction(1), Fraction(5))))
    assert full.kappa == pytest.approx(small.kappa, abs=1e-15) and full.se == pytest.approx(
        small.se, abs=1e-15
    )


def test_table_checks() -> None:
    with pytest.raises(ValueError, match="pairs are needed"):
        table_of([True], [], (True, False), identity_weights(2))
    with pytest.raises(ValueError, match="not one of"):
        table_of(["maybe"], [True], (True, False), identity_weights(2))
    assert pytest.approx(1.959963984540054) == Z95
