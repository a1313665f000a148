"""Order sensitivity: does the judge's answer depend on the order in which things are shown to it?

The judge grades every item twice: as presented, and with the presented order permuted by
:func:`permutation` (the parts of the response under judgement: the differential, the recommended actions,
the evidence table, the bullet list of a text answer; for the equivalence judge the two names swapped, see
:func:`swapped`). The content is the same, so an order-blind judge gives the same majority grade. Over the
n items with a majority under both orders::

    order change share  = (1/n) Σ 1{g'_i != g_i}          (with its Wilson 95% interval)
    mean |change|       = (1/n) Σ |g'_i - g_i|            (grades; met as 1/0)
    mean signed change  = (1/n) Σ (g'_i - g_i)            (the direction of a position effect)

g_i, g'_i the item's majority over its K samples under the original and the permuted order. A judge that
favours what comes first (primacy) or last (recency) changes grade whenever the permutation moves a better
or worse part there, and is caught by the share; a noisy judge also changes some grades under a new order
by sampling alone, which is why the majority of K samples is compared, and why the verdict notes the
confound when stability also fails.

**The permutation** is seeded per item: ``random.Random(f"{seed}:{item}")`` (a string seed is hashed with
SHA-512, the same in every process and Python version: no ``PYTHONHASHSEED`` dependence), Fisher-Yates via
``Random.shuffle``. A permutation that leaves the order as it was tests nothing, so one that comes out as
the identity is replaced by the rotation by one place (n >= 2); every item with two or more parts is
therefore shown in a different order.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from clineval.judging.qualification.intervals import wilson_interval

T = TypeVar("T")
Value = int | bool
Item = TypeVar("Item", bound=Hashable)


def permutation(n: int, seed: int, item: Hashable) -> list[int]:
    """A seeded permutation of range(n), never the identity when n >= 2 (module docstring)."""
    order = list(range(n))
    random.Random(f"{seed}:{item}").shuffle(order)
    if n >= 2 and order == list(range(n)):
        order = order[1:] + order[:1]
    return order


def permuted(parts: Sequence[T], seed: int, item: Hashable) -> list[T]:
    """``parts`` in the item's seeded order."""
    return [parts[i] for i in permutation(len(parts), seed, item)]


def swapped(a: str, b: str) -> tuple[str, str]:
    """The equivalence judge's pair in the other order (its prompt names a candidate and a reference)."""
    return b, a


@dataclass(frozen=True)
class OrderSensitivity:
    items: int  # items with a majority under both orders
    skipped: int  # items without one (a tie or no valid sample under either order)
    changed: int
    share: float | None
    share_interval: tuple[float, float] | None
    mean_abs_change: float | None
    mean_signed_change: float | None

    @property
    def measured(self) -> bool:
        return self.share is not None


def order_sensitivity(
    original: Mapping[Item, Value | None], shuffled: Mapping[Item, Value | None]
) -> OrderSensitivity:
    """The order figures of the judge's majority answers under the original and the permuted order."""
    pairs = [
        (float(g), float(s))
        for item, g in original.items()
        if g is not None and (s := shuffled.get(item)) is not None
    ]
    skipped = len(set(original) | set(shuffled)) - len(pairs)
    if not pairs:
        return OrderSensitivity(0, skipped, 0, None, None, None, None)
    n = len(pairs)
    changed = sum(1 for g, s in pairs if g != s)
    return OrderSensitivity(
        items=n,
        skipped=skipped,
        changed=changed,
        share=changed / n,
        share_interval=wilson_interval(changed, n),
        mean_abs_change=math.fsum(abs(s - g) for g, s in pairs) / n,
        mean_signed_change=math.fsum(s - g for g, s in pairs) / n,
    )
