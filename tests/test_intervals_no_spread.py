"""Intervals never claim certainty they lack: proportions get Wilson, a sample with no spread gets an interval
that reflects n (``clineval.metrics.intervals``), one-sample and paired. Expected values come from scipy's
Wilson interval and from the closed forms written out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from clineval.analysis.paired import paired_bootstrap_ci
from clineval.core import Score
from clineval.metrics.intervals import (
    bootstrap_interval,
    constant_interval,
    mean_interval,
    zero_events_bound,
)
from clineval.metrics.macro import MacroMean

Z = float(norm.ppf(0.975))


def _scipy_wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def test_zero_events_bound_is_the_wilson_upper_bound_of_zero_in_n() -> None:
    # the figure: Wilson of 0/100 is [0, 3.7%]
    assert zero_events_bound(100) == pytest.approx(Z * Z / (100 + Z * Z), abs=1e-12)
    assert zero_events_bound(100) == pytest.approx(0.036993, abs=1e-6)
    for n in (1, 7, 100, 5000):
        assert zero_events_bound(n, 0.9) == pytest.approx(_scipy_wilson(0, n, 0.9)[1], abs=1e-9)


def test_all_zero_mean_of_100_is_wilson_of_zero_not_zero_zero() -> None:
    """Before: percentile bootstrap of 100 zeros = [0.0, 0.0]. Now: [0, 0.0370] = Wilson(0, 100)."""
    lo, hi = mean_interval([0.0] * 100, seed=0)
    assert (lo, hi) == pytest.approx(_scipy_wilson(0, 100), abs=1e-9)
    assert bootstrap_interval([0.0] * 100, seed=0) == pytest.approx((0.0, 0.036993), abs=1e-6)
    lo, hi = mean_interval([1.0] * 100, seed=0)
    assert (lo, hi) == pytest.approx(_scipy_wilson(100, 100), abs=1e-9)


@pytest.mark.parametrize(("k", "n"), [(1, 10), (30, 100), (99, 100), (3, 1273)])
def test_zero_one_values_are_a_proportion(k: int, n: int) -> None:
    values = [1.0] * k + [0.0] * (n - k)
    assert mean_interval(values, seed=3) == pytest.approx(_scipy_wilson(k, n), abs=1e-9)


def test_two_point_values_on_other_bounds_map_the_wilson_interval() -> None:
    # grades 1 or 5 (bounds 1-5): the share of 5s is k/n, the mean 1 + 4 k/n
    lo, hi = _scipy_wilson(3, 8)
    got = mean_interval([5.0] * 3 + [1.0] * 5, seed=0, bounds=(1.0, 5.0))
    assert got == pytest.approx((1 + 4 * lo, 1 + 4 * hi), abs=1e-9)


@pytest.mark.parametrize(("c", "n"), [(0.4, 50), (0.25, 3), (0.9, 1000), (0.5, 1)])
def test_constant_interior_value_by_hand(c: float, n: int) -> None:
    u = Z * Z / (n + Z * Z)
    expected = (c - u * c, c + u * (1 - c))  # [c - u (c - 0), c + u (1 - c)]
    assert constant_interval(c, n) == pytest.approx(expected, abs=1e-12)
    assert mean_interval([c] * n, seed=1) == pytest.approx(expected, abs=1e-12)
    assert bootstrap_interval([c] * n, seed=1) == pytest.approx(expected, abs=1e-12)


def test_constant_interval_uses_the_given_bounds_and_widens_to_the_value() -> None:
    u = Z * Z / (20 + Z * Z)
    assert constant_interval(4.0, 20, bounds=(1.0, 5.0)) == pytest.approx((4 - 3 * u, 4 + u))
    # a value above the default [0, 1] widens the bound: no upper side
    assert constant_interval(2.5, 20) == pytest.approx((2.5 - 2.5 * u, 2.5))


@pytest.mark.parametrize("n", [1, 2, 5, 30, 100, 10_000])
def test_never_a_point_interval_for_finite_n(n: int) -> None:
    for c in (0.0, 0.3, 1.0):
        lo, hi = mean_interval(np.full(n, c), seed=0)
        assert lo <= c <= hi and hi - lo > 0


def test_spread_values_keep_the_percentile_bootstrap() -> None:
    values = [0.0, 0.5, 0.25, 1.0, 0.75, 0.5]
    rng = np.random.default_rng(11)
    idx = rng.integers(0, len(values), size=(2000, len(values)))
    means = np.asarray(values)[idx].mean(axis=1)
    expected = tuple(float(v) for v in np.quantile(means, [0.025, 0.975]))
    assert mean_interval(values, seed=11) == pytest.approx(expected, abs=1e-12)


def test_ddx_macro_means_of_all_zero_cases() -> None:
    """The issue's run: recall and MRR 0 on 100 cases gave [0.0, 0.0] beside top-1's Wilson [0, 3.7%]."""
    scores = [Score(value=0.0, label="missed", breakdown={"recall": 0.0, "reciprocal_rank": 0.0})] * 100
    recall = MacroMean("recall").compute(scores)
    mrr = MacroMean("reciprocal_rank", name="mrr").compute(scores)
    assert recall["recall_ci"] == pytest.approx(list(_scipy_wilson(0, 100)), abs=1e-9)
    assert mrr["mrr_ci"] == pytest.approx(list(_scipy_wilson(0, 100)), abs=1e-9)


def test_paired_difference_with_no_discordant_case() -> None:
    """Two runs that agree on all 100 cases: the difference is 0 on each, and the interval is
    [-u, u] with u = Wilson upper bound of 0 differing cases in 100 (|E d| <= P(d != 0) for d in [-1, 1])."""
    u = Z * Z / (100 + Z * Z)
    assert paired_bootstrap_ci([1.0] * 60 + [0.0] * 40, [1.0] * 60 + [0.0] * 40) == pytest.approx((-u, u))
    assert paired_bootstrap_ci([0.3] * 100, [0.3] * 100) == pytest.approx((-u, u))
    # every case improves by exactly 1: [1 - 2u, 1]
    assert paired_bootstrap_ci([0.0] * 100, [1.0] * 100) == pytest.approx((1 - 2 * u, 1.0))
    # values seen outside [0, 1] (grades 1 and 5): the bounds widen to [0, 5], differences to [-5, 5]
    assert paired_bootstrap_ci([1.0, 5.0] * 5, [1.0, 5.0] * 5) == pytest.approx(
        (-5 * Z * Z / (10 + Z * Z), 5 * Z * Z / (10 + Z * Z))
    )
    # given bounds 1-5: differences in [-4, 4]
    assert paired_bootstrap_ci([1.0, 5.0] * 5, [1.0, 5.0] * 5, bounds=(1.0, 5.0)) == pytest.approx(
        (-4 * Z * Z / (10 + Z * Z), 4 * Z * Z / (10 + Z * Z))
    )


def test_paired_difference_with_spread_is_unchanged() -> None:
    a = [0.0, 1.0, 1.0, 0.0, 1.0] * 8
    b = [1.0, 1.0, 0.0, 0.0, 1.0] * 8
    lo, hi = paired_bootstrap_ci(a, b, seed=2)
    assert lo < 0.0 < hi and not math.isclose(lo, hi)
