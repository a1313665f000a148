"""Several clinicians: consensus reference, ties, the pairwise ceiling and the judge's comparable figure."""

from __future__ import annotations

import statistics

import pytest

from clineval.judging.qualification.kappa import cohen_kappa, weighted_kappa
from clineval.judging.qualification.reviewers import ceiling, consensus, consensus_grade, consensus_met


def test_consensus_grade_is_the_median_with_half_grades() -> None:
    assert consensus_grade([2, 3, 5]) == 3.0
    assert consensus_grade([3, 4]) == 3.5  # no tie-break toward either clinician
    assert consensus_grade([1, 2, 4, 5]) == 3.0
    assert consensus_grade([4]) == 4.0
    with pytest.raises(ValueError):
        consensus_grade([])


def test_consensus_met_is_the_majority_and_a_tie_has_none() -> None:
    assert consensus_met([True, True, False]) is True
    assert consensus_met([True, False]) is None
    result = consensus({"a": {"x": True, "y": False}, "b": {"x": True, "y": True}, "c": {"x": False}}, "met")
    assert result.reference == {"b": True, "c": False} and result.ties == ["a"]
    assert result.reviewers_per_item == {"a": 2, "b": 2, "c": 1}


def test_ceiling_is_the_mean_pairwise_kappa_and_the_judge_is_one_more_rater() -> None:
    items = [f"c{i}" for i in range(12)]
    dr_a = [1, 2, 3, 4, 5, 3, 2, 4, 4, 2, 3, 5]
    dr_b = [1, 2, 3, 4, 4, 3, 3, 4, 5, 2, 2, 5]
    dr_c = [2, 2, 3, 5, 5, 3, 2, 4, 4, 1, 3, 4]
    judge = [1, 2, 4, 4, 5, 3, 2, 3, 4, 2, 3, 5]
    labels = {i: {"a": a, "b": b, "c": c} for i, a, b, c in zip(items, dr_a, dr_b, dr_c, strict=True)}
    result = ceiling(labels, dict(zip(items, judge, strict=True)), "grade")
    pairs = {(p.a, p.b): p.kappa for p in result.clinician_pairs}
    assert pairs[("a", "b")] == weighted_kappa(dr_a, dr_b).kappa
    assert result.clinicians == pytest.approx(
        statistics.fmean([weighted_kappa(x, y).kappa for x, y in ((dr_a, dr_b), (dr_a, dr_c), (dr_b, dr_c))])
    )
    assert result.judge == pytest.approx(
        statistics.fmean([weighted_kappa(judge, d).kappa for d in (dr_a, dr_b, dr_c)])
    )


def test_pairs_with_too_few_shared_items_are_left_out_and_undefined_pairs_listed() -> None:
    labels = {f"c{i}": {"a": i % 2 == 0, "b": True} for i in range(12)}
    labels.update({f"d{i}": {"c": True} for i in range(3)})
    judge = {k: True for k in labels}
    result = ceiling(labels, judge, "met")
    assert [(p.a, p.b) for p in result.clinician_pairs] == [("a", "b")]  # a/c, b/c share no item
    assert result.clinician_pairs[0].kappa == 0.0  # b is constant
    assert result.clinicians == 0.0
    undefined = [p for p in result.judge_pairs if p.kappa is None]
    assert [(p.a, p.b) for p in undefined] == [("judge", "b")] and "p_e = 1" in undefined[0].why
    assert cohen_kappa([True] * 12, [i % 2 == 0 for i in range(12)], (True, False)).kappa == 0.0
