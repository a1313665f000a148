"""Held-out isolation: which cases a tuning or feedback API may see, and which runs a gate may judge.

A case is **held out** when its metadata ``split`` is one of ``HELDOUT_SPLITS`` (the golden set's
``heldout``); it is **tuned on** when its split is one of ``TUNED_SPLITS`` (``train``...). Cases without
a split (MedQA's test questions, a production window) are neither.

- Anything meant for tuning or feedback aggregation (``clineval feedback``, :func:`tuning_only`) never
  returns a held-out case: it is dropped and only counted.
- A release gate judges a change on cases it was not tuned on: it refuses a candidate run that contains
  tuned-on cases unless told otherwise (``--allow-tuned-cases``), and says how many there are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

HELDOUT_SPLITS = frozenset({"heldout", "held_out", "held-out"})
TUNED_SPLITS = frozenset({"train", "training", "dev", "development", "tuning", "validation"})


class HasMetadata(Protocol):
    @property
    def metadata(self) -> Mapping[str, Any]: ...


T = TypeVar("T", bound=HasMetadata)


def _split(item: HasMetadata) -> str:
    return str(item.metadata.get("split", "")).strip().lower()


def is_heldout(item: HasMetadata) -> bool:
    return _split(item) in HELDOUT_SPLITS


def is_tuned_on(item: HasMetadata) -> bool:
    return _split(item) in TUNED_SPLITS


def tuning_only(items: Iterable[T]) -> tuple[list[T], int]:
    """``(items that are not held out, how many held-out items were withheld)``."""
    kept: list[T] = []
    withheld = 0
    for item in items:
        if is_heldout(item):
            withheld += 1
        else:
            kept.append(item)
    return kept, withheld


def tuned_on(items: Iterable[T]) -> list[T]:
    """The items a gate must not judge a change on (tuned-on cases)."""
    return [item for item in items if is_tuned_on(item)]
