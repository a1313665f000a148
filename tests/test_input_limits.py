"""Every JSON reader refuses a value nested deeper than 200 and a line over 64 MiB with one line naming the
file and line (``clineval.core.helpers.lines``); ``[[[[...]]]]`` 10,000 deep was a RecursionError
traceback."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clineval.core.errors import DataFileError
from clineval.core.helpers.lines import (
    MAX_JSON_DEPTH,
    MAX_LINE_BYTES,
    json_too_deep,
    parse_json_line,
    stream_lines,
)
from clineval.core.output import SystemOutput
from clineval.datasets._io import load_json
from clineval.datasets.registry import DATASETS
from clineval.ddx.lddx_records import parse_lddx
from clineval.systems.openai_chat import json_reply
from clineval.systems.predictions import PredictionsOptions, PredictionsSystem
from tests.cli_helpers import clineval, write_small_suite
from tests.test_cli_bad_input import GOOD_PREDICTIONS, assert_one_line_error

DEEP = "[" * 10_000 + "]" * 10_000


def nested(depth: int, inner: str = "1") -> str:
    """A JSON value nesting ``depth`` arrays and objects (alternating)."""
    text = inner
    for level in range(depth):
        text = f"[{text}]" if level % 2 else f'{{"k": {text}}}'
    return text


# -- the depth check itself ----------------------------------------------------------------------------------
def test_the_limit_is_200_levels_of_arrays_and_objects() -> None:
    assert not json_too_deep(nested(MAX_JSON_DEPTH))
    assert json_too_deep(nested(MAX_JSON_DEPTH + 1))
    assert json.loads(nested(MAX_JSON_DEPTH))  # the deepest accepted value parses
    assert parse_json_line(nested(MAX_JSON_DEPTH), "f.jsonl", 1) == json.loads(nested(MAX_JSON_DEPTH))


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"note": "[" * 5000 + "{" * 5000, "list": [[1], [2]]})
    assert not json_too_deep(text)
    assert parse_json_line(text, "f.jsonl", 1)["list"] == [[1], [2]]
    escaped = json.dumps({"note": '\\"[' * 3000 + '"' + "{" * 500})  # escaped quotes: the exact scan
    assert '\\"' in escaped and not json_too_deep(escaped)
    assert json_too_deep(json.dumps({"note": '"\\"'}) + nested(MAX_JSON_DEPTH + 1))


def test_many_shallow_brackets_are_not_deep() -> None:
    wide = json.dumps([[i, {"a": [i]}] for i in range(5000)])  # 15,000 brackets, 4 levels
    assert not json_too_deep(wide)


@pytest.mark.parametrize("text", ["[" * 100_000, '"' + "[" * 300, '{"a": "\\' + "[" * 300, "[" * 300 + '"'])
def test_malformed_deep_text_is_refused_without_recursion(text: str) -> None:
    with pytest.raises(DataFileError) as err:
        parse_json_line(text, "f.jsonl", 7)
    assert err.value.line == 7
    assert "nested deeper than 200" in err.value.problem or "malformed JSON" in err.value.problem


# -- every JSON line reader ----------------------------------------------------------------------------------
def _dataset(fmt: str, **options: Any) -> Callable[[Path], object]:
    return lambda path: list(DATASETS.get(fmt)({"path": str(path), **options}, path.parent).cases)


def _predictions(path: Path) -> object:
    return PredictionsSystem(PredictionsOptions(path=path.name), path.parent)


READERS: dict[str, Callable[[Path], object]] = {
    "medqa": _dataset("medqa"),
    "medmcqa": _dataset("medmcqa"),
    "mmlu": _dataset("mmlu"),
    "jsonl": _dataset("jsonl"),
    "open_xddx": _dataset("open_xddx"),
    "healthbench": _dataset("healthbench"),
    "golden_set": _dataset("golden_set"),
    "production_log": _dataset("production_log", as_of="2024-05-01T12:00:00+00:00"),
    "retrieval_judgments": _dataset("retrieval_judgments"),
    "predictions": _predictions,
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_every_jsonl_reader_names_the_deep_line(tmp_path: Path, name: str) -> None:
    path = tmp_path / "data.jsonl"
    # line 1 blank (skipped), line 2 201 deep: refused by the check, not by the parser's recursion limit
    path.write_text("\n" + nested(MAX_JSON_DEPTH + 1) + "\n")
    with pytest.raises(DataFileError) as err:
        READERS[name](path)
    assert (err.value.path, err.value.line) == (str(path), 2)
    assert err.value.problem == "JSON nested deeper than 200 levels"


def test_whole_json_files_are_depth_checked_too(tmp_path: Path) -> None:
    path = tmp_path / "ori_pqal.json"
    path.write_text('{"1": ' + DEEP + "}")
    with pytest.raises(DataFileError, match=r"ori_pqal\.json: JSON nested deeper than 200 levels"):
        load_json(path, path.read_bytes())
    with pytest.raises(DataFileError, match="nested deeper than 200 levels"):
        parse_lddx(path.read_bytes(), path)


def test_a_deep_model_reply_stays_text() -> None:
    reply = SystemOutput(text="here: " + DEEP)
    assert json_reply(reply, "structured") == reply  # no RecursionError, no structured output


# -- through the CLI -----------------------------------------------------------------------------------------
def test_deep_dataset_line_through_the_cli(tmp_path: Path) -> None:
    suite = write_small_suite(tmp_path, predictions=GOOD_PREDICTIONS)
    with (tmp_path / "q.jsonl").open("a") as handle:
        handle.write(DEEP + "\n")
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "q.jsonl:4: JSON nested deeper than 200 levels")


def test_deep_predictions_line_through_the_cli(tmp_path: Path) -> None:
    suite = write_small_suite(tmp_path, predictions=[*GOOD_PREDICTIONS, DEEP])
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "p.jsonl:4: JSON nested deeper than 200 levels")


def test_an_oversize_line_through_the_cli(tmp_path: Path) -> None:
    suite = write_small_suite(tmp_path, predictions=GOOD_PREDICTIONS)
    big = json.dumps({"question": "x" * MAX_LINE_BYTES})
    with (tmp_path / "q.jsonl").open("a") as handle:
        handle.write(big + "\n")
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "q.jsonl:4: line longer than 64 MiB")


def test_a_line_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "edge.jsonl"
    body = b'"' + b"x" * (MAX_LINE_BYTES - 2) + b'"'
    path.write_bytes(b"1\r\n" + body + b"\r\n")  # exactly the limit, with a CRLF ending
    assert [(n, len(line)) for n, _, line in stream_lines(path)] == [(1, 1), (2, MAX_LINE_BYTES)]


def test_a_line_without_end_is_not_read_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:  # 1 GiB of NUL bytes with no line break (sparse: costs no disk)
        handle.truncate(1 << 30)
    tracemalloc.start()
    try:
        with pytest.raises(DataFileError) as err:
            list(stream_lines(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (err.value.line, err.value.problem) == (1, "line longer than 64 MiB")
    assert peak < 3 * MAX_LINE_BYTES  # one bounded line in memory, never the whole gigabyte
