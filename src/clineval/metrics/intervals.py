"""Confidence intervals for a proportion (Wilson score) and for a mean (percentile bootstrap).

Wilson (1927), "Probable inference, the law of succession, and statistical inference", JASA 22:209.
With p = k/n and z the (1 + confidence)/2 quantile of the standard normal::

    centre = (p + z²/(2n)) / (1 + z²/n)
    half   = z / (1 + z²/n) * sqrt(p(1 - p)/n + z²/(4n²))
    interval = [centre - half, centre + half]

Computed as ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`` does (Newcombe's form, the
bound at k = 0 or k = n exactly 0 or 1) with the standard library's normal quantile, so aggregating a run
does not import scipy (a second of start-up); the tests check it against scipy and this formula by hand.
Unlike the normal ("Wald") interval it stays inside [0, 1] and has sensible width at p = 0 or 1.

Percentile bootstrap (Efron & Tibshirani 1993, ch. 13): resample the values with replacement
``n_resamples`` times, take the mean of each resample, and report the (1 - confidence)/2 and
(1 + confidence)/2 quantiles of those means. The resampling uses ``numpy.random.default_rng(seed)``,
so the same values and seed give the same interval bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_CHUNK_CELLS = 1 << 22  # resample indices drawn per chunk (bounds memory for large n)


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials; (nan, nan) when n == 0."""
    _check_confidence(confidence)
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k!r}, n={n!r}")
    if n == 0:
        return (math.nan, math.nan)
    z = NormalDist().inv_cdf(0.5 + 0.5 * confidence)
    p = k / n
    denom = 2 * (n + z**2)
    centre = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
    return (0.0 if k == 0 else centre - delta, 1.0 if k == n else centre + delta)


def bootstrap_interval(
    values: Sequence[float] | np.ndarray,
    *,
    seed: int,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``; (nan, nan) when there are none."""
    import numpy as np  # here: a run with Wilson intervals only never imports numpy

    _check_confidence(confidence)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1:
        raise ValueError("values must be one-dimensional")
    n = data.size
    if n == 0:
        return (math.nan, math.nan)
    if not np.isfinite(data).all():
        raise ValueError("values must be finite (drop NaN scores before bootstrapping)")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    rows = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = data[idx].mean(axis=1)
    alpha = 1.0 - confidence
    lo, hi = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
    return (float(lo), float(hi))
