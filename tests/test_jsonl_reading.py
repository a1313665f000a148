"""Every JSON-lines and line-oriented loader reads lines the same way (clineval.core.helpers.lines).

A raw U+2028, U+2029 or U+0085 inside a JSON string is valid JSON (``json.dumps(ensure_ascii=False)``
writes them raw) and must not end a line; CRLF files load; a UTF-8 byte order mark is dropped by every
loader; line numbers in errors stay those a text editor shows (lines end at ``\\n``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clineval.cds.retrieval.trec import parse_qrels, parse_topics
from clineval.cds.retrieval.trec_run import parse_run
from clineval.core.errors import DataFileError
from clineval.core.helpers.lines import text_lines
from clineval.datasets.registry import DATASETS
from clineval.systems.predictions import parse_predictions
from tests.helpers import shared_data

MARK = "start\u2028line sep\u2029para sep\u0085next line end"
ROOT = Path(__file__).resolve().parents[1]


def _first_rows(path: Path, n: int = 3) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(next(handle)) for _ in range(n)]


def _marked(rows: list[dict[str, Any]], put: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    for row in rows:
        put(row)
    return rows


def _append(key: str) -> Callable[[dict[str, Any]], None]:
    def put(row: dict[str, Any]) -> None:
        row[key] = f"{row[key]} {MARK}"

    return put


def _healthbench_put(row: dict[str, Any]) -> None:
    row["prompt"][-1]["content"] += f" {MARK}"


AS_OF = "2024-05-01T12:00:00+00:00"

# name -> (rows with MARK in a string that reaches the loaded cases, loader(path) -> loaded items)
Loader = Callable[[Path], list[Any]]


def _dataset(fmt: str, **options: Any) -> Loader:
    def load(path: Path) -> list[Any]:
        return [
            c.model_dump(mode="json")
            for c in DATASETS.get(fmt)({"path": str(path), **options}, path.parent).cases
        ]

    return load


def _predictions(path: Path) -> list[Any]:
    outputs = parse_predictions(path.read_bytes(), path)
    return [{"id": k, **v.model_dump(mode="json")} for k, v in outputs.items()]


def _rows(name: str) -> list[dict[str, Any]]:
    if name == "medqa":
        rows = _first_rows(shared_data("medqa_usmle_4opt", "phrases_no_exclude_test.jsonl"))
        return _marked(rows, _append("question"))
    if name == "medmcqa":
        return _marked(_first_rows(shared_data("medmcqa_dev", "dev.json")), _append("question"))
    if name == "healthbench":
        rows = _first_rows(shared_data("healthbench", "healthbench_oss_eval_first30.jsonl"))
        return _marked(rows, _healthbench_put)
    if name == "open_xddx":
        return _marked(_first_rows(shared_data("open_xddx", "open_xddx.jsonl")), _append("patient_info"))
    if name == "golden_set":
        return _marked(_first_rows(ROOT / "data" / "golden_set" / "golden_set_v2.jsonl"), _append("question"))
    if name == "jsonl":
        return [
            {"id": f"g{i}", "question": f"Q{i}? {MARK}", "options": {"A": "x", "B": "y"}, "answer": "A"}
            for i in range(3)
        ]
    if name == "production_log":
        stamp = "2024-05-01T10:00:00+00:00"
        return [{"id": f"r{i}", "timestamp": stamp, "output": f"fine {MARK}"} for i in range(3)]
    if name == "retrieval_judgments":
        return [
            {"query": f"Q{i} {MARK}", "query_id": f"q{i}", "doc_id": f"d{i}", "grade": 1} for i in range(3)
        ]
    if name == "predictions":
        return [{"id": str(i), "output": f"Answer: A {MARK}"} for i in range(3)]
    raise AssertionError(name)


LOADERS: dict[str, Loader] = {
    "medqa": _dataset("medqa"),
    "medmcqa": _dataset("medmcqa"),
    "healthbench": _dataset("healthbench"),
    "open_xddx": _dataset("open_xddx"),
    "golden_set": _dataset("golden_set"),
    "jsonl": _dataset("jsonl"),
    "production_log": _dataset("production_log", as_of=AS_OF),
    "retrieval_judgments": _dataset("retrieval_judgments"),
    "predictions": _predictions,
}


def _write(path: Path, rows: list[dict[str, Any]], *, newline: str, bom: bool) -> Path:
    text = "".join(json.dumps(r, ensure_ascii=False) + newline for r in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def test_the_marker_really_holds_the_characters_str_splitlines_breaks_at() -> None:
    line = json.dumps({"q": MARK}, ensure_ascii=False)
    assert len(line.splitlines()) == 4  # what the loaders used to do: one record, four "lines"
    assert [n for n, _ in text_lines(line + "\n")] == [1]


@pytest.mark.parametrize("name", sorted(LOADERS))
@pytest.mark.parametrize(("newline", "bom"), [("\n", False), ("\r\n", False), ("\n", True), ("\r\n", True)])
def test_each_loader_reads_raw_separators_crlf_and_bom(
    tmp_path: Path, name: str, newline: str, bom: bool
) -> None:
    rows = _rows(name)
    loaded = LOADERS[name](_write(tmp_path / "f.jsonl", rows, newline=newline, bom=bom))
    assert len(loaded) == len(rows) == 3
    for item in loaded:
        dumped = json.dumps(item, ensure_ascii=False)
        assert MARK in dumped  # the separators survive inside the string, unchanged
        assert "\ufeff" not in dumped and "\r" not in dumped


def test_line_numbers_count_only_newlines(tmp_path: Path) -> None:
    """medqa ids default to the 0-based line number, and errors name the line: both stay right."""
    rows = _rows("medqa")
    path = _write(tmp_path / "q.jsonl", rows, newline="\r\n", bom=True)
    cases = DATASETS.get("medqa")({"path": str(path)}, tmp_path).cases
    assert [c.id for c in cases] == ["0", "1", "2"]
    path.write_bytes(path.read_bytes() + b'{"question": "broken\n')
    with pytest.raises(DataFileError) as info:
        DATASETS.get("medqa")({"path": str(path)}, tmp_path)
    assert info.value.line == 4 and "malformed JSON" in info.value.problem


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_errors_after_separator_lines_name_the_right_line(tmp_path: Path, name: str) -> None:
    rows = _rows(name)
    path = _write(tmp_path / "f.jsonl", rows, newline="\n", bom=True)
    path.write_bytes(path.read_bytes() + b"\n[1, 2\n")  # line 4 blank, line 5 broken
    with pytest.raises(DataFileError) as info:
        LOADERS[name](path)
    assert (info.value.path, info.value.line) == (str(path), 5)


def test_trec_files_drop_the_bom_and_read_crlf(tmp_path: Path) -> None:
    qrels = b"\xef\xbb\xbfq1 0 d1 2\r\nq1 0 d2 0\r\nq2 0 d3 1\r\n"
    assert parse_qrels(qrels, tmp_path / "q.txt") == {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    topics = "\ufeffq1\tchest pain\u2028at rest\r\nq2\tfever\r\n".encode()
    assert parse_topics(topics, tmp_path / "t.tsv") == {"q1": "chest pain\u2028at rest", "q2": "fever"}
    run = b"\xef\xbb\xbfq1 Q0 d1 1 2.0 r\r\nq1 Q0 d2 2 1.0 r\r\n"
    assert [d.doc_id for d in parse_run(run, tmp_path / "r.txt")["q1"]] == ["d1", "d2"]
    with pytest.raises(DataFileError) as info:
        parse_qrels(b"\xef\xbb\xbfq1 0 d1 2\r\n\r\nq1 0 d3\r\n", tmp_path / "q.txt")
    assert info.value.line == 3 and info.value.problem == "expected 4 fields, got 3"
