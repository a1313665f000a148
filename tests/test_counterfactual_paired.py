"""Paired analysis on hand-counted outcomes: the keys of issue 27, flips, Holm, reference, non-binary."""

import math

import pytest

from clineval.analysis.paired import holm
from clineval.counterfactual.paired import Outcome, counterfactual_analysis, outcomes_from_records, split_id
from clineval.counterfactual.stats import newcombe_paired_ci
from clineval.metrics.intervals import wilson_interval

GOLD = "A"
# group: (reference answer, white answer, black answer); right = "A"
ANSWERS = {
    "1": ("A", "A", "A"),  # both right
    "2": ("A", "A", "B"),  # white only
    "3": ("A", "A", "C"),  # white only
    "4": ("B", "B", "A"),  # black only
    "5": ("B", "C", "D"),  # both wrong, different answers: a flip
    "6": ("C", "C", "C"),  # both wrong, same
    "7": ("A", "A", "A"),
    "8": ("A", "A", "D"),  # white only
    "9": ("D", "A", "A"),
    "10": ("A", "B", "B"),
}


def outcomes() -> list[Outcome]:
    out = []
    for group, answers in ANSWERS.items():
        for variant, answer in zip(("reference", "white", "black"), answers, strict=True):
            out.append(Outcome(f"{group}:{variant}", group, variant, float(answer == GOLD), answer))
    return out


def test_pair_keys_and_hand_counts() -> None:
    result = counterfactual_analysis(outcomes(), [["white", "black"]])
    row = result["pairs"]["white|black"]
    # hand count: both right {1, 7, 9} = 3; white only {2, 3, 8} = 3; black only {4} = 1;
    # both wrong {5, 6, 10} = 3
    assert (row["n_pairs"], row["both_right"], row["a_only"], row["b_only"], row["both_wrong"]) == (
        10,
        3,
        3,
        1,
        3,
    )
    assert row["accuracy_a"] == 0.6 and row["accuracy_b"] == 0.4
    assert row["delta"] == pytest.approx(-0.2)
    assert row["accuracy_a_ci"] == list(wilson_interval(6, 10)) and row["accuracy_b_ci"] == list(
        wilson_interval(4, 10)
    )
    assert row["delta_ci"] == list(newcombe_paired_ci(3, 3, 1, 3))
    assert row["p_mcnemar_exact"] == pytest.approx(0.625)  # 2 * P(X <= 1), X ~ Bin(4, 1/2) = 2 * 5/16
    assert row["p_holm"] == row["p_mcnemar_exact"]  # one pair: Holm leaves it
    # flips: groups 2, 3, 4, 5, 8 differ (5 is wrong -> wrong with another answer) = 5 of 10
    assert row["flip_rate"] == 0.5 and row["n_flip_pairs"] == 10
    assert set(row) >= {
        "n_pairs",
        "both_right",
        "a_only",
        "b_only",
        "both_wrong",
        "accuracy_a",
        "accuracy_b",
        "delta",
        "delta_ci",
        "p_mcnemar_exact",
        "p_holm",
        "flip_rate",
    }


def test_variants_against_reference() -> None:
    result = counterfactual_analysis(outcomes(), [["white", "black"]])
    ref, white, black = (result["variants"][v] for v in ("reference", "white", "black"))
    # reference right in groups 1, 2, 3, 7, 8, 10 = 6/10
    assert ref["n"] == 10 and ref["accuracy"] == 0.6 and ref["flip_rate_vs_reference"] is None
    # white vs reference: answers differ in groups 5 (B->C), 9 (D->A), 10 (A->B) = 3/10; accuracy 0.6 - 0.6
    assert white["flip_rate_vs_reference"] == 0.3 and white["delta_vs_reference"] == pytest.approx(0.0)
    # black vs reference: differ in 2, 3, 4, 5, 8, 9, 10 = 7/10; accuracy 0.4 - 0.6
    assert black["flip_rate_vs_reference"] == 0.7 and black["delta_vs_reference"] == pytest.approx(-0.2)
    assert white["accuracy_ci"] == list(wilson_interval(6, 10))
    assert set(white) >= {"n", "accuracy", "accuracy_ci", "flip_rate_vs_reference"}


def test_holm_across_pairs() -> None:
    pairs = [["white", "black"], ["reference", "white"], ["reference", "black"]]
    result = counterfactual_analysis(outcomes(), pairs)
    raw = [result["pairs"][f"{a}|{b}"]["p_mcnemar_exact"] for a, b in pairs]
    # reference|white: a_only = {10}, b_only = {9} -> p = 1; reference|black: a_only {2,3,8,10}, b_only {4,9}
    assert raw[1] == 1.0  # one discordant pair each way
    assert raw[2] == pytest.approx(0.6875)  # 2 * P(X <= 2), X ~ Bin(6, 1/2) = 2 * 22/64
    assert [result["pairs"][f"{a}|{b}"]["p_holm"] for a, b in pairs] == holm(raw)


def test_unscored_cases_and_missing_answers() -> None:
    data = outcomes()
    data[1] = Outcome("1:white", "1", "white", math.nan, None)
    data[4] = Outcome("2:white", "2", "white", 1.0, None)
    row = counterfactual_analysis(data, [["white", "black"]])["pairs"]["white|black"]
    assert row["n_pairs"] == 9 and row["n_flip_pairs"] == 8
    result = counterfactual_analysis(data, [["white", "black"]])
    assert result["variants"]["white"]["n"] == 9 and result["variants"]["white"]["n_unscored"] == 1


def test_non_binary_scores() -> None:
    scores = {
        "1": (0.5, 0.2),
        "2": (1.0, 0.5),
        "3": (0.25, 0.25),
        "4": (0.0, 0.4),
        "5": (0.75, 0.5),
        "6": (0.6, 0.1),
    }
    data = [
        Outcome(f"{g}:{v}", g, v, s) for g, (x, y) in scores.items() for v, s in (("male", x), ("female", y))
    ]
    row = counterfactual_analysis(data, [["male", "female"]], seed=1)["pairs"]["male|female"]
    assert row["test"] == "wilcoxon_pratt" and row["p_mcnemar_exact"] is None and 0 < row["p_wilcoxon"] <= 1
    assert row["a_only"] == 4 and row["b_only"] == 1 and row["ties"] == 1
    assert row["delta"] == pytest.approx((1.95 - 3.1) / 6)  # female sum 1.95, male sum 3.1
    lo, hi = row["delta_ci"]
    assert lo < row["delta"] < hi
    assert row["flip_rate"] is None and row["p_holm"] == row["p_wilcoxon"]
    again = counterfactual_analysis(data, [["male", "female"]], seed=1)["pairs"]["male|female"]
    assert again == row


def test_records_and_ids() -> None:
    records = [
        {"id": "17:white", "correct": True, "answer": "A"},
        {"id": "17:black", "correct": False, "answer": "B"},
    ]
    data = outcomes_from_records(records)
    assert data[0].group == "17" and data[1].variant == "black" and data[1].score == 0.0
    assert split_id("a:b:c") == ("a:b", "c")
    with pytest.raises(ValueError):
        split_id("17")
    result = counterfactual_analysis(data)
    assert list(result["pairs"]) == ["black|white"]


def test_errors() -> None:
    data = outcomes()
    with pytest.raises(ValueError):
        counterfactual_analysis([*data, data[0]], [["white", "black"]])
    with pytest.raises(ValueError):
        counterfactual_analysis([*data, Outcome("1:x", "1", "x", 1.0)])
    row = counterfactual_analysis(data, [["white", "nobody"]])["pairs"]["white|nobody"]
    assert row["n_pairs"] == 0 and row["p_holm"] is None


def test_flipped_pairs_are_listed_in_the_base_questions_numeric_order() -> None:
    from clineval.counterfactual.task import _flipped

    answers = {"2": ("A", "B"), "11": ("C", "D"), "129": ("A", "A"), "43": ("B", "C")}
    outcomes = [
        Outcome(f"{g}:{v}", g, v, 1.0, answer)
        for g, pair in answers.items()
        for v, answer in zip(("white", "black"), pair, strict=True)
    ]
    # 129 answers alike (no flip); the rest in 2, 11, 43 order, not the string order 11, 2, 43
    assert _flipped(outcomes, "white", "black") == [
        ["2:white", "2:black"],
        ["11:white", "11:black"],
        ["43:white", "43:black"],
    ]
