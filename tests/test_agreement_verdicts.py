"""What the agreement page computes, checked against the recorded verdicts (issue 22 item 8).

Before: the MCQ "reviewer vs scorer" row compared only the score outcome (correct / incorrect / unparsed), so
two "disagree" reviews (B -> D with gold C, and unparsed -> the gold letter) showed observed agreement 0.500
and kappa 0.333 [0.025, 0.641], an interval on n = 2. Now the first row compares the reviewed value itself
(its agreements are the "agree" verdicts), a second one the outcome, and no interval is shown below
``MIN_N_INTERVAL`` pairs. The kappas below are counted by hand from the 2-way tables and checked against
statsmodels' ``cohens_kappa``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa  # type: ignore[import-untyped]

from clineval.store import ResultStore
from clineval.view.review.adjudication import Adjudication, record
from clineval.view.review.agreement import MIN_N_INTERVAL, agreement_rows, kappa_from_table
from clineval.view.urls import link
from tests.test_adjudication import mcq_run


def _review(i: int, case: str, auto: str, corrected: str, reviewer: str = "ann") -> Adjudication:
    return Adjudication(
        id=i,
        run_id="r",
        task_id="t",
        case_id=case,
        item_kind="mcq",
        item_key="mcq",
        automated_value={"value": auto, "gold": "A"},
        verdict="agree" if auto == corrected else "disagree",
        corrected_value=corrected,
        reviewer=reviewer,
        comment="",
        created_at=datetime(2026, 11, 24, tzinfo=UTC),
    )


# (scorer's letter, reviewer's letter, how many); gold A everywhere
REVIEWS = [
    ("A", "A", 5),
    ("B", "B", 3),
    ("B", "A", 2),
    ("B", "C", 2),
    ("unparsed", "A", 1),
    ("unparsed", "unparsed", 1),
]


def _reviews() -> list[Adjudication]:
    out: list[Adjudication] = []
    for auto, corrected, count in REVIEWS:
        for _ in range(count):
            out.append(_review(len(out) + 1, f"c{len(out)}", auto, corrected))
    return out


def test_hand_counted_value_and_outcome_tables() -> None:
    rows = _reviews()
    figures = {(r.comparison, r.on): r for r in agreement_rows(rows)}
    value, outcome = figures[("reviewer_vs_scorer", "value")], figures[("reviewer_vs_scorer", "outcome")]
    # On the letter (categories A, B, C, unparsed; rows = scorer, columns = reviewer):
    #   A: [5, 0, 0, 0]   B: [2, 3, 2, 0]   C: [0, 0, 0, 0]   unparsed: [1, 0, 0, 1]      N = 14
    # agreements 5 + 3 + 1 = 9 = the 9 "agree" verdicts; p_o = 9/14
    # margins: scorer A 5, B 7, C 0, u 2; reviewer A 8, B 3, C 2, u 1 -> p_e = (40 + 21 + 0 + 2)/196 = 63/196
    # kappa = (126 - 63)/(196 - 63) = 63/133 = 9/19
    letters = [[5, 0, 0, 0], [2, 3, 2, 0], [0, 0, 0, 0], [1, 0, 0, 1]]
    assert value.categories == ("A", "B", "C", "unparsed")
    assert value.result.n == 14 and value.result.agreed == 9 == sum(r.verdict == "agree" for r in rows)
    assert value.result.observed == pytest.approx(9 / 14)
    assert value.result.kappa == pytest.approx(9 / 19)
    # On the outcome (correct, incorrect, unparsed): B -> C stays incorrect, so it agrees here
    #   correct: [5, 0, 0]   incorrect: [2, 5, 0]   unparsed: [1, 0, 1]     agreements 11; p_o = 11/14
    #   margins: scorer 5, 7, 2; reviewer 8, 5, 1 -> p_e = (40 + 35 + 2)/196 = 77/196; kappa = 77/119 = 11/17
    outcomes = [[5, 0, 0], [2, 5, 0], [1, 0, 1]]
    assert outcome.result.agreed == 11 and outcome.result.kappa == pytest.approx(11 / 17)
    for table, figure in ((letters, value.result), (outcomes, outcome.result)):
        reference = sm_kappa(table)
        assert figure.kappa == pytest.approx(float(reference.kappa), abs=1e-12)
        assert figure.se == pytest.approx(float(reference.std_kappa), abs=1e-12)
        assert figure.has_interval and figure.low == pytest.approx(max(-1.0, float(reference.kappa_low)))


def test_two_disagreeing_reviewers_on_the_same_items() -> None:
    # ann and bob read the same four answers; they differ on one: p_o = 3/4
    ann = [("c1", "B", "A"), ("c2", "B", "C"), ("c3", "A", "A"), ("c4", "unparsed", "B")]
    bob = [("c1", "B", "A"), ("c2", "B", "D"), ("c3", "A", "A"), ("c4", "unparsed", "B")]
    rows = [_review(i, c, a, v, "ann") for i, (c, a, v) in enumerate(ann)]
    rows += [_review(10 + i, c, a, v, "bob") for i, (c, a, v) in enumerate(bob)]
    between = next(r for r in agreement_rows(rows) if r.comparison == "between_reviewers")
    # categories A, B, C, D, unparsed: ann A 2, B 1, C 1; bob A 2, B 1, D 1
    # p_e = (2*2 + 1*1)/16 = 5/16; kappa = (12/16 - 5/16)/(11/16) = 7/11
    assert between.raters == "ann / bob" and between.result.n == 4 and between.result.agreed == 3
    assert between.result.kappa == pytest.approx(7 / 11)
    assert not between.result.has_interval  # n = 4 < MIN_N_INTERVAL


def test_no_interval_below_the_minimum_n() -> None:
    assert MIN_N_INTERVAL == 10
    below = kappa_from_table([[5, 1], [1, 2]])  # n = 9
    at = kappa_from_table([[5, 1], [1, 3]])  # n = 10
    assert below.n == 9 and not below.has_interval and below.kappa == below.kappa  # kappa itself is shown
    assert at.n == 10 and at.has_interval


def test_the_issue_case_through_the_page(tmp_path: Path) -> None:
    """Two "disagree" reviews on a real run: the page shows 0 of 2 agreed on the answer, 1 of 2 on the outcome
    (kappa 0.333 there, counted by hand in the module docstring), and no interval."""
    from clineval.view.app import create_app

    url = f"sqlite:///{tmp_path}/s.db"
    run = mcq_run(tmp_path, url)  # gold A, B, C; answers A, unreadable, B
    with ResultStore(url) as store:
        # case 2: the scorer read B (gold C), the reviewer reads D: still incorrect
        record(store, run, "t", "2", item_key="mcq", verdict="disagree", reviewer="ann", corrected_value="D")
        # case 1: unparsed, the reviewer reads the gold B: correct
        record(store, run, "t", "1", item_key="mcq", verdict="disagree", reviewer="ann", corrected_value="B")
    client = TestClient(create_app(url), base_url="http://127.0.0.1")
    html = client.get(link("agreement", run=run)).text
    rows = {
        on: dict(re.findall(r'data-testid="agreement-(\w+)">([^<]*)<', body))
        for on, body in re.findall(r'data-on="(\w+)">(.*?)</tr>', html, re.S)
    }
    # value table: (B, D), (unparsed, B): no agreement, p_o = 0; scorer B 1/2, unparsed 1/2; reviewer D 1/2,
    # B 1/2 -> p_e = 1/2 * 1/2 (B) = 1/4; kappa = (0 - 1/4)/(3/4) = -1/3
    assert rows["value"] == {
        "n": "2",
        "agreed": "0",
        "observed": "0.000",
        "kappa": "-0.333",
        "ci": "n too small for an interval (n &lt; 10)",
    }
    # outcome table: (incorrect, incorrect), (unparsed, correct): p_o = 1/2; scorer margins incorrect 1/2,
    # unparsed 1/2; reviewer incorrect 1/2, correct 1/2 -> p_e = 1/4, kappa = (1/2 - 1/4)/(3/4) = 1/3
    assert rows["outcome"]["agreed"] == "1" and rows["outcome"]["kappa"] == "0.333"
    assert rows["outcome"]["ci"].startswith("n too small") and "0.025" not in html
    assert "extracted answer (letter)" in html and "score outcome (correct / incorrect / unparsed)" in html
