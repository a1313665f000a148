"""Ids of a million records without a million strings: compact id columns and a hash index over them.

A Python ``str`` id costs ~55 bytes and a dict entry ~100 more; a replayed million-case run kept three such
structures (dataset ids, the predictions' id index, the duplicate check of each). Here the ids' UTF-8
bytes sit in one buffer (``CompactIds``: ~8 bytes a record beyond the text), and lookups go through the
sorted 64-bit hashes of the ids (``HashIndex``: 16 bytes a record). Hashes are only a shortcut: every hit is
confirmed against the id itself, so a collision can never return another record.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np
from numpy.typing import NDArray


class CompactIds(Sequence[str]):
    """An append-only sequence of strings stored as one UTF-8 buffer and their end offsets."""

    def __init__(self, items: Iterable[str] = ()) -> None:
        self._data = bytearray()
        self._ends = array("q")
        for item in items:
            self.append(item)

    def append(self, item: str) -> None:
        self._data += item.encode("utf-8")
        self._ends.append(len(self._data))

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        i = range(len(self))[index]
        start = self._ends[i - 1] if i else 0
        return self._data[start : self._ends[i]].decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        data, start = bytes(self._data), 0
        for end in self._ends:
            yield data[start:end].decode("utf-8")
            start = end

    def take(self, positions: Iterable[int]) -> CompactIds:
        return CompactIds(self[i] for i in positions)


# hash() of a str is stable within a process (PYTHONHASHSEED), which is all an in-memory index needs
_hash = hash


def _hashes(ids: Iterable[str]) -> NDArray[np.int64]:
    return np.fromiter((_hash(i) for i in ids), dtype=np.int64)


class HashIndex:
    """Position of each id in ``ids`` (a sequence read by position), through sorted hashes."""

    def __init__(self, ids: Sequence[str]) -> None:
        self._ids = ids
        hashes = _hashes(ids)
        order = np.argsort(hashes, kind="stable")
        # Python arrays (bisect reads them without numpy; numpy views them without a copy)
        self._sorted_view, self._order_view = array("q"), array("q")
        self._sorted_view.frombytes(hashes[order].tobytes())
        self._order_view.frombytes(order.astype(np.int64).tobytes())
        self._sorted = np.frombuffer(self._sorted_view, dtype=np.int64)
        self._order = np.frombuffer(self._order_view, dtype=np.int64)

    def get(self, key: str) -> int | None:
        """The position of ``key`` (its first one), or None."""
        h = _hash(key)
        # bisect over a memoryview, not numpy's searchsorted: that releases the GIL on every call, and
        # taking it back behind the store writer's thread cost ~20 us a lookup in a run
        hashes = self._sorted_view
        lo = bisect.bisect_left(hashes, h)
        if lo == len(hashes) or hashes[lo] != h:
            return None
        if lo + 1 == len(hashes) or hashes[lo + 1] != h:  # the usual case: one id with this hash
            position = self._order_view[lo]
            return position if self._ids[position] == key else None
        hi = bisect.bisect_right(hashes, h)
        for position in sorted(int(p) for p in self._order[lo:hi]):
            if self._ids[position] == key:
                return position
        return None

    def positions(self, keys: Sequence[str]) -> NDArray[np.intp]:
        """The position of each of ``keys`` (-1 where absent): the hashes are looked up all at once, each
        hit then confirmed against the id (a million keys in ~1 s, not ~2 µs a key)."""
        found = np.full(len(keys), -1, dtype=np.intp)
        if not len(self._sorted) or not len(keys):
            return found
        hashes = _hashes(keys)
        last = len(self._sorted) - 1
        lo = np.minimum(np.searchsorted(self._sorted, hashes), last)
        hit = self._sorted[lo] == hashes
        shared = hit & (lo < last) & (self._sorted[np.minimum(lo + 1, last)] == hashes)
        ids, unique = self._ids, (hit & ~shared).tolist()
        confirmed = [
            c if ok and ids[c] == key else -1
            for ok, c, key in zip(unique, self._order[lo].tolist(), keys, strict=True)
        ]
        found[:] = confirmed
        for i in np.flatnonzero(shared).tolist():  # several ids with this hash: the slow, exact path
            found[i] = -1 if (position := self.get(keys[i])) is None else position
        return found

    def position(self, key: str) -> int:
        """The position of ``key``; a KeyError naming it when it is not there."""
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def first_duplicate(self) -> tuple[int, int] | None:
        """``(first, again)`` positions of the duplicate id whose second occurrence comes first, or None:
        the pair a reader going through the records in order would have stopped at."""
        same = np.flatnonzero(self._sorted[1:] == self._sorted[:-1])
        best: tuple[int, int] | None = None
        for start in np.unique(same).tolist():
            lo = start
            while lo > 0 and self._sorted[lo - 1] == self._sorted[start]:
                lo -= 1
            hi = start + 1
            while hi + 1 < len(self._sorted) and self._sorted[hi + 1] == self._sorted[start]:
                hi += 1
            group = sorted(int(p) for p in self._order[lo : hi + 1])
            seen: dict[str, int] = {}
            for position in group:  # confirm by the ids: equal hashes may be a collision
                first = seen.setdefault(self._ids[position], position)
                if first != position and (best is None or position < best[1]):
                    best = (first, position)
                    break
        return best


def first_duplicate_before(ids: Sequence[str], limit: int) -> tuple[int, int] | None:
    """:meth:`HashIndex.first_duplicate` among the first ``limit`` ids."""
    return HashIndex(ids[:limit] if limit < len(ids) else ids).first_duplicate()
