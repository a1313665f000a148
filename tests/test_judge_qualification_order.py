"""Seeded permutations and order sensitivity."""

from __future__ import annotations

import pytest

from clineval.judging.qualification.order import order_sensitivity, permutation, permuted, swapped


def test_permutations_are_seeded_per_item_and_never_the_identity() -> None:
    assert permutation(5, 0, "case-1") == permutation(5, 0, "case-1")
    assert len({tuple(permutation(5, 0, f"case-{i}")) for i in range(20)}) > 5
    for i in range(200):
        assert permutation(2, i, "x") == [1, 0]  # the only non-identity order of two
        p = permutation(4, i, ("grade", ("gs2-mi-01", "coherence")))
        assert sorted(p) == [0, 1, 2, 3] and p != [0, 1, 2, 3]
    assert permutation(1, 0, "x") == [0] and permutation(0, 0, "x") == []
    assert permuted(["a", "b", "c"], 3, "k") == [["a", "b", "c"][i] for i in permutation(3, 3, "k")]
    assert swapped("MI", "myocardial infarction") == ("myocardial infarction", "MI")


def test_order_sensitivity_by_hand() -> None:
    original = {"a": 4, "b": 3, "c": 5, "d": 2, "e": None}
    shuffled = {"a": 4, "b": 4, "c": 3, "d": 2, "e": 3}
    o = order_sensitivity(original, shuffled)
    assert (o.items, o.skipped, o.changed) == (4, 1, 2)
    assert o.share == 0.5 and o.mean_abs_change == pytest.approx(3 / 4)
    assert o.mean_signed_change == pytest.approx((0 + 1 - 2 + 0) / 4)


def test_met_answers_and_nothing_to_compare() -> None:
    o = order_sensitivity({"a": True, "b": False}, {"a": False, "b": False})
    assert o.share == 0.5 and o.mean_signed_change == -0.5
    assert not order_sensitivity({"a": None}, {"a": 3}).measured
