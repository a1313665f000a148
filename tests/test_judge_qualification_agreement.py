"""Judge-vs-reference figures: interval rules, undefined κ, balanced F1 and bias by hand."""

from __future__ import annotations

import math

import pytest

from clineval.judging.qualification import KappaUndefinedError
from clineval.judging.qualification.agreement import MIN_N_INTERVAL, binary_agreement, grade_agreement
from clineval.judging.qualification.intervals import (
    mean_difference_interval,
    none_seen_bound,
    wilson_interval,
)


def test_no_interval_below_the_minimum_n() -> None:
    judge, ref = [1, 2, 3, 4, 5, 3, 2, 4, 4], [1, 2, 3, 4, 4, 3, 3, 4, 5]
    assert len(judge) == MIN_N_INTERVAL - 1
    fig = grade_agreement(judge, ref, what="coherence")
    assert fig.kappa.interval is None and "too few for an interval (at least 10)" in fig.kappa.note
    assert fig.bias.interval is None
    assert (
        fig.kappa.analytic[0] < fig.kappa.kappa
    )  # still computed, and reported, just not shown as "the" one
    assert grade_agreement([*judge, 3], [*ref, 3], what="coherence").kappa.interval is not None


def test_interval_is_the_envelope_of_the_three_and_is_reproducible() -> None:
    judge = [1, 2, 3, 4, 5, 3, 2, 4, 4, 2, 3, 5, 1, 3, 4, 2, 3, 3, 4, 5]
    ref = [1, 2, 3, 4, 4, 3, 3, 4, 5, 2, 2, 5, 2, 3, 4, 3, 3, 4, 4, 5]
    a = grade_agreement(judge, ref, what="x", seed=1)
    k = a.kappa
    assert k.interval == (
        min(k.analytic[0], k.bootstrap[0], k.wilson[0]),
        max(k.analytic[1], k.bootstrap[1], k.wilson[1]),
    )
    assert grade_agreement(judge, ref, what="x", seed=1) == a  # bit for bit
    assert grade_agreement(judge, ref, what="x", seed=2).kappa.bootstrap != a.kappa.bootstrap


def test_perfect_agreement_gets_the_wilson_lower_bound_not_a_zero_width_interval() -> None:
    ref = [1, 2, 3, 4, 5] * 4
    fig = grade_agreement(ref, ref, what="x").kappa
    assert fig.kappa == 1.0 and fig.analytic == (1.0, 1.0) and fig.bootstrap == pytest.approx((1.0, 1.0))
    # grades uniform on 1-5: the chance of the same grade s_e = 5 x (1/5)² = 0.2; u_20 = z²/(20 + z²)
    u = none_seen_bound(20)
    assert fig.interval == pytest.approx((1 - u / 0.8, 1.0), abs=1e-12)
    # binary: the same rule, 1 - u_n / (1 - p_e)
    met = [True, False, True, True] * 3
    assert binary_agreement(met, met, what="x").kappa.interval == pytest.approx(
        (1 - none_seen_bound(12) / (1 - (0.75**2 + 0.25**2)), 1.0)
    )


def test_a_perfect_judge_is_bounded_like_one_average_chance_disagreement() -> None:
    ref = [1, 2, 2, 3, 3, 3, 4, 4, 5] * 11  # 99 items; a chance disagreement is 1-2 grades on average
    perfect = grade_agreement(ref, ref, what="x").kappa.interval
    lows = {}
    for off in (2, 3, 5):  # item 0 (grade 1) judged 2, 3 or 5: one disagreement of 1, 2 or 4 grades
        lows[off - 1] = grade_agreement([off, *ref[1:]], ref, what="x").kappa.interval[0]
    assert lows[4] < lows[2] < perfect[0] < lows[1]
    assert perfect == pytest.approx((0.9512, 1.0), abs=1e-4)
    assert (lows[1], lows[2], lows[4]) == pytest.approx((0.9791, 0.9162, 0.6699), abs=1e-4)


def test_near_one_the_wilson_interval_widens_the_envelope() -> None:
    ref = [True, False, True, True] * 15
    judge = [not ref[0], *ref[1:]]  # one disagreement in 60
    fig = binary_agreement(judge, ref, what="x").kappa
    assert fig.interval[0] == fig.wilson[0] < min(fig.analytic[0], fig.bootstrap[0])
    # unweighted: κ = 1 - q / (1 - p_e) exactly, so the Wilson bounds of q map straight onto κ
    q_lo, q_hi = wilson_interval(1, 60)
    assert fig.wilson == pytest.approx((1 - q_hi / (1 - fig.p_e), 1 - q_lo / (1 - fig.p_e)), abs=1e-12)


def test_constant_judge_gets_kappa_zero_and_no_interval() -> None:
    ref = [True, False, True, True, False, True, False, True, True, False, True, False]
    fig = binary_agreement([True] * len(ref), ref, what="rubric")
    assert (
        fig.kappa.kappa == 0.0
        and fig.kappa.interval is None
        and "kappa = 0 by construction" in fig.kappa.note
    )
    # F1 met = 2 x 7 / (12 + 7), F1 not met = 0 (never predicted, 5 missed)
    assert fig.f1_met == pytest.approx(14 / 19) and fig.f1_not_met == 0.0
    assert fig.balanced_f1.value == pytest.approx(7 / 19)
    assert fig.bias.value == pytest.approx(5 / 12)  # says "met" on 5 of 12 items more than the clinicians


@pytest.mark.parametrize("ref", [[3] * 12, [True] * 12])
def test_reference_without_variance_is_refused_with_its_reason(ref: list) -> None:  # type: ignore[type-arg]
    judge = [2, 3, 4] * 4 if ref[0] == 3 else [True, False] * 6
    call = grade_agreement if ref[0] == 3 else binary_agreement
    with pytest.raises(
        KappaUndefinedError,
        match=r"completeness: every one of the 12 clinician labels is .*kappa is undefined",
    ):
        call(judge, ref, what="completeness")  # type: ignore[operator]
    with pytest.raises(KappaUndefinedError, match="no labelled item"):
        call([], [], what="completeness")  # type: ignore[operator]


def test_hand_computed_balanced_f1_and_bias() -> None:
    # judge vs reference: TP(met) 6, judge met / ref not 2, judge not / ref met 1, both not 3 (n = 12)
    judge = [True] * 6 + [True] * 2 + [False] * 1 + [False] * 3
    ref = [True] * 6 + [False] * 2 + [True] * 1 + [False] * 3
    fig = binary_agreement(judge, ref, what="rubric")
    assert fig.f1_met == pytest.approx(12 / 15)  # 2 TP / (2 TP + FP + FN) = 12 / (12 + 2 + 1)
    assert fig.f1_not_met == pytest.approx(6 / 9)  # TP(not) 3: 6 / (6 + 1 + 2)
    assert fig.balanced_f1.value == pytest.approx((12 / 15 + 6 / 9) / 2)
    assert fig.bias.value == pytest.approx((8 - 7) / 12)
    lo, hi = fig.balanced_f1.interval
    assert lo < fig.balanced_f1.value < hi


def test_grade_bias_and_its_t_interval() -> None:
    judge = [4, 5, 3, 4, 5, 4, 3, 5, 4, 4]
    ref = [3, 4, 3, 4, 4, 3, 3, 4, 4, 3]
    fig = grade_agreement(judge, ref, what="x")
    assert fig.bias.value == pytest.approx(0.6)
    # differences 1,1,0,0,1,1,0,1,0,1: sd = sqrt(10 x 0.24 / 9); t_{9, .975} = 2.2621571627
    half = 2.2621571627409915 * (2.4 / 9) ** 0.5 / 10**0.5
    assert fig.bias.interval == pytest.approx((0.6 - half, 0.6 + half), abs=1e-9)


def test_interval_helpers() -> None:
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    assert none_seen_bound(100) == pytest.approx(0.0370, abs=5e-5)
    mean, lo, hi = mean_difference_interval([0.0] * 20, (-4.0, 4.0))
    u = none_seen_bound(20)
    assert (mean, lo, hi) == pytest.approx((0.0, -4 * u, 4 * u))  # never a zero-width bias interval
