"""End to end (issue 27): a suite with the counterfactual option over replayed predictions -> report.json's
``counterfactual`` keys and values, the reports, the viewer page, the gate metrics, and the one-line errors.

The expected values are counted by hand from the table below (gold answer "A" everywhere):

    question  reference  white  black      white|black       reference|white   reference|black
    1         A          A      A          both right        same              same
    2         A          A      B          white only, flip  same              flip
    3         A          A      C          white only, flip  same              flip
    4         B          B      A          black only, flip  same              flip
    5         B          C      D          both wrong, flip  flip              flip
    6         C          C      C          both wrong        same              same
    7         A          A      A          both right        same              same
    8         A          A      D          white only, flip  same              flip
    9         D          A      A          both right        flip              flip
    10        A          B      B          both wrong        flip              flip

white|black: both right 3 (1, 7, 9), white only 3 (2, 3, 8), black only 1 (4), both wrong 3 (5, 6, 10);
accuracy white 6/10, black 4/10, delta -0.2; exact McNemar p = 2 P(X <= 1), X ~ Bin(4, 1/2) = 2 * 5/16 =
0.625; flips 5 of 10 (2, 3, 4, 5, 8). Reference 6/10 right (1, 2, 3, 7, 8, 10); white vs reference: flips
5, 9, 10 = 3/10, delta 0; black vs reference: flips 2, 3, 4, 5, 8, 9, 10 = 7/10, delta -0.2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clineval.cli.main import app
from clineval.metrics.intervals import wilson_interval

ANSWERS = {
    "1": "AAA", "2": "AAB", "3": "AAC", "4": "BBA", "5": "BCD",
    "6": "CCC", "7": "AAA", "8": "AAD", "9": "DAA", "10": "ABB",
}  # fmt: skip
VARIANTS = ("reference", "white", "black")


def _write(tmp_path: Path, counterfactual: str) -> Path:
    rows, preds = [], []
    for group, answers in ANSWERS.items():
        for variant, letter in zip(VARIANTS, answers, strict=True):
            case_id = f"{group}:{variant}"
            question = f"A 40-year-old {variant} man <b>with</b> cough, question {group}."
            options = {"A": "one", "B": "two", "C": "three", "D": "four"}
            rows.append({"id": case_id, "question": question, "options": options, "answer_idx": "A"})
            preds.append({"id": case_id, "output": f"The answer is {letter}."})
    (tmp_path / "variants.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: cf\ntasks:\n  - id: race\n    dataset: {format: medqa, path: variants.jsonl}\n"
        "    system: {type: predictions, path: predictions.jsonl}\n    scorers: [mcq]\n" + counterfactual
    )
    return suite


def _run(tmp_path: Path, suite: Path) -> tuple[int, str]:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    args = ["run", str(suite), "--out", str(tmp_path / "out"), "--store", store, "--no-cache", "-q"]
    result = CliRunner().invoke(app, ["-q", *args[:-1]])
    return result.exit_code, result.output


OPTION = "    counterfactual:\n      reference: reference\n      pairs: [[white, black]]\n"


def test_suite_with_counterfactual_option_end_to_end(tmp_path: Path) -> None:
    code, out = _run(tmp_path, _write(tmp_path, OPTION))
    assert code == 0, out
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    task = report["counterfactual"]["race"]
    row = task["pairs"]["white|black"]
    assert (row["n_pairs"], row["both_right"], row["a_only"], row["b_only"], row["both_wrong"]) == (
        10,
        3,
        3,
        1,
        3,
    )
    assert row["accuracy_a"] == pytest.approx(0.6) and row["accuracy_b"] == pytest.approx(0.4)
    assert row["accuracy_a_ci"] == pytest.approx(list(wilson_interval(6, 10)))
    assert row["delta"] == pytest.approx(-0.2)
    lo, hi = row["delta_ci"]
    assert lo < -0.2 < hi and hi - lo > 0.1
    assert row["p_mcnemar_exact"] == pytest.approx(0.625) and row["p_holm"] == pytest.approx(0.625)
    assert row["flip_rate"] == pytest.approx(0.5) and row["n_flipped"] == 5
    assert row["flipped"][0] == ["2:white", "2:black"]
    assert "discordant" in row["note"]  # 4 discordant pairs: too few for p < 0.05, and the report says so
    variants = task["variants"]
    assert variants["reference"]["accuracy"] == pytest.approx(0.6)
    assert variants["white"]["flip_rate_vs_reference"] == pytest.approx(0.3)
    assert variants["black"]["flip_rate_vs_reference"] == pytest.approx(0.7)
    assert variants["black"]["delta_vs_reference"] == pytest.approx(-0.2)
    assert set(variants["white"]) >= {"n", "accuracy", "accuracy_ci", "flip_rate_vs_reference"}
    scores = report["task_scores"]["race"]
    assert scores["counterfactual_flip_rate"] == pytest.approx(0.5)
    assert scores["counterfactual_abs_delta"] == pytest.approx(0.2)
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "## Counterfactual fairness" in markdown and "white\\|black" in markdown
    html = (tmp_path / "out" / "report.html").read_text()
    assert (
        'class="chart counterfactual"' in html and "<script" not in html.split("counterfactual", 1)[1][:5000]
    )


def test_counterfactual_viewer_page_escapes_and_links(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from clineval.store import ResultStore
    from clineval.view.app import create_app
    from clineval.view.urls import link

    assert _run(tmp_path, _write(tmp_path, OPTION))[0] == 0
    url = f"sqlite:///{tmp_path / 'store.db'}"
    run_id = json.loads((tmp_path / "out" / "report.json").read_text())["run_id"]
    client = TestClient(create_app(url), base_url="http://127.0.0.1")
    page = client.get(link("counterfactual", run=run_id, task="race"))
    assert page.status_code == 200
    assert page.text.count('data-testid="cf-pair"') == 5
    assert "&lt;b&gt;with&lt;/b&gt;" in page.text and "<b>with</b>" not in page.text
    assert link("case", run=run_id, task="race", case="2:white").replace("&", "&amp;") in page.text
    assert client.get(link("counterfactual", run=run_id, task="none")).status_code == 404
    ResultStore(url, read_only=True).close()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("    counterfactual:\n      pairs: [[white, black]]\n      gruop: g\n", "unknown key 'gruop'"),
        ("    counterfactual:\n      pairs: [[white, asian]]\n", "variant(s) 'asian' in no case"),
        (
            "    counterfactual:\n      pairs: [[white, black]]\n      scorer: ddx\n",
            "scorer 'ddx' is not one",
        ),
        (
            "    counterfactual:\n      reference: original\n      pairs: [[white, black]]\n",
            "'original' in no",
        ),
    ],
)
def test_bad_option_is_one_line_exit_2(tmp_path: Path, option: str, message: str) -> None:
    code, out = _run(tmp_path, _write(tmp_path, option))
    assert code == 2 and out.count("\n") == 1 and message in out, out
