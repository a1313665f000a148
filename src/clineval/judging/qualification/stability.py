"""Stability of a judge over K samples of the same question (same prompt, same item; the samples differ by
the judge's temperature, as in ``clineval.runner.judging``).

For each item the judge answered K times (``None``: a sample without a valid answer, a judge error). Over the
items with at least two valid samples (n_s of them):

* **flip rate** (the qualification's stability figure) = (items whose valid samples are not all equal) / n_s,
  with its Wilson 95% interval. An item "flips" when asking again could change its grade at all.
* **sample flip rate** = Σ_items (valid samples that differ from the item's majority) / Σ valid samples:
  ``judge_flip_rate`` as ``clineval.judging.dimensions.SampleStats`` logs it for a run, reported for
  comparison. It is smaller: with K = 3 one dissenting sample makes the item flip (1) but only 1/3 of its
  samples flips.
* **within-item variance** = (1/n_s) Σ_items s²_i, s²_i the *sample* variance (ddof 1) of the item's valid
  grades (met = 1, not met = 0). ``judge_mean_variance`` in a run is the population variance (ddof 0), which
  is (K-1)/K of this for K valid samples; both are reported.
* **error rate** = samples without a valid answer / all samples.

The majority of an item: for grades the most frequent grade, ties -> the low median
(``clineval.judging.dimensions.majority_grade``); for met / not met the majority, a tie -> None (no
decision, as ``clineval.judging.rubric``). These are the values the judge-vs-clinician figures compare.

With K = 1 nothing can flip: every figure is None (``measured`` False) and the verdict says stability was
not measured.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from clineval.judging.dimensions import majority_grade
from clineval.judging.qualification.intervals import wilson_interval

Value = int | bool
Item = TypeVar("Item", bound=Hashable)


def majority_met(votes: Sequence[bool]) -> bool | None:
    """The majority vote; None on a tie (no decision)."""
    yes = sum(1 for v in votes if v)
    return True if yes > len(votes) - yes else False if len(votes) - yes > yes else None


def majority(samples: Sequence[Value | None]) -> Value | None:
    """The item's majority over its valid samples (grades or met, by the samples' type)."""
    valid = [s for s in samples if s is not None]
    if valid and all(isinstance(s, bool) for s in valid):
        return majority_met([bool(s) for s in valid])
    return majority_grade([int(s) for s in valid])


@dataclass(frozen=True)
class Stability:
    samples: int  # K: the most samples asked for any item
    items: int  # n_s: items with >= 2 valid samples
    flipped: int
    flip_rate: float | None
    flip_interval: tuple[float, float] | None
    sample_flip_rate: float | None
    within_item_variance: float | None  # mean sample variance (ddof 1)
    within_item_pvariance: float | None  # mean population variance (ddof 0), as a run logs it
    error_rate: float | None

    @property
    def measured(self) -> bool:
        return self.flip_rate is not None


def stability(samples: Mapping[Item, Sequence[Value | None]]) -> Stability:
    """The stability figures of the judge's K samples per item (module docstring)."""
    k = max((len(s) for s in samples.values()), default=0)
    asked = sum(len(s) for s in samples.values())
    errors = sum(1 for s in samples.values() for x in s if x is None)
    flipped = n_s = flips = valid_total = 0
    variances: list[float] = []
    pvariances: list[float] = []
    for values in samples.values():
        valid = [float(x) for x in values if x is not None]
        if len(valid) < 2:
            continue
        n_s += 1
        flipped += int(len(set(valid)) > 1)
        chosen = majority([x for x in values if x is not None])
        flips += len(valid) - sum(1 for v in valid if chosen is not None and v == float(chosen))
        if chosen is None:  # a met / not-met tie: half the samples differ from either decision
            flips -= len(valid) // 2
        valid_total += len(valid)
        variances.append(statistics.variance(valid))
        pvariances.append(statistics.pvariance(valid))
    error_rate = errors / asked if asked else None
    if n_s == 0:
        return Stability(k, 0, 0, None, None, None, None, None, error_rate)
    return Stability(
        samples=k,
        items=n_s,
        flipped=flipped,
        flip_rate=flipped / n_s,
        flip_interval=wilson_interval(flipped, n_s),
        sample_flip_rate=flips / valid_total,
        within_item_variance=math.fsum(variances) / n_s,
        within_item_pvariance=math.fsum(pvariances) / n_s,
        error_rate=error_rate,
    )
