"""The predictions system keeps an index, not the predictions (issue 16): what ``call`` reads again from
the file must be exactly what ``read_predictions`` (everything in memory) gives, and a file changed under
the run must stop it, never replay a different prediction."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from clineval.core import Case, CaseInput, DataFileError, SystemOutput
from clineval.core.helpers.id_index import CompactIds, HashIndex
from clineval.systems import predictions as predictions_module
from clineval.systems.predictions import PredictionsOptions, PredictionsSystem, read_predictions


def case(case_id: str) -> Case:
    return Case(id=case_id, input=CaseInput(question="Which drug?", options={"A": "Aspirin", "B": "Heparin"}))


def system(path: Path, **options: object) -> PredictionsSystem:
    return PredictionsSystem(PredictionsOptions.model_validate({"path": path.name, **options}), path.parent)


def call(replay: PredictionsSystem, case_id: str) -> SystemOutput:
    return asyncio.run(replay.call(case(case_id)))


def edit_in_place(path: Path, old: bytes, new: bytes) -> None:
    """Replace bytes of the same length and put the modification time back: only the content differs."""
    assert len(old) == len(new)
    stat = path.stat()
    data = path.read_bytes()
    assert data.count(old) == 1
    path.write_bytes(data.replace(old, new))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size


TRICKY = [
    '{"id": "a", "output": "plain text"}',
    "",
    '{"id": "b", "output": {"answer": "B", "rationale": "line\u2028separator and \u2029 paragraph"}}',
    "   ",
    '{"id": "c", "output": "free text", "latency_s": 1.5, "usage": {"prompt_tokens": 10}}',
    '{"id": "d", "error": {"kind": "http_500", "message": "upstream down"}}',
    '{"id": "e", "output": "caf\u00e9 \u2014 \U0001f489"}',
]


@pytest.fixture
def tricky(tmp_path: Path) -> Path:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(TRICKY).encode("utf-8") + b"\r\n\r\n")
    return path


def test_each_call_reads_what_read_predictions_gives(tricky: Path) -> None:
    expected = read_predictions(tricky)
    replay = system(tricky)
    assert len(replay) == len(expected) == 5
    for key, output in expected.items():
        assert call(replay, key).model_dump() == output.model_dump()
    assert "\u2028" in (call(replay, "b").model_dump_json())
    assert replay.spec.content_hash == hashlib.sha256(tricky.read_bytes()).hexdigest()
    assert replay.unused_ids() == []
    asyncio.run(replay.close())
    assert call(replay, "a").text == "plain text"  # opened again after close()
    asyncio.run(replay.close())


def test_missing_and_unused_ids(tricky: Path) -> None:
    replay = system(tricky)
    missing = call(replay, "zz")
    assert missing.error is not None and missing.error.kind == "missing_prediction"
    assert missing.error.message == "no prediction with id zz in p.jsonl"
    call(replay, "c")
    assert replay.unused_ids() == ["a", "b", "d", "e"]


def test_numeric_ids(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "0007", "output": "seven"}\n{"id": 12, "output": "twelve"}\n', encoding="utf-8")
    replay = system(path, numeric_ids=True)
    assert call(replay, "7").text == "seven" and call(replay, "0012").text == "twelve"
    assert replay.unused_ids() == []
    as_text = system(path)
    assert call(as_text, "0007").text == "seven" and call(as_text, "12").text == "twelve"
    missing = call(as_text, "7")
    assert missing.error is not None and missing.error.kind == "missing_prediction"


def test_check_cases_takes_any_iterable_once(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "0007", "output": "seven"}\n', encoding="utf-8")
    seen: list[str] = []

    def cases(*ids: str) -> Iterator[Case]:
        for case_id in ids:
            seen.append(case_id)
            yield case(case_id)

    system(path, numeric_ids=True).check_cases(cases("1", "7", "8"))
    assert seen == ["1", "7"]  # stops at the first match
    system(path).check_cases(cases())
    with pytest.raises(DataFileError, match=r"prediction id '0007', case id '7'.*numeric_ids: true"):
        system(path).check_cases(cases("7", "8"))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="holds no predictions"):
        system(empty).check_cases(cases("7"))


@pytest.mark.parametrize(
    ("content", "line", "problem"),
    [
        (b'{"id": "a", "output": "A"}\n\n{"id": "b", "output": \n', 3, "malformed JSON"),
        (
            b'{"id": 7, "output": "A"}\n{"id": "x", "output": "B"}\n{"id": "7", "output": "C"}\n',
            3,
            "duplicate id '7' (first on line 1, again on line 3)",
        ),
        (b'{"id": "a", "output": "A"}\r\n{"id": "b", "output": "\xff"}\r\n', 2, "not UTF-8 text"),
        (b'\xef\xbb\xbf{"id": "a", "output": "A"}\n{"id": "b"}\n', 2, "missing 'output'"),
    ],
)
def test_bad_lines_name_their_line(tmp_path: Path, content: bytes, line: int, problem: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(content)
    with pytest.raises(DataFileError) as err:
        system(path)
    assert err.value.line == line and problem in str(err.value)
    if b"\xff" not in content:  # the whole-file reader gives the same error
        with pytest.raises(DataFileError) as same:
            read_predictions(path)
        assert str(same.value) == str(err.value)


def test_missing_file_is_the_same_error(tmp_path: Path) -> None:
    with pytest.raises(DataFileError) as err:
        system(tmp_path / "nope.jsonl")
    with pytest.raises(DataFileError) as same:
        read_predictions(tmp_path / "nope.jsonl")
    assert str(err.value) == str(same.value)
    assert "predictions file not found" in str(err.value) and "relative to the suite file" in str(err.value)


LINES = b'{"id": "a", "output": "AAAA"}\n{"id": "b", "output": "BBBB"}\n'


@pytest.mark.parametrize("called_before", [False, True])
def test_a_line_turned_garbage_is_an_error(tmp_path: Path, called_before: bool) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(LINES)
    replay = system(path)
    if called_before:  # the handle is already open
        assert call(replay, "b").text == "BBBB"
    edit_in_place(path, b'"id": "b", "output"', b"#garbage#garbage###")
    with pytest.raises(DataFileError, match=r"malformed JSON.*changed after it was read") as err:
        call(replay, "b")
    assert err.value.path == str(path) and err.value.line == 2
    asyncio.run(replay.close())


def test_swapped_ids_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(LINES)
    replay = system(path)
    edit_in_place(path, b'"a", "output": "AAAA"', b'"b", "output": "AAAA"')
    with pytest.raises(DataFileError, match="holds id 'b', not 'a'") as err:
        call(replay, "a")
    assert err.value.line == 1


def test_a_rewritten_file_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file's size, mtime and inode are checked at most once a second (SIGNATURE_EVERY_S): here on
    every read."""
    monkeypatch.setattr(predictions_module, "SIGNATURE_EVERY_S", 0.0)
    path = tmp_path / "p.jsonl"
    path.write_bytes(LINES)
    replay = system(path)
    assert call(replay, "a").text == "AAAA"
    path.write_bytes(LINES.replace(b"BBBB", b"CCCC"))  # still valid, same ids: only the stat tells
    os.utime(path, ns=(0, 10**18))
    with pytest.raises(DataFileError, match="changed after it was read") as err:
        call(replay, "b")
    assert err.value.line == 2
    asyncio.run(replay.close())
    replaced = tmp_path / "new.jsonl"
    replaced.write_bytes(LINES.replace(b"AAAA", b"ZZZZ"))
    later = system(path)
    replaced.replace(path)  # replaced before the first call: another inode
    with pytest.raises(DataFileError, match="changed after it was read"):
        call(later, "a")


def test_only_the_index_is_kept(tricky: Path) -> None:
    replay = system(tricky)
    assert not [value for value in vars(replay).values() if isinstance(value, SystemOutput | dict | list)]
    assert isinstance(replay._keys, CompactIds) and isinstance(replay._index, HashIndex)
    assert list(replay._numbers) == [1, 3, 5, 6, 7]
    assert [replay._index.get(key) for key in replay._keys] == list(range(len(replay)))
    with tricky.open("rb") as handle:
        for position in range(len(replay)):
            handle.seek(replay._offsets[position])
            assert handle.read(1) == b"{"
    assert json.loads(TRICKY[0])["id"] == replay._keys[0]
