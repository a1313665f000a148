"""The one paired statistic clineval did not have: Newcombe's interval of a paired difference of proportions.

The others come from the engine and are not repeated here: Wilson (``clineval.metrics.intervals
.wilson_interval``), the interval of a bounded mean (``mean_interval``), exact McNemar, Holm, the paired
bootstrap and the Wilcoxon signed-rank test (``clineval.analysis.paired``).

Notation for two variants a and b answered on the same n base questions (one pair per question)::

                 b right   b wrong
      a right      n11       n10 (= a_only)
      a wrong      n01       n00
                 (= b_only)

**Newcombe's hybrid score interval** (Newcombe 1998, "Improved confidence intervals for the difference
between binomial proportions based on paired data", Stat Med 17:2635-2650, method 10; Fagerland, Lydersen &
Laake 2017, Statistical Analysis of Contingency Tables, ch. 8, "Newcombe square-and-add"). For
delta = p_b - p_a = (n01 - n10)/n, with (l_b, u_b), (l_a, u_a) the Wilson intervals of p_b = (n11 + n01)/n
and p_a = (n11 + n10)/n::

    L = delta - sqrt((p_b - l_b)² - 2 phi (p_b - l_b)(u_a - p_a) + (u_a - p_a)²)
    U = delta + sqrt((u_b - p_b)² - 2 phi (u_b - p_b)(p_a - l_a) + (p_a - l_a)²)

where phi estimates the correlation of the paired outcomes: with A = n11 n00 - n10 n01 and D the product of
the four margins, phi = (A - n/2)/sqrt(D) if A > n/2, 0 if 0 <= A <= n/2, A/sqrt(D) if A < 0, and phi = 0
when a margin is 0. It stays within [-1, 1], needs no iteration, keeps coverage close to nominal at small n,
and is never [d, d]: with no discordant pair at all it still has the width of the two Wilson intervals.
Checked in the tests against the worked example of Fagerland et al. 2017, ch. 8 (Cavo et al. 2012 data;
n11, n10, n01, n00 = 59, 16, 6, 80 in this orientation): -0.0621 (-0.1186 to -0.0046).
"""

from __future__ import annotations

import math

from clineval.metrics.intervals import wilson_interval


def _phi(n11: int, n10: int, n01: int, n00: int) -> float:
    n = n11 + n10 + n01 + n00
    margins = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    if margins == 0:
        return 0.0
    a = n11 * n00 - n10 * n01
    if a > n / 2.0:
        return (a - n / 2.0) / math.sqrt(margins)
    return 0.0 if a >= 0 else a / math.sqrt(margins)


def newcombe_paired_ci(
    n11: int, n10: int, n01: int, n00: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe (1998) method 10 interval of p_b - p_a = (n01 - n10)/n (module docstring); (nan, nan)
    when n = 0."""
    if min(n11, n10, n01, n00) < 0:
        raise ValueError("cell counts must be >= 0")
    n = n11 + n10 + n01 + n00
    if n == 0:
        return (math.nan, math.nan)
    p_b, p_a = (n11 + n01) / n, (n11 + n10) / n
    l_b, u_b = wilson_interval(n11 + n01, n, confidence)
    l_a, u_a = wilson_interval(n11 + n10, n, confidence)
    phi = _phi(n11, n10, n01, n00)
    delta = p_b - p_a
    lower = delta - math.sqrt(
        max(0.0, (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2)
    )
    upper = delta + math.sqrt(
        max(0.0, (u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a) + (p_a - l_a) ** 2)
    )
    return (lower, upper)
