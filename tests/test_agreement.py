"""Cohen's kappa (unweighted and weighted) and its interval, against a hand-computed 2x2 example and
statsmodels' ``cohens_kappa``; agreement rows from stored reviews."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa  # type: ignore[import-untyped]

from clineval.view.review.adjudication import Adjudication
from clineval.view.review.agreement import Z95, agreement_rows, cohens_kappa, kappa_from_table, table


def test_hand_computed_two_by_two() -> None:
    # 50 items: both yes 20, A yes B no 5, A no B yes 10, both no 15.
    # p_o = 35/50 = 0.7; A yes 25/50, B yes 30/50: p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = 0.2/0.5 = 0.4
    result = kappa_from_table([[20, 5], [10, 15]])
    assert result.kappa == pytest.approx(0.4)
    assert result.observed == pytest.approx(0.7) and result.n == 50
    # Fleiss-Cohen-Everitt variance by hand: rows p_i. = (.5,.5), cols p_.j = (.6,.4), (1-k) = .6
    # cell (i, j) uses p_.i + p_j.: diag .4*(1-1.1*.6)^2 + .3*(1-.9*.6)^2;
    # off-diagonal .1*(.6+.5)^2*.36 + .2*(.4+.5)^2*.36
    term = 0.4 * (1 - 1.1 * 0.6) ** 2 + 0.3 * (1 - 0.9 * 0.6) ** 2 + 0.1 * 1.21 * 0.36 + 0.2 * 0.81 * 0.36
    var = (term - (0.4 - 0.5 * 0.6) ** 2) / (50 * 0.25)
    assert result.se == pytest.approx(math.sqrt(var))
    assert (result.low, result.high) == pytest.approx((0.4 - Z95 * result.se, 0.4 + Z95 * result.se))


TABLES = [
    [[20, 5], [10, 15]],
    [[11, 3, 1], [2, 9, 4], [0, 3, 7]],
    [[7, 2, 0, 0, 0], [1, 6, 3, 0, 0], [0, 2, 9, 2, 1], [0, 0, 3, 8, 2], [0, 0, 1, 2, 5]],
]


@pytest.mark.parametrize("counts", TABLES)
@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_kappa_and_its_standard_error_match_statsmodels(counts: list[list[int]], weights: str) -> None:
    ours = kappa_from_table(counts, weights)
    ref = sm_kappa(counts) if weights == "none" else sm_kappa(counts, wt=weights)
    assert ours.kappa == pytest.approx(float(ref.kappa), abs=1e-12)
    assert ours.se == pytest.approx(float(ref.std_kappa), abs=1e-12)
    assert ours.low == pytest.approx(max(-1.0, float(ref.kappa_low)), abs=1e-6)
    assert ours.high == pytest.approx(min(1.0, float(ref.kappa_upp)), abs=1e-6)


def test_pairs_build_the_table_in_category_order_and_degenerate_cases() -> None:
    pairs = [(1, 1), (2, 3), (5, 5), (3, 3)]
    assert table(pairs, [1, 2, 3, 4, 5])[1][2] == 1
    assert cohens_kappa([(4, 4), (4, 4)], [1, 2, 3, 4, 5], "quadratic").kappa != 0  # NaN: p_e = 1
    assert math.isnan(cohens_kappa([("pass", "pass")] * 3, ["pass", "fail"]).kappa)
    assert math.isnan(kappa_from_table([[0, 0], [0, 0]]).kappa)
    with pytest.raises(ValueError, match="not one of"):
        table([("maybe", "pass")], ["pass", "fail"])
    with pytest.raises(ValueError, match="weights"):
        kappa_from_table([[1]], "cubic")


def _row(i: int, reviewer: str, key: str, kind: str, auto: object, corrected: object) -> Adjudication:
    return Adjudication(
        id=i,
        run_id="r",
        task_id="t",
        case_id=key,
        item_kind=kind,
        item_key=key,
        automated_value={"value": auto, "gold": "A"},
        verdict="agree" if auto == corrected else "disagree",
        corrected_value=corrected,
        reviewer=reviewer,
        comment="",
        created_at=datetime(2026, 11, 24, tzinfo=UTC),
    )


def test_agreement_rows_use_current_verdicts_and_pair_reviewers() -> None:
    rows = [
        _row(1, "ann", "c1", "judge_dimension", 4, 2),  # superseded by id 3
        _row(2, "bob", "c1", "judge_dimension", 4, 4),
        _row(3, "ann", "c1", "judge_dimension", 4, 4),
        _row(4, "ann", "c2", "judge_dimension", 2, 3),
        _row(5, "bob", "c2", "judge_dimension", 2, 2),
        _row(6, "ann", "m1", "mcq", "B", "A"),  # the scorer said B (incorrect), ann says A (correct)
        _row(7, "ann", "m2", "mcq", "unparsed", "unparsed"),
    ]
    out = {(r.comparison, r.item_kind, r.raters): r.result for r in agreement_rows(rows) if r.on == "value"}
    judge = out[("reviewer_vs_judge", "judge_dimension", "all reviewers")]
    assert judge.n == 4 and judge.weights == "quadratic"
    pairs = [(4, 4), (2, 3), (4, 4), (2, 2)]
    assert judge.kappa == pytest.approx(cohens_kappa(pairs, [1, 2, 3, 4, 5], "quadratic").kappa)
    between = out[("between_reviewers", "judge_dimension", "ann / bob")]
    assert between.n == 2
    mcq = out[("reviewer_vs_scorer", "mcq", "all reviewers")]
    assert mcq.n == 2 and mcq.observed == pytest.approx(0.5)  # B vs A disagree, unparsed agree
