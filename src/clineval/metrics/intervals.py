"""Confidence intervals: a proportion (Wilson score), a bounded mean (percentile bootstrap), and the interval
of a mean whose sample has no spread (all values equal), which no resampling can give.

**Wilson** (1927), "Probable inference, the law of succession, and statistical inference", JASA 22:209.
With p = k/n and z the (1 + confidence)/2 quantile of the standard normal::

    centre = (p + z²/(2n)) / (1 + z²/n)
    half   = z / (1 + z²/n) * sqrt(p(1 - p)/n + z²/(4n²))
    interval = [centre - half, centre + half]

Computed as ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`` does (Newcombe's form, the
bound at k = 0 or k = n exactly 0 or 1) with the standard library's normal quantile, so aggregating a run
does not import scipy (a second of start-up); the tests check it against scipy and this formula by hand.
Unlike the normal ("Wald") interval it stays inside [0, 1] and has sensible width at p = 0 or 1: at k = 0
it is [0, u_n] with ``u_n = z²/(n + z²)`` (0.0370 for n = 100 at 95%).

**Percentile bootstrap** (Efron & Tibshirani 1993, ch. 13): resample the values with replacement
``n_resamples`` times, take the mean of each resample, and report the (1 - confidence)/2 and
(1 + confidence)/2 quantiles of those means. The resampling uses ``numpy.random.default_rng(seed)``,
so the same values and seed give the same interval bit for bit.

**No spread** (:func:`constant_interval`). When all n values equal c, every resample's mean is c and the
bootstrap says [c, c]: certainty that n cases cannot give. For values known to lie in [L, H], with
q = P(X != c) the chance that a further case differs from c::

    E[X] - c = E[(X - c) 1{X != c}]   lies in   [-(c - L) q, (H - c) q]

None of the n cases differed, so q <= u_n, the Wilson upper bound of 0 events in n trials, at the same
confidence; hence::

    interval = [c - u_n (c - L), c + u_n (H - c)]

At c = L = 0, H = 1 this is exactly the Wilson interval of 0 successes in n ([0, 3.7%] for n = 100, the
interval of the top-1 rate of a system that never ranks the diagnosis first), at c = H = 1 that of n
successes. Its width, u_n (H - L) at most, is positive for every finite n and shrinks like z²/n. It
assumes nothing of a differing value but its bounds, so it is conservative in that respect.

**Bounded means** (:func:`mean_interval`): values in {L, H} only are a proportion (k of n at H) and get the
Wilson interval, mapped onto [L, H]; values that are all equal get :func:`constant_interval`; otherwise the
percentile bootstrap. Bounds default to [0, 1] (clineval's per-case scores: rates, recalls, per-case
means) and widen to any observed value outside them, so a metric on another scale never gets a bound its
own values contradict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_CHUNK_CELLS = 1 << 22  # resample indices drawn per chunk (bounds memory for large n)
UNIT: tuple[float, float] = (0.0, 1.0)


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + 0.5 * confidence)


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials; (nan, nan) when n == 0."""
    _check_confidence(confidence)
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k!r}, n={n!r}")
    if n == 0:
        return (math.nan, math.nan)
    z = _z(confidence)
    p = k / n
    denom = 2 * (n + z**2)
    centre = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
    return (0.0 if k == 0 else centre - delta, 1.0 if k == n else centre + delta)


def zero_events_bound(n: int, confidence: float = 0.95) -> float:
    """``u_n = z²/(n + z²)``: the Wilson upper bound of 0 events in n trials (module docstring)."""
    _check_confidence(confidence)
    if n < 1:
        raise ValueError(f"need n >= 1, got {n!r}")
    z2 = _z(confidence) ** 2
    return z2 / (n + z2)


def constant_interval(
    c: float, n: int, *, bounds: tuple[float, float] = UNIT, confidence: float = 0.95
) -> tuple[float, float]:
    """``[c - u_n (c - L), c + u_n (H - c)]``: the interval of a mean when all n values equal ``c`` and
    values lie in ``bounds`` = [L, H] (widened to contain c). See the module docstring."""
    lo_bound, hi_bound = min(bounds[0], c), max(bounds[1], c)
    u = zero_events_bound(n, confidence)
    return (c - u * (c - lo_bound), c + u * (hi_bound - c))


def observed_bounds(lo: float, hi: float, bounds: tuple[float, float] = UNIT) -> tuple[float, float]:
    """``bounds`` widened to contain the observed range [lo, hi]."""
    return (min(bounds[0], lo), max(bounds[1], hi))


def bootstrap_interval(
    values: Sequence[float] | np.ndarray,
    *,
    seed: int,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    bounds: tuple[float, float] = UNIT,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``; (nan, nan) when there are none.

    When the resampled means have no spread (all values equal), :func:`constant_interval` at the mean with
    ``bounds`` widened to the observed values: never ``[x, x]``."""
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
    low, high = float(data.min()), float(data.max())
    if low == high:  # no spread: every resample's mean is the same value
        return constant_interval(low, n, bounds=observed_bounds(low, high, bounds), confidence=confidence)
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    rows = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = data[idx].mean(axis=1)
    alpha = 1.0 - confidence
    lo, hi = (float(v) for v in np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0]))
    if hi > lo:
        return (lo, hi)
    # a spread too small for the quantiles to see (e.g. n_resamples = 1): the no-spread floor at the mean
    mean = float(data.mean())
    return constant_interval(mean, n, bounds=observed_bounds(low, high, bounds), confidence=confidence)


def mean_interval(
    values: Sequence[float] | np.ndarray,
    *,
    seed: int,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    bounds: tuple[float, float] = UNIT,
) -> tuple[float, float]:
    """The interval of the mean of values in ``bounds`` (module docstring, "Bounded means"): Wilson when
    every value is one of the two bounds, :func:`constant_interval` when all are equal, else the percentile
    bootstrap. (nan, nan) when there are no values."""
    import numpy as np

    data = np.asarray(values, dtype=np.float64)
    if data.ndim == 1 and data.size and np.isfinite(data).all():
        lo_b, hi_b = observed_bounds(float(data.min()), float(data.max()), bounds)
        at_hi = data == hi_b
        if hi_b > lo_b and bool(np.all(at_hi | (data == lo_b))):
            lo, hi = wilson_interval(int(at_hi.sum()), int(data.size), confidence)
            span = hi_b - lo_b
            return (lo_b + span * lo, lo_b + span * hi)
    return bootstrap_interval(data, seed=seed, n_resamples=n_resamples, confidence=confidence, bounds=bounds)
