"""Paired statistics (analysis/paired.py) against hand computations, scipy and statsmodels references."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from clineval.analysis import paired
from clineval.analysis.compare import compare_task, paired_tests
from clineval.analysis.compare import mcnemar_exact as reexported
from clineval.analysis.paired import (
    holm,
    is_binary,
    is_binary_values,
    mcnemar_exact,
    mcnemar_exact_values,
    paired_bootstrap_ci,
    paired_permutation_test,
    wilcoxon_p,
    win_tie_loss,
)
from clineval.core import CaseResult, Score, SystemOutput, TaskAggregate
from clineval.core.comparison import RunComparison
from clineval.report.compare import render_comparison_markdown


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(np.mean(y - x, axis=axis))


# --- McNemar -------------------------------------------------------------------------------------------


def test_mcnemar_by_hand_and_reexported() -> None:
    # 3 right only in A, 0 right only in B, 5 concordant: p = 2 * 0.5**3 = 0.25
    pairs = [(1.0, 0.0)] * 3 + [(1.0, 1.0)] * 4 + [(0.0, 0.0)]
    assert mcnemar_exact(pairs) == (3, 0, 0.25)
    assert reexported is mcnemar_exact
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    assert is_binary(pairs) and is_binary_values(a, b) and mcnemar_exact_values(a, b) == (3, 0, 0.25)
    assert not is_binary([]) and not is_binary_values([], [])
    assert not is_binary_values([0.0, 0.5], [1.0, 1.0]) and not is_binary_values([0.0], [math.nan])
    with pytest.raises(ValueError):
        mcnemar_exact_values([0.5], [1.0])
    assert mcnemar_exact([(1.0, 1.0), (0.0, 0.0)]) == (0, 0, 1.0)
    with pytest.raises(ValueError):
        mcnemar_exact([(0.5, 1.0)])


@pytest.mark.parametrize(("a_only", "b_only"), [(1, 9), (7, 3), (12, 2), (20, 21), (0, 6)])
def test_mcnemar_matches_scipy_binomtest_and_statsmodels(a_only: int, b_only: int) -> None:
    pairs = [(1.0, 0.0)] * a_only + [(0.0, 1.0)] * b_only + [(1.0, 1.0)] * 5 + [(0.0, 0.0)] * 4
    _, _, p = mcnemar_exact(pairs)
    assert p == pytest.approx(stats.binomtest(b_only, a_only + b_only, 0.5).pvalue, rel=1e-12)
    # by hand: 2 * P(X <= min) for X ~ Bin(b + c, 1/2), capped at 1
    n, k = a_only + b_only, min(a_only, b_only)
    assert p == pytest.approx(min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n), rel=1e-12)
    sm = pytest.importorskip("statsmodels.stats.contingency_tables")
    table = [[5, a_only], [b_only, 4]]
    assert p == pytest.approx(sm.mcnemar(table, exact=True).pvalue, rel=1e-12)


# --- permutation ---------------------------------------------------------------------------------------


def test_permutation_by_hand() -> None:
    # differences b - a = (1, 2, 0): 4 sign patterns of the nonzero ones, sums 3, -1, 1, -3;
    # |sum| >= 3 for 2 of them -> p = 0.5
    assert paired_permutation_test([0.0, 0.0, 1.0], [1.0, 2.0, 1.0]) == 0.5
    assert paired_permutation_test([1.0, 2.0], [1.0, 2.0]) == 1.0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_permutation_exact_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.normal(0.5, 0.2, 10)
    b = a + rng.normal(0.1, 0.15, 10)
    ours = paired_permutation_test(a, b, n_resamples=10_000)  # 2**10 patterns: exact
    ref = stats.permutation_test(
        (a, b), _mean_diff, permutation_type="samples", vectorized=True, n_resamples=10_000
    ).pvalue
    assert ours == pytest.approx(ref, abs=1e-12)
    # and by brute force over all 2**10 swaps
    d = b - a
    null = [abs(np.dot(s, d)) for s in itertools.product((1, -1), repeat=10)]
    assert ours == pytest.approx(np.mean(np.array(null) >= abs(d.sum()) - 1e-12), abs=1e-12)


def test_permutation_monte_carlo_agrees_with_scipy() -> None:
    rng = np.random.default_rng(7)
    a = rng.uniform(0, 1, 40)
    b = a + rng.normal(0.05, 0.3, 40)
    ours = paired_permutation_test(a, b, seed=0, n_resamples=20_000)
    ref = stats.permutation_test(
        (a, b), _mean_diff, permutation_type="samples", vectorized=True, n_resamples=20_000, rng=1
    ).pvalue
    assert 0.01 < ours < 0.99
    assert ours == pytest.approx(ref, abs=0.02)  # both Monte Carlo: sd of each ~ 0.0035
    assert ours == paired_permutation_test(a, b, seed=0, n_resamples=20_000)  # seeded


def test_permutation_on_binary_equals_exact_mcnemar() -> None:
    # for 0/1 outcomes the sign-flip distribution is the McNemar binomial
    pairs = [(1.0, 0.0)] * 2 + [(0.0, 1.0)] * 9 + [(1.0, 1.0)] * 6
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    assert paired_permutation_test(a, b) == pytest.approx(mcnemar_exact(pairs)[2], abs=1e-12)


def test_wilcoxon_matches_scipy_and_handles_zeros() -> None:
    a = [0.1, 0.4, 0.35, 0.8, 0.5, 0.2, 0.9]
    b = [0.3, 0.4, 0.5, 0.9, 0.45, 0.6, 1.0]
    d = np.array(b) - np.array(a)
    assert wilcoxon_p(a, b) == pytest.approx(stats.wilcoxon(d[d != 0]).pvalue, rel=1e-12)
    assert wilcoxon_p([1.0, 2.0], [1.0, 2.0]) == 1.0


# --- bootstrap -----------------------------------------------------------------------------------------


def test_bootstrap_ci_reproducible_contains_delta_and_matches_scipy() -> None:
    rng = np.random.default_rng(3)
    a = rng.normal(0.6, 0.2, 60)
    b = a + rng.normal(0.08, 0.1, 60)
    delta = float(np.mean(b - a))
    lo, hi = paired_bootstrap_ci(a, b, seed=5)
    assert (lo, hi) == paired_bootstrap_ci(a, b, seed=5)
    assert paired_bootstrap_ci(a, b, seed=6) != (lo, hi)
    assert lo < delta < hi
    ref = stats.bootstrap(
        (a, b), _mean_diff, paired=True, vectorized=True, method="percentile", n_resamples=10_000, rng=0
    ).confidence_interval
    width = hi - lo
    assert lo == pytest.approx(ref.low, abs=0.05 * width) and hi == pytest.approx(ref.high, abs=0.05 * width)
    # normal-theory check: the percentile interval is close to delta +- 1.96 * sd / sqrt(n)
    se = float(np.std(b - a, ddof=0)) / math.sqrt(60)
    assert width == pytest.approx(2 * 1.96 * se, rel=0.1)
    # one case: no spread, never (0.5, 0.5). u_1 = z²/(1 + z²) = 3.841459/4.841459 = 0.793451; differences
    # of [0, 1] values lie in [-1, 1]: [0.5 - 1.5 u_1, 0.5 + 0.5 u_1]
    assert paired_bootstrap_ci([0.2], [0.7]) == pytest.approx((0.5 - 1.5 * 0.793451, 0.5 + 0.5 * 0.793451))
    narrow = paired_bootstrap_ci(a, b, seed=5, confidence=0.5)
    assert lo < narrow[0] < narrow[1] < hi


def _binary_runs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.7).astype(np.float64)
    b = np.where(a == 1.0, rng.random(n) < 0.9, rng.random(n) < 0.3).astype(np.float64)
    return a, b


def test_bootstrap_index_path_is_plain_index_resampling() -> None:
    # many distinct differences: n indices per resample, the same stream as drawing them all at once
    rng = np.random.default_rng(11)
    a, b = rng.normal(0.5, 0.2, 300), rng.normal(0.55, 0.2, 300)
    d = b - a
    means = d[np.random.default_rng(4).integers(0, 300, size=(2_000, 300))].mean(axis=1)
    alpha = 1.0 - 0.95
    ref = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
    assert paired_bootstrap_ci(a, b, seed=4, n_resamples=2_000) == (float(ref[0]), float(ref[1]))


def test_bootstrap_multinomial_path_is_the_count_representation() -> None:
    # binary outcomes: differences in {-1, 0, 1}; a resample is its counts ~ Multinomial(n, c_j / n)
    a, b = _binary_runs(500, 1)
    values, counts = np.unique(b - a, return_counts=True)
    drawn = np.random.default_rng(9).multinomial(500, counts / 500, size=10_000)
    alpha = 1.0 - 0.95
    ref = np.quantile(drawn @ values / 500, [alpha / 2.0, 1.0 - alpha / 2.0])
    assert paired_bootstrap_ci(a, b, seed=9) == (float(ref[0]), float(ref[1]))


@pytest.mark.parametrize("kind", ["binary", "likert"])
def test_bootstrap_multinomial_agrees_with_index_resampling_and_scipy(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind == "binary":
        a, b = _binary_runs(3_000, 2)
    else:  # 1-5 ratings: differences in -4..4
        rng = np.random.default_rng(3)
        a = rng.integers(1, 6, 3_000).astype(np.float64)
        b = np.clip(a + rng.integers(-1, 3, 3_000), 1, 5).astype(np.float64)
    assert paired._COUNTS_PER_CELL * np.unique(b - a).size <= a.size  # takes the multinomial path
    levels = (0.5, 0.8, 0.95, 0.99)  # several quantiles of the resample means: the distribution agrees
    counts = [paired_bootstrap_ci(a, b, seed=1, confidence=c) for c in levels]
    monkeypatch.setattr(paired, "_COUNTS_PER_CELL", 10**9)  # force index resampling
    indices = [paired_bootstrap_ci(a, b, seed=2, confidence=c) for c in levels]
    se = float(np.std(b - a)) / math.sqrt(a.size)
    for (lo, hi), (ref_lo, ref_hi) in zip(counts, indices, strict=True):
        # Monte Carlo error of a 10,000-resample quantile is < 0.04 se here; allow ~5 sd of the difference
        assert lo == pytest.approx(ref_lo, abs=0.25 * se) and hi == pytest.approx(ref_hi, abs=0.25 * se)
    ref = stats.bootstrap(
        (a, b), _mean_diff, paired=True, vectorized=True, method="percentile", n_resamples=10_000, rng=0
    ).confidence_interval
    lo, hi = counts[2]
    assert lo == pytest.approx(ref.low, abs=0.25 * se) and hi == pytest.approx(ref.high, abs=0.25 * se)
    assert hi - lo == pytest.approx(2 * 1.96 * se, rel=0.05)  # normal theory at n = 3,000


def _flip_variance_check(sums: np.ndarray, nz: np.ndarray) -> None:
    # sum_i s_i d_i with independent fair signs: mean 0, variance sum_i d_i**2
    var = float(np.sum(nz**2))
    assert abs(float(np.mean(sums))) < 5 * math.sqrt(var / sums.size)
    assert float(np.var(sums)) == pytest.approx(var, rel=0.06)


def test_flip_sums_bytes_are_the_sums_of_the_bytes_sign_patterns() -> None:
    nz = np.random.default_rng(5).normal(0.1, 1.0, 21)  # 3 blocks of 8, the last one padded
    sums = paired._flip_sums_bytes(nz, np.random.default_rng(8), 40)
    drawn = np.random.default_rng(8).integers(0, 256, size=(3, 40), dtype=np.uint8)
    bits = np.unpackbits(drawn[:, :, None], axis=2)  # (block, pattern, bit t) -> sign of nz[8 * block + t]
    signs = (1.0 - 2.0 * bits).transpose(1, 0, 2).reshape(40, 24)[:, :21]
    assert sums == pytest.approx(signs @ nz, abs=1e-12)
    big = np.random.default_rng(6).exponential(1.0, 5_000)
    _flip_variance_check(paired._flip_sums_bytes(big, np.random.default_rng(0), 20_000), big)


def test_flip_sums_grouped_have_the_sign_flip_distribution() -> None:
    nz = np.repeat([-2.0, -1.0, 0.5, 1.0, 3.0], [300, 900, 50, 1200, 10])
    sums = paired._flip_sums_grouped(nz, np.random.default_rng(0), 20_000)
    _flip_variance_check(sums, nz)
    assert np.all(np.isin(sums * 2, np.arange(-20_000, 20_001)))  # half-integers, as the values allow


@pytest.mark.parametrize("kind", ["likert", "continuous"])
def test_permutation_monte_carlo_paths_agree_with_scipy(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(12)
    n = 2_000
    if kind == "likert":  # differences in {-1, 0, 1}: binomials per distinct value
        a = rng.integers(1, 6, n).astype(np.float64)
        b = np.clip(a + rng.choice([-1, 0, 1], n, p=[0.3, 0.38, 0.32]), 1, 5).astype(np.float64)
    else:  # all distinct: byte tables
        a = rng.uniform(0, 1, n)
        b = a + rng.normal(0.006, 0.15, n)
    d = b - a
    grouped = paired._FLIPS_PER_BINOMIAL * np.unique(d[d != 0]).size <= np.count_nonzero(d)
    assert grouped == (kind == "likert")
    ref = stats.permutation_test(
        (a, b), _mean_diff, permutation_type="samples", vectorized=True, n_resamples=20_000, batch=500, rng=1
    ).pvalue
    assert 0.02 < ref < 0.5  # a p-value Monte Carlo error can move either way
    ours = paired_permutation_test(a, b, seed=0, n_resamples=20_000)
    assert ours == pytest.approx(ref, abs=0.02)  # both Monte Carlo: sd of each < 0.004
    assert ours == paired_permutation_test(a, b, seed=0, n_resamples=20_000)  # seeded
    # the other way of drawing the signs, on the same data: the same distribution
    monkeypatch.setattr(paired, "_FLIPS_PER_BINOMIAL", 10**9 if grouped else 0)
    other = paired_permutation_test(a, b, seed=0, n_resamples=20_000)
    assert other != ours and other == pytest.approx(ref, abs=0.02)


def test_compare_task_binary_and_continuous_at_scale_match_references() -> None:
    # 10,000 cases, 4 strata: the fast paths against scipy / normal-theory references on the same data
    rng = np.random.default_rng(21)
    n = 10_000
    acc_a, acc_b = _binary_runs(n, 21)
    f1_a = rng.beta(4, 2, n)
    f1_b = np.clip(f1_a + rng.normal(0.01, 0.1, n), 0, 1)
    wards = rng.choice(["icu", "er", "ward", "clinic"], n)
    ra = [_result(f"c{i}", acc_a[i], str(wards[i]), f1_a[i]) for i in range(n)]
    rb = [_result(f"c{i}", acc_b[i], str(wards[i]), f1_b[i]) for i in range(n)]
    agg = TaskAggregate(scores={"n": n}, strata={"ward": {w: {} for w in ("icu", "er", "ward", "clinic")}})
    cmp = compare_task("t", agg, agg, ra, rb)
    by = {(t.scorer, t.stratum_value): t for t in cmp.paired}
    assert len(by) == 2 * 5
    acc = by[("acc", None)]
    assert acc.test == "mcnemar_exact"
    assert acc.p == pytest.approx(
        stats.binomtest(int(np.sum(acc_a > acc_b)), int(np.sum(acc_a != acc_b)), 0.5).pvalue, rel=1e-12
    )
    se = float(np.std(acc_b - acc_a)) / math.sqrt(n)
    assert acc.ci == pytest.approx((acc.delta - 1.96 * se, acc.delta + 1.96 * se), abs=0.15 * se)
    f1 = by[("f1", "icu")]
    rows = wards == "icu"
    assert f1.test == "permutation" and f1.n == int(rows.sum())
    assert f1.mean_a == pytest.approx(float(np.mean(f1_a[rows])), rel=1e-12)
    se = float(np.std(f1_b[rows] - f1_a[rows])) / math.sqrt(f1.n)
    assert f1.ci == pytest.approx((f1.delta - 1.96 * se, f1.delta + 1.96 * se), abs=0.15 * se)
    assert [t.p_holm for t in cmp.paired] == pytest.approx(holm([t.p for t in cmp.paired]))
    assert cmp.tests[0].scorer == "acc" and cmp.tests[0].p_value == acc.p


def test_win_tie_loss() -> None:
    assert win_tie_loss([0.0, 1.0, 0.5, 0.2], [1.0, 1.0, 0.4, 0.3]) == (2, 1, 1)
    with pytest.raises(ValueError):
        win_tie_loss([1.0], [1.0, 2.0])


# --- Holm ----------------------------------------------------------------------------------------------


def test_holm_by_hand_and_statsmodels() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> monotone 0.06
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped
    assert holm([]) == []
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(0)
    for _ in range(20):
        ps = list(rng.uniform(0, 0.2, 9))
        _, ref, _, _ = multitest.multipletests(ps, method="holm")
        assert holm(ps) == pytest.approx(list(ref), rel=1e-12)


# --- compare_task integration --------------------------------------------------------------------------


def _result(case_id: str, value: float, ward: str | None, score: float) -> CaseResult:
    meta = {"ward": ward} if ward is not None else {}
    return CaseResult(
        task_id="t",
        case_id=case_id,
        output=SystemOutput(text="x"),
        scores={"acc": Score(value=value), "f1": Score(value=score)},
        metadata=meta,
    )


def test_compare_task_paired_tests_overall_and_strata() -> None:
    wards = ["icu", "icu", "icu", "er", "er", None]
    acc_a = [1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    acc_b = [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    f1_a = [0.5, 0.6, 0.2, 0.9, 0.1, 0.3]
    f1_b = [0.7, 0.6, 0.4, 0.8, 0.5, 0.35]
    ra = [_result(f"c{i}", acc_a[i], wards[i], f1_a[i]) for i in range(6)]
    rb = [_result(f"c{i}", acc_b[i], wards[i], f1_b[i]) for i in range(6)]
    strata = {"ward": {"icu": {"acc_rate": 0.5}, "er": {"acc_rate": 0.5}, "(missing)": {"acc_rate": 1.0}}}
    agg = TaskAggregate(scores={"n": 6}, strata=strata)
    cmp = compare_task("t", agg, agg, ra, rb)
    by = {(t.scorer, t.stratum_key, t.stratum_value): t for t in cmp.paired}
    assert len(by) == 2 * (1 + 3)
    acc = by[("acc", None, None)]
    assert acc.test == "mcnemar_exact" and (acc.wins, acc.ties, acc.losses) == (2, 3, 1)
    assert acc.p == mcnemar_exact(list(zip(acc_a, acc_b, strict=True)))[2] == pytest.approx(1.0)
    assert acc.delta == pytest.approx(1 / 6) and acc.n == 6
    f1 = by[("f1", None, None)]
    assert f1.test == "permutation" and f1.p == paired_permutation_test(f1_a, f1_b)
    assert f1.ci[0] <= f1.delta <= f1.ci[1]
    icu = by[("f1", "ward", "icu")]
    assert icu.n == 3 and icu.mean_a == pytest.approx(np.mean(f1_a[:3]))
    assert by[("f1", "ward", "(missing)")].n == 1
    assert [t.p_holm for t in cmp.paired] == pytest.approx(holm([t.p for t in cmp.paired]))
    assert [t.scorer for t in cmp.tests] == ["acc"] and (cmp.tests[0].a_only, cmp.tests[0].b_only) == (1, 2)
    md = render_comparison_markdown(RunComparison("a", "b", [cmp]))
    assert "### Paired tests" in md and "| f1 | ward=icu | 3 |" in md and "exact McNemar" in md


def test_paired_tests_empty() -> None:
    assert paired_tests({}, ["ward"]) == []
