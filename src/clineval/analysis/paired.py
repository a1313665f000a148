"""Paired statistics for two runs scored on the same cases (pure functions, no I/O).

Every function takes the per-case values of run A and run B in the same case order (``a[i]`` and
``b[i]`` belong to one case). Differences are always ``b - a``: a positive delta means B scores higher.

* ``paired_bootstrap_ci``: percentile interval of ``mean(b - a)`` over case resamples (Efron & Tibshirani
  1993), fixed seed, so the same data give the same interval. Few distinct differences (binary outcomes)
  draw each resample's counts, ``Multinomial(n, c_j / n)``, instead of its ``n`` indices: the same
  distribution of resample means at ``O(k)`` instead of ``O(n)`` per resample. When every difference is
  the same value (e.g. two runs that agree on every case) no resample varies: the interval is then
  ``clineval.metrics.intervals.constant_interval`` of the differences, never ``[d, d]``.
* ``is_binary`` / ``is_binary_values``: whether every value is 0 or 1 (pairs / two value arrays).
* ``mcnemar_exact`` / ``mcnemar_exact_values``: exact McNemar test for binary (0/1) outcomes (McNemar 1947;
  exact binomial form, Fagerland et al. 2013), on the discordant pairs only (pairs / two value arrays).
* ``paired_permutation_test``: two-sided sign-flip permutation test of ``mean(b - a)``; exact enumeration
  when it is cheap, Monte Carlo otherwise (random signs drawn per distinct value as binomials, or eight
  per random byte through per-block tables of signed sums: ``_flip_sums_grouped`` / ``_flip_sums_bytes``).
* ``wilcoxon_p``: Wilcoxon signed-rank test (``scipy.stats.wilcoxon``).
* ``win_tie_loss``: how many cases B scores higher / the same / lower than A.
* ``holm``: Holm (1979) step-down adjustment of a family of p-values.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from clineval.metrics.intervals import UNIT, constant_interval, observed_bounds

# scipy.stats is imported inside the two tests that need it: it costs about a second at start-up, and
# `clineval --help`, `clineval runs` and a plain run import this module through the gate.

Values = Sequence[float] | NDArray[np.float64]  # per-case values, one run

_CHUNK_CELLS = 2**19  # resample matrix cells drawn at once (memory bound)
# Speed rules (not statistics: both ways of drawing give the same distribution). A multinomial category
# costs about as much as 32 index draws; a binomial about as much as 256 sign flips done by byte tables.
_COUNTS_PER_CELL = 32
_FLIPS_PER_BINOMIAL = 256
_EXACT_MAX_FLIPS = 16  # exact sign-flip enumeration up to 2**16 sign patterns


def _diffs(a: Values, b: Values) -> NDArray[np.float64]:
    xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if xa.shape != xb.shape or xa.ndim != 1:
        raise ValueError(f"paired samples must be 1-d and of equal length, got {xa.shape} and {xb.shape}")
    if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(xb))):
        raise ValueError("paired samples must be finite (drop unscored cases first)")
    return xb - xa


def is_binary(pairs: Sequence[tuple[float, float]]) -> bool:
    """Every value on both sides is 0 or 1 (and there is at least one pair)."""
    return bool(pairs) and all(v in (0.0, 1.0) for pair in pairs for v in pair)


def is_binary_values(a: Values, b: Values) -> bool:
    """``is_binary`` of the pairs ``(a[i], b[i])``, vectorised."""
    xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if xa.shape != xb.shape or xa.ndim != 1:
        raise ValueError(f"paired samples must be 1-d and of equal length, got {xa.shape} and {xb.shape}")
    return xa.size > 0 and bool(np.all((xa == 0.0) | (xa == 1.0)) and np.all((xb == 0.0) | (xb == 1.0)))


def mcnemar_exact(pairs: Sequence[tuple[float, float]]) -> tuple[int, int, float]:
    """``(a_only, b_only, p)`` for binary pairs ``(a, b)``.

    ``a_only`` = cases right (1) in A and wrong (0) in B, ``b_only`` the reverse. Two-sided
    p = min(1, 2 * P(X <= min(a_only, b_only))) for X ~ Binomial(a_only + b_only, 1/2)
    (``scipy.stats.binomtest``); 1 when there is no discordant pair. Raises ValueError unless binary.
    """
    if not is_binary(pairs):
        raise ValueError("exact McNemar needs binary (0/1) outcomes on both sides")
    return mcnemar_exact_values([x for x, _ in pairs], [y for _, y in pairs])


def mcnemar_exact_values(a: Values, b: Values) -> tuple[int, int, float]:
    """``mcnemar_exact`` of the pairs ``(a[i], b[i])``, vectorised (same counts and p)."""
    if not is_binary_values(a, b):
        raise ValueError("exact McNemar needs binary (0/1) outcomes on both sides")
    xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    a_only = int(np.count_nonzero(xa > xb))
    b_only = int(np.count_nonzero(xb > xa))
    discordant = a_only + b_only
    if discordant == 0:
        return a_only, b_only, 1.0
    from scipy.stats import binomtest

    p = float(binomtest(min(a_only, b_only), discordant, 0.5).pvalue)
    return a_only, b_only, p


def _distinct(d: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The distinct values of ``d`` (ascending) and how many times each occurs."""
    values, counts = np.unique(d, return_counts=True)
    return values, counts.astype(np.int64)


def paired_bootstrap_ci(
    a: Values,
    b: Values,
    *,
    seed: int = 0,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    bounds: tuple[float, float] = UNIT,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``mean(b - a)``: cases are resampled with replacement, pairs kept.

    Each of the ``n_resamples`` resamples draws ``n`` case indices uniformly with replacement and takes the
    mean difference; the interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles
    of those means (``numpy.quantile``, linear). Deterministic for a given seed
    (``numpy.random.default_rng(seed)``).

    **No spread.** When all ``n`` differences equal ``c`` (every case unchanged: ``c = 0``; or one case),
    the resamples cannot vary and the interval would be ``[c, c]``. With per-case values in ``bounds`` =
    [L, H] (default [0, 1], widened to the observed values), a difference lies in [-(H - L), H - L], and
    the interval is ``constant_interval(c, n, bounds=(-(H - L), H - L))``:
    ``[c - u_n (c + H - L), c + u_n (H - L - c)]`` with ``u_n = z²/(n + z²)`` the Wilson upper bound of 0
    events in n (the chance that a further case's difference is not ``c``). For ``c = 0`` on [0, 1]
    values: ``[-u_n, u_n]``, e.g. ``[-0.0370, 0.0370]`` for n = 100 at 95%
    (``clineval.metrics.intervals``; docs/releases/gate.md).

    When the differences take only ``k`` distinct values ``v_1 < ... < v_k`` with ``32 k <= n`` (binary
    outcomes: ``k <= 3``, ``b - a`` in {-1, 0, 1}), a resample is drawn as its counts instead of its
    indices: with ``c_j`` the number of cases whose difference is ``v_j``, the number of resampled cases
    equal to ``v_j`` is ``(N_1, ..., N_k) ~ Multinomial(n, (c_1/n, ..., c_k/n))`` and the resample mean is
    ``sum_j N_j v_j / n``. This is the same distribution as index resampling, not an approximation: a
    resample's case frequencies are ``Multinomial(n, (1/n, ..., 1/n))`` (the resampling vector of Efron &
    Tibshirani 1993; Davison & Hinkley 1997), its mean depends on them only through the totals per distinct
    value, and summing the cells of a multinomial gives a multinomial with the summed probabilities. Cost
    ``O(k)`` instead of ``O(n)`` per resample. Otherwise the indices are drawn (``Generator.integers``, the
    same stream as before the counts path existed) in chunks of about ``_CHUNK_CELLS`` cells, so memory
    stays bounded whatever ``n`` and ``n_resamples`` are.
    """
    d = _diffs(a, b)
    n = d.size
    if n == 0:
        raise ValueError("no pairs to bootstrap")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    values, counts = _distinct(d)
    if values.size == 1:  # no spread: the resamples cannot vary
        xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        low, high = observed_bounds(float(min(xa.min(), xb.min())), float(max(xa.max(), xb.max())), bounds)
        span = high - low
        return constant_interval(float(values[0]), n, bounds=(-span, span), confidence=confidence)
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    if _COUNTS_PER_CELL * values.size <= n:  # few distinct differences: multinomial counts
        probs = counts / float(n)
        step = max(1, _CHUNK_CELLS // values.size)
        for start in range(0, n_resamples, step):
            rows = min(step, n_resamples - start)
            drawn = rng.multinomial(n, probs, size=rows)
            means[start : start + rows] = (drawn @ values) / n
    else:
        step = max(1, _CHUNK_CELLS // n)
        for start in range(0, n_resamples, step):
            rows = min(step, n_resamples - start)
            idx = rng.integers(0, n, size=(rows, n))
            means[start : start + rows] = d[idx].mean(axis=1)
    alpha = 1.0 - confidence
    lo, hi = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(lo), float(hi)


def _flip_sums_grouped(
    nz: NDArray[np.float64], rng: np.random.Generator, n_resamples: int
) -> NDArray[np.float64]:
    """Sign-flip sums of ``nz`` over ``n_resamples`` random patterns, drawn per distinct value.

    With ``m_j`` differences equal to ``v_j``, the flipped sum is ``sum_j v_j (2 B_j - m_j)`` with
    independent ``B_j ~ Binomial(m_j, 1/2)`` (how many of them keep their sign).
    """
    values, counts = _distinct(nz)
    sums = np.empty(n_resamples, dtype=np.float64)
    step = max(1, _CHUNK_CELLS // values.size)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        kept = rng.binomial(counts, 0.5, size=(rows, counts.size))
        sums[start : start + rows] = (2 * kept - counts) @ values
    return sums


_BYTE_SIGNS = 1.0 - 2.0 * np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)


def _flip_sums_bytes(
    nz: NDArray[np.float64], rng: np.random.Generator, n_resamples: int
) -> NDArray[np.float64]:
    """Sign-flip sums of ``nz`` over ``n_resamples`` random patterns, eight signs per random byte.

    ``nz`` is zero-padded to blocks of 8; block ``j`` gets the table ``T_j[u] = sum_t s_t(u) nz[8j + t]``
    of its 256 sign patterns (``s_t(u) = +1`` if bit ``t`` of ``u`` is 0, else ``-1``). A uniform byte ``u``
    has 8 independent fair bits, so ``T_j[u]`` is the block's sum under 8 independent random signs, and a
    pattern's sum is ``sum_j T_j[u_j]``: one table look-up per 8 differences. Blocks are processed a few at
    a time for all patterns, so the tables and random bytes in memory stay within ``_CHUNK_CELLS`` cells.
    """
    m = nz.size
    blocks = -(-m // 8)
    flat = np.zeros(blocks * 8, dtype=np.float64)
    flat[:m] = nz
    padded = flat.reshape(blocks, 8)
    sums = np.zeros(n_resamples, dtype=np.float64)
    step = max(1, _CHUNK_CELLS // max(n_resamples, 256))
    for start in range(0, blocks, step):
        rows = min(step, blocks - start)
        table = padded[start : start + rows] @ _BYTE_SIGNS.T  # (rows, 256)
        drawn = rng.integers(0, 256, size=(rows, n_resamples), dtype=np.uint8).astype(np.intp)
        drawn += np.arange(0, rows * 256, 256, dtype=np.intp)[:, None]
        sums += np.take(table, drawn).sum(axis=0)
    return sums


def paired_permutation_test(a: Values, b: Values, *, seed: int = 0, n_resamples: int = 10_000) -> float:
    """Two-sided sign-flip permutation p-value of ``mean(b - a)`` (H0: A/B labels exchangeable per case).

    Zero differences cannot change sign, so only the ``m`` nonzero ones are flipped. With ``2**m <=
    n_resamples`` (and ``m <= 16``) every sign pattern is enumerated and p is exact (the fraction of
    patterns with ``|mean| >= |observed mean|``); otherwise ``n_resamples`` random patterns (independent
    fair signs, ``numpy.random.default_rng(seed)``) give ``p = (1 + count) / (1 + n_resamples)`` (the
    observed pattern counted once, Phipson & Smyth 2010). No nonzero difference: p = 1. This is
    ``scipy.stats.permutation_test(..., permutation_type="samples")`` with the statistic ``mean(x - y)``.

    The random patterns are drawn in one of two ways, both exactly the distribution of ``m`` independent
    fair signs: when the nonzero differences take ``k`` distinct values with ``256 k <= m``, per value
    (``B_j ~ Binomial(m_j, 1/2)`` of the ``m_j`` differences equal to ``v_j`` keep their sign, sum
    ``sum_j v_j (2 B_j - m_j)``); otherwise eight signs per random byte through a table of each block of
    eight differences' 256 signed sums (``_flip_sums_bytes``). ``O(k)`` or ``O(m / 8)`` work per pattern
    instead of ``O(m)``, and memory bounded by ``_CHUNK_CELLS``.
    """
    d = _diffs(a, b)
    if d.size == 0:
        raise ValueError("no pairs to test")
    nz = d[d != 0.0]
    m = nz.size
    if m == 0:
        return 1.0
    observed = abs(float(nz.sum()))
    tol = 1e-9 * max(1.0, observed)  # sums of the same values in another order
    if m <= _EXACT_MAX_FLIPS and 2**m <= n_resamples:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=m)), dtype=np.float64)
        null = np.abs(signs @ nz)
        return float(np.count_nonzero(null >= observed - tol)) / float(2**m)
    rng = np.random.default_rng(seed)
    grouped = _FLIPS_PER_BINOMIAL * np.unique(nz).size <= m
    sums = (_flip_sums_grouped if grouped else _flip_sums_bytes)(nz, rng, n_resamples)
    count = int(np.count_nonzero(np.abs(sums) >= observed - tol))
    return (1.0 + count) / (1.0 + n_resamples)


def wilcoxon_p(a: Values, b: Values, *, zero_method: Literal["wilcox", "pratt"] = "wilcox") -> float:
    """Two-sided Wilcoxon signed-rank p-value of ``b - a`` (``scipy.stats.wilcoxon``).

    By default zero differences are dropped (``zero_method="wilcox"``, Wilcoxon's original treatment);
    ``"pratt"`` (Pratt 1959, JASA 54:655) ranks them with the others and then drops them, so many unchanged
    pairs make a shift harder to call significant (the counterfactual analysis, where most pairs are
    unchanged, uses it). scipy picks the exact or normal-approximation distribution; no nonzero difference
    at all gives p = 1.
    """
    d = _diffs(a, b)
    if d.size == 0:
        raise ValueError("no pairs to test")
    if not np.any(d != 0.0):
        return 1.0
    from scipy.stats import wilcoxon

    return float(wilcoxon(d, zero_method=zero_method, alternative="two-sided").pvalue)


def win_tie_loss(a: Values, b: Values) -> tuple[int, int, int]:
    """``(wins, ties, losses)`` of B against A: cases where B is higher, equal, lower (higher = better)."""
    d = _diffs(a, b)
    return int(np.count_nonzero(d > 0)), int(np.count_nonzero(d == 0)), int(np.count_nonzero(d < 0))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm (1979) step-down adjusted p-values, in the input order.

    Sorted ascending, ``p_(i)`` (i = 1..m) becomes ``max_{j <= i} min(1, (m - j + 1) * p_(j))``: monotone in
    the raw p-values and capped at 1. Rejecting where the adjusted p <= alpha controls the family-wise error.
    """
    ps = [float(p) for p in p_values]
    if any(not 0.0 <= p <= 1.0 for p in ps):
        raise ValueError(f"p-values must lie in [0, 1], got {ps}")
    m = len(ps)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda k: ps[k])):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adjusted[i] = running
    return adjusted
