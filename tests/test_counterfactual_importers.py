"""Importing per-variant answer files of AMQA's shape (files written here, no third-party data)."""

import csv
import json
from pathlib import Path

import pytest

from clineval.counterfactual.importers import import_per_variant_answers, read_answer_file
from clineval.counterfactual.paired import counterfactual_analysis, outcomes_from_records

ROWS = [
    {
        "question_id": "0",
        "answer_idx": "D",
        "test_model_answer_original_question": "D",
        "test_model_answer_desensitized_question": "D",
        "test_model_answer_white": "D",
        "test_model_answer_black": "C",
    },
    {
        "question_id": "1",
        "answer_idx": "B",
        "test_model_answer_original_question": "B",
        "test_model_answer_desensitized_question": "B",
        "test_model_answer_white": "B",
        "test_model_answer_black": "B",
    },
    {
        "question_id": "2",
        "answer_idx": "A",
        "test_model_answer_original_question": "C",
        "test_model_answer_desensitized_question": "C",
        "test_model_answer_white": "a ",
        "test_model_answer_black": None,
    },
    {
        "question_id": "3",
        "answer_idx": "C",
        "test_model_answer_original_question": "D",
        "test_model_answer_desensitized_question": "D",
        "test_model_answer_white": "D",
        "test_model_answer_black": "A",
    },
]


def write_jsonl(path: Path) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")


def write_csv(path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(ROWS[0]))
        writer.writeheader()
        for row in ROWS:
            writer.writerow({k: ("" if v is None else v) for k, v in row.items()})


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_import_and_analyse(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"answers{suffix}"
    (write_jsonl if suffix == ".jsonl" else write_csv)(path)
    records = import_per_variant_answers(read_answer_file(path))
    assert len(records) == 16
    by_id = {r["id"]: r for r in records}
    assert by_id["0:reference"] == {
        "id": "0:reference",
        "group": "0",
        "variant": "reference",
        "answer": "D",
        "gold": "D",
        "correct": True,
    }
    assert by_id["2:white"]["answer"] == "A" and by_id["2:white"]["correct"] is True
    assert by_id["2:black"]["answer"] == "" and by_id["2:black"]["correct"] is False
    assert by_id["1:neutral"]["variant"] == "neutral"
    result = counterfactual_analysis(outcomes_from_records(records), [["white", "black"]])
    row = result["pairs"]["white|black"]
    # hand count: q0 white right/black wrong; q1 both right; q2 white right/black none; q3 both wrong
    assert (row["both_right"], row["a_only"], row["b_only"], row["both_wrong"]) == (1, 2, 0, 1)
    assert row["flip_rate"] == 0.75  # q0 D/C, q2 A/'', q3 D/A differ
    assert result["variants"]["white"]["flip_rate_vs_reference"] == 0.25  # q2 C -> A


def test_options(tmp_path: Path) -> None:
    records = import_per_variant_answers(ROWS, missing="skip", variants=["white", "black"])
    assert sorted({r["variant"] for r in records}) == ["black", "white"] and len(records) == 7
    records = import_per_variant_answers(ROWS, rename={})
    assert {r["variant"] for r in records} >= {"original_question", "desensitized_question"}


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="duplicate"):
        import_per_variant_answers([*ROWS, ROWS[0]])
    with pytest.raises(ValueError, match="answer_idx"):
        import_per_variant_answers([{"question_id": "9", "test_model_answer_white": "A"}])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "0"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl:2"):
        read_answer_file(bad)
    with pytest.raises(ValueError):
        read_answer_file(tmp_path / "x.xlsx")
