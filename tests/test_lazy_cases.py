"""JSONL datasets are read from their file when used (issue 16): the same cases, hash, errors and samples
as the whole file read into memory, and a file changed under a run is an error, never another case."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from clineval.core import DataFileError
from clineval.datasets import DATASETS
from clineval.datasets.lazy_cases import JsonlCases, case_ids, where_id
from clineval.datasets.medqa import load_medqa
from clineval.datasets.sampling import sample_cases

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
MEDQA = SHARED / "medqa_usmle_4opt" / "phrases_no_exclude_test.jsonl"


def _row(i: int, **extra: object) -> str:
    options = {k: f"option {k}{i}" for k in "ABCD"}
    return json.dumps({"question": f"q{i} \u2028 line", "options": options, "answer_idx": "B", **extra})


@pytest.mark.skipif(not MEDQA.exists(), reason="shared MedQA data not available")
def test_medqa_file_gives_the_cases_of_the_file_read_whole() -> None:
    lazy = DATASETS.get("medqa")({"path": str(MEDQA)}, MEDQA.parent)
    assert isinstance(lazy.cases, JsonlCases)
    assert lazy.content_hash == "sha256:" + hashlib.sha256(MEDQA.read_bytes()).hexdigest()
    assert len(lazy.cases) == 1273  # the MedQA-USMLE 4-option test split (Jin et al. 2020)
    eager = [json.loads(line) for line in MEDQA.read_text(encoding="utf-8").splitlines() if line.strip()]
    read = list(lazy.cases)
    assert [c.id for c in read] == [str(i) for i in range(len(eager))]
    for case, row in zip(read, eager, strict=True):
        assert case.input.question == row["question"]
        assert case.reference.answer == row["answer_idx"]
        assert case.metadata == {"meta_info": row["meta_info"]}
    assert lazy.cases[5].model_dump() == read[5].model_dump()
    assert [c.id for c in lazy.cases[10:13]] == ["10", "11", "12"]


def test_bom_crlf_blank_lines_and_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(("\ufeff" + _row(0) + "\r\n\r\n" + _row(1) + "\r\n").encode())
    loaded = load_medqa({"path": str(path)}, tmp_path)
    assert list(case_ids(loaded.cases)) == ["0", "2"]  # the id is the 0-based line number; line 2 is blank
    assert [c.input.question for c in loaded.cases] == ["q0 \u2028 line", "q1 \u2028 line"]


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        ([_row(0), "{not json"], 2, "malformed JSON"),
        ([_row(0), "[1, 2]"], 2, "expected a JSON object"),
        ([_row(0), json.dumps({"options": {"A": "a"}, "answer_idx": "A"})], 2, "missing field 'question'"),
        ([_row(0, id="x"), _row(1, id="x")], None, "duplicate case id 'x' \\(records 1 and 2\\)"),
    ],
)
def test_a_bad_record_is_one_error_naming_its_line(
    tmp_path: Path, lines: list[str], line: int | None, message: str
) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=message) as err:
        load_medqa({"path": str(path)}, tmp_path)
    assert err.value.line == line


def test_a_line_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(_row(0).encode() + b"\n" + b'{"question": "\xff"}\n')
    with pytest.raises(DataFileError, match="not UTF-8") as err:
        load_medqa({"path": str(path)}, tmp_path)
    assert err.value.line == 2


def test_a_file_changed_under_a_run_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(_row(i, id=f"c{i}") for i in range(3)) + "\n", encoding="utf-8")
    loaded = load_medqa({"path": str(path)}, tmp_path)
    text = path.read_text(encoding="utf-8").replace('"id": "c1"', '"id": "zz"')
    path.write_text(text, encoding="utf-8")  # same length: the offsets still point at line starts
    with pytest.raises(DataFileError, match=r"changed while in use.*case 'zz', not 'c1'") as err:
        list(loaded.cases)
    assert err.value.line == 2


def test_sampling_and_selection_by_id_keep_the_cases_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(_row(i, id=f"c{i:02d}") for i in range(40)) + "\n", encoding="utf-8")
    lazy = load_medqa({"path": str(path)}, tmp_path).cases
    eager = list(lazy)
    for limit, seed in ((5, 0), (17, 3), (40, 1), (None, 0)):
        chosen = sample_cases(lazy, limit, seed)
        assert isinstance(chosen, JsonlCases)
        assert [c.model_dump() for c in chosen] == [c.model_dump() for c in sample_cases(eager, limit, seed)]
    # by hand: the 3 ids with the smallest sha256(f"{seed}:{id}"), in file order
    ids = [f"c{i:02d}" for i in range(40)]
    smallest = sorted(ids, key=lambda i: hashlib.sha256(f"7:{i}".encode()).digest())[:3]
    assert list(case_ids(sample_cases(lazy, 3, 7))) == [i for i in ids if i in smallest]
    odd = where_id(lazy, lambda case_id: int(case_id[1:]) % 2 == 1)
    assert isinstance(odd, JsonlCases)
    assert [c.id for c in odd] == [f"c{i:02d}" for i in range(1, 40, 2)]
