"""The counterfactual statistics against reference values computed offline, and Newcombe's published example.

Reference p-values were computed once with scipy 1.17.1 (``scipy.stats.binomtest(min(b, c), b + c, 0.5)``,
``scipy.stats.wilcoxon(d, zero_method=...)``) and statsmodels 0.15.0
(``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)``), which agree to the last digit here,
and written below; the tests import neither.
"""

import math

import numpy as np
import pytest

from clineval.analysis.paired import mcnemar_exact_values, paired_bootstrap_ci, wilcoxon_p
from clineval.counterfactual.paired import Outcome, compare_pair
from clineval.counterfactual.stats import newcombe_paired_ci
from clineval.metrics.intervals import mean_interval

# hand-made 2x2 tables (n11, n10, n01, n00): both right, a only, b only, both wrong -> exact McNemar p
MCNEMAR = [
    ((59, 16, 6, 80), 0.052478790283203125),
    ((10, 0, 0, 5), 1.0),
    ((0, 3, 0, 0), 0.25),
    ((5, 1, 9, 2), 0.021484375),
    ((180, 2, 9, 9), 0.0654296875),
    ((1, 7, 1, 12), 0.0703125),
    ((40, 12, 12, 36), 1.0),
    ((0, 0, 25, 0), 5.960464477539063e-08),
    ((150, 30, 10, 10), 0.0022214337732293643),
]


def _arrays(n11: int, n10: int, n01: int, n00: int) -> tuple[list[float], list[float]]:
    a = [1.0] * n11 + [1.0] * n10 + [0.0] * n01 + [0.0] * n00
    b = [1.0] * n11 + [0.0] * n10 + [1.0] * n01 + [0.0] * n00
    return a, b


@pytest.mark.parametrize(("table", "expected"), MCNEMAR)
def test_mcnemar_exact_against_offline_scipy(table: tuple[int, int, int, int], expected: float) -> None:
    a, b = _arrays(*table)
    a_only, b_only, p = mcnemar_exact_values(a, b)
    assert (a_only, b_only) == (table[1], table[2])
    assert p == pytest.approx(expected, rel=1e-12)
    pairs = [
        (Outcome(f"{i}:a", str(i), "a", x, None), Outcome(f"{i}:b", str(i), "b", y, None))
        for i, (x, y) in enumerate(zip(a, b, strict=True))
    ]
    assert compare_pair(pairs)["p_mcnemar_exact"] == pytest.approx(expected, rel=1e-12)


def test_mcnemar_published_value() -> None:
    # Fagerland, Lydersen & Laake 2017, ch. 8 (Cavo et al. 2012): McNemar exact conditional P = 0.052479
    assert mcnemar_exact_values(*_arrays(59, 16, 6, 80))[2] == pytest.approx(0.052479, abs=5e-7)


def test_newcombe_published_example() -> None:
    # Fagerland et al. 2017, ch. 8, Cavo et al. (2012): table [[59, 6], [16, 80]], delta -0.0621,
    # Newcombe square-and-add 95% CI -0.1186 to -0.0046. Here b is the row variable: n01 = 6, n10 = 16.
    lo, hi = newcombe_paired_ci(59, 16, 6, 80)
    assert (lo, hi) == pytest.approx((-0.1186, -0.0046), abs=5e-5)


def test_newcombe_symmetry_bounds_and_never_a_point() -> None:
    for (n11, n10, n01, n00), _ in MCNEMAR:
        lo, hi = newcombe_paired_ci(n11, n10, n01, n00)
        lo2, hi2 = newcombe_paired_ci(n11, n01, n10, n00)
        assert (lo, hi) == pytest.approx((-hi2, -lo2), abs=1e-12)
        delta = (n01 - n10) / (n11 + n10 + n01 + n00)
        assert -1.0 <= lo <= delta <= hi <= 1.0
        assert hi - lo > 0.0  # even with no discordant pair (10, 0, 0, 5)
    assert all(math.isnan(x) for x in newcombe_paired_ci(0, 0, 0, 0))
    with pytest.raises(ValueError):
        newcombe_paired_ci(-1, 0, 0, 0)


def test_bootstrap_is_seeded_and_never_degenerate() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.uniform(size=50), rng.uniform(size=50)
    assert paired_bootstrap_ci(a, b, seed=7) == paired_bootstrap_ci(a, b, seed=7)
    lo, hi = paired_bootstrap_ci([0.5] * 100, [0.5] * 100)
    u = 1.959963984540054**2 / (100 + 1.959963984540054**2)  # Wilson bound of 0 events in 100
    assert (lo, hi) == pytest.approx((-u, u))
    lo, hi = mean_interval([1.0] * 100, seed=0)
    assert hi == 1.0 and lo == pytest.approx(1 - u)


def test_wilcoxon_pratt_against_offline_scipy() -> None:
    a = [0.2, 0.5, 0.5, 0.9, 0.1, 0.3, 0.7, 0.6, 0.4, 0.8]
    b = [0.4, 0.5, 0.1, 0.9, 0.3, 0.6, 0.8, 0.6, 0.9, 0.9]
    # scipy.stats.wilcoxon(b - a, zero_method="pratt").pvalue = 0.125; "wilcox" (zeros dropped) = 0.21875
    assert wilcoxon_p(a, b, zero_method="pratt") == pytest.approx(0.125, rel=1e-12)
    assert wilcoxon_p(a, b) == pytest.approx(0.21875, rel=1e-12)
    assert wilcoxon_p([0.3, 0.4], [0.3, 0.4], zero_method="pratt") == 1.0
