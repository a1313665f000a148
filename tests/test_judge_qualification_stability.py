"""Flip rate, within-item variance, majority rules."""

from __future__ import annotations

import statistics

import pytest

from clineval.judging.qualification.stability import majority, majority_grade, majority_met, stability


def test_majority_rules_match_clineval() -> None:
    assert majority_grade([4, 4, 2]) == 4
    assert majority_grade([2, 3, 5]) == 3  # tie -> low median
    assert majority_grade([3, 5]) == 3
    assert majority_grade([]) is None
    assert majority_met([True, False]) is None and majority_met([True, True, False]) is True
    assert (
        majority([True, None, True]) is True
        and majority([None, None]) is None
        and majority([5, None, 4]) == 4
    )


def test_hand_computed_stability() -> None:
    samples = {
        "a": [4, 4, 4],  # steady
        "b": [3, 4, 4],  # flips: 1 sample off the majority
        "c": [1, 3, 5],  # flips: majority 3 (low median), 2 off
        "d": [2, None, 2],  # steady over its 2 valid samples; 1 error
        "e": [5, None, None],  # 1 valid sample: not counted
    }
    st = stability(samples)
    assert st.samples == 3 and st.items == 4 and st.flipped == 2 and st.flip_rate == 0.5
    assert st.sample_flip_rate == pytest.approx((0 + 1 + 2 + 0) / 11)
    assert st.within_item_variance == pytest.approx((0 + 1 / 3 + 4 + 0) / 4)
    assert st.within_item_pvariance == pytest.approx((0 + 2 / 9 + 8 / 3 + 0) / 4)
    assert st.within_item_pvariance == pytest.approx(
        statistics.fmean([statistics.pvariance(x) for x in ([4, 4, 4], [3, 4, 4], [1, 3, 5], [2, 2])])
    )
    assert st.error_rate == pytest.approx(3 / 15)
    lo, hi = st.flip_interval
    assert lo < 0.5 < hi


def test_met_samples_and_a_tie() -> None:
    st = stability({"a": [True, False], "b": [True, True], "c": [False, False, True]})
    assert st.flip_rate == pytest.approx(2 / 3)
    assert st.sample_flip_rate == pytest.approx((1 + 0 + 1) / 7)  # the tie: half its samples
    assert st.within_item_variance == pytest.approx((0.5 + 0 + 1 / 3) / 3)


def test_one_sample_measures_nothing() -> None:
    st = stability({"a": [4], "b": [3]})
    assert not st.measured and st.flip_rate is None and st.samples == 1 and st.error_rate == 0.0
