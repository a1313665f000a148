"""Compact id columns and the hash index over them (``clineval.core.helpers.id_index``): every lookup and the
duplicate check give what a dict and a line-by-line reader give, also when every hash collides."""

from __future__ import annotations

import pytest

from clineval.core.helpers import id_index
from clineval.core.helpers.id_index import CompactIds, HashIndex

IDS = ["0007", "α-β", "", "x" * 300, "7", "case 12", "😀"]


def test_compact_ids_round_trip() -> None:
    ids = CompactIds(IDS)
    assert len(ids) == len(IDS)
    assert list(ids) == IDS
    assert [ids[i] for i in range(len(IDS))] == IDS
    assert ids[-1] == "😀" and ids[1:3] == ["α-β", ""]
    assert list(ids.take([4, 0])) == ["7", "0007"]
    with pytest.raises(IndexError):
        ids[len(IDS)]


@pytest.mark.parametrize("collide", [False, True])
def test_lookups_and_the_first_duplicate(monkeypatch: pytest.MonkeyPatch, collide: bool) -> None:
    if collide:  # every id hashes alike: only the ids themselves can tell them apart
        monkeypatch.setattr(id_index, "_hash", lambda _text: 42)
    ids = CompactIds(IDS)
    index = HashIndex(ids)
    assert [index.get(i) for i in IDS] == list(range(len(IDS)))
    assert index.get("missing") is None and "missing" not in index and "7" in index
    assert index.first_duplicate() is None
    # two duplicates: "b" at 1 and 4, "a" at 0 and 5; a line-by-line reader stops at position 4
    dup = HashIndex(CompactIds(["a", "b", "c", "d", "b", "a", "b"]))
    assert dup.first_duplicate() == (1, 4)
    assert dup.get("b") == 1


@pytest.mark.parametrize("collide", [False, True])
def test_positions_of_many_keys_at_once(monkeypatch: pytest.MonkeyPatch, collide: bool) -> None:
    if collide:
        monkeypatch.setattr(id_index, "_hash", lambda text: len(text) % 2)  # two hashes for all ids
    index = HashIndex(CompactIds(IDS))
    keys = [*reversed(IDS), "missing", "0007"]
    expected = [IDS.index(k) if k in IDS else -1 for k in keys]
    assert index.positions(keys).tolist() == expected
    assert index.positions([]).tolist() == []
    assert HashIndex(CompactIds()).positions(["a"]).tolist() == [-1]
