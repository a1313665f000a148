"""A malformed line near the top of a big JSONL or CSV file is reported before the rest is read: every such
loader streams its file (a 1 GB dataset was read whole, 2.2 GB RSS and 13 s, before its first line was
found malformed). Measured by the bytes this process reads (``rchar`` of /proc/self/io)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clineval.core.errors import DataFileError
from clineval.datasets.registry import DATASETS
from clineval.systems.predictions import PredictionsOptions, PredictionsSystem

IO = Path("/proc/self/io")
SIZE = 40 << 20  # bytes of well-formed lines after the bad one
pytestmark = pytest.mark.skipif(not IO.exists(), reason="needs /proc/self/io (Linux)")

JSON_TAIL = b'{"id": "x", "question": "' + b"q" * 200 + b'"}\n'
CSV_TAIL = b"x," * 7 + b"x\n"


def bytes_read() -> int:
    fields = dict(line.split(": ") for line in IO.read_text().splitlines())
    return int(fields["rchar"])


def big_file(path: Path, head: bytes, tail_line: bytes) -> Path:
    tail = tail_line * (SIZE // len(tail_line))
    path.write_bytes(head + tail)
    return path


def _dataset(fmt: str, **options: Any) -> Callable[[Path], object]:
    DATASETS.get(fmt)  # imported now, not while the reads are counted
    return lambda path: DATASETS.get(fmt)({"path": str(path), **options}, path.parent)


def _predictions(path: Path) -> object:
    return PredictionsSystem(PredictionsOptions(path=path.name), path.parent)


BAD_JSON = b'{"id": "0", "question": "cut short\n'
DDX_HEADER = b"AGE,SEX,PATHOLOGY,DIFFERENTIAL_DIAGNOSIS,EVIDENCES,INITIAL_EVIDENCE\n"
# name -> (loader, file name, the file's first lines, the line number of the first bad one, its problem)
CASES: dict[str, tuple[Callable[[Path], object], str, bytes, int, str]] = {
    "medqa": (_dataset("medqa"), "d.jsonl", BAD_JSON, 1, "malformed JSON"),
    "jsonl": (_dataset("jsonl"), "d.jsonl", BAD_JSON, 1, "malformed JSON"),
    "mmlu jsonl": (_dataset("mmlu"), "anatomy_test.jsonl", BAD_JSON, 1, "malformed JSON"),
    "mmlu csv": (_dataset("mmlu"), "anatomy_test.csv", b"q,a,b\n", 1, "expected 6 cells"),
    "csv": (_dataset("csv"), "d.csv", b"id,question,answer\n1,q,A,extra\n", 2, "more cells than the header"),
    "ddxplus": (_dataset("ddxplus"), "p.csv", DDX_HEADER + b"40,M,,[],[],\n", 2, "empty 'PATHOLOGY'"),
    "golden_set": (_dataset("golden_set"), "g.jsonl", BAD_JSON, 1, "malformed JSON"),
    "production_log": (
        _dataset("production_log", as_of="2024-05-01T12:00:00+00:00"),
        "log.jsonl",
        BAD_JSON,
        1,
        "malformed JSON",
    ),
    "retrieval_judgments": (_dataset("retrieval_judgments"), "j.jsonl", BAD_JSON, 1, "malformed JSON"),
    "open_xddx": (_dataset("open_xddx"), "x.jsonl", BAD_JSON, 1, "malformed JSON"),
    "predictions": (_predictions, "p.jsonl", BAD_JSON, 1, "malformed JSON"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_first_bad_line_stops_the_read(tmp_path: Path, name: str) -> None:
    load, file_name, head, line, problem = CASES[name]
    tail = CSV_TAIL if file_name.endswith(".csv") else JSON_TAIL
    path = big_file(tmp_path / file_name, head, tail)
    before = bytes_read()
    with pytest.raises(DataFileError) as err:
        load(path)
    read = bytes_read() - before
    assert (err.value.path, err.value.line) == (str(path), line)
    assert problem in err.value.problem
    assert read < SIZE // 10, f"{read} of {path.stat().st_size} bytes read before the error"


def test_a_csv_loaded_as_it_streams_keeps_its_hash_and_quoted_line_breaks(tmp_path: Path) -> None:
    import hashlib

    data = b'id,question,answer\n1,"two\nlines",A\r\n2,q2,B\n'
    path = tmp_path / "d.csv"
    path.write_bytes(b"\xef\xbb\xbf" + data)
    loaded = DATASETS.get("csv")({"path": str(path)}, tmp_path)
    assert [c.input.question for c in loaded.cases] == ["two\nlines", "q2"]
    assert loaded.content_hash == "sha256:" + hashlib.sha256(b"\xef\xbb\xbf" + data).hexdigest()


BIG_CELL = "x" * 200_000  # over the csv module's field limit (131,072 characters)


@pytest.mark.parametrize(
    ("fmt", "name", "text"),
    [
        ("csv", "d.csv", f'id,question,answer\n1,"two\nlines",A\n2,{BIG_CELL},B\n'),
        ("mmlu", "anatomy_test.csv", f"q,a,b,c,d,A\nq2,a,b,c,d,B\n{BIG_CELL},a,b,c,d,C\n"),
    ],
)
def test_a_cell_over_the_csv_limit_is_one_line(tmp_path: Path, fmt: str, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DataFileError) as err:
        DATASETS.get(fmt)({"path": str(path)}, tmp_path)
    assert "malformed CSV: field larger than field limit" in err.value.problem
    assert err.value.line == text.count("\n")  # the big cell's line, the last (4 with a 2-line row before)


# `clineval` that writes its peak resident memory (VmHWM, kB) to argv[1] at exit: the process's own figure
# (a child's ru_maxrss also counts the parent's memory at fork, i.e. the test runner's)
PEAK_REPORTING = """
import atexit, sys
def peak(path=sys.argv[1]):
    with open("/proc/self/status") as status:
        hwm = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(path, "w") as out:
        out.write(hwm)
atexit.register(peak)
sys.argv = ["clineval", *sys.argv[2:]]
from clineval.cli.main import main
main()
"""


def test_through_the_cli_a_big_csv_fails_at_its_bad_row_in_little_memory(tmp_path: Path) -> None:
    big_file(tmp_path / "q.csv", b"id,question,answer\n1,q,A,extra\n", CSV_TAIL * 4)  # 160 MB after row 2
    (tmp_path / "p.jsonl").write_text('{"id": "1", "output": "A"}\n')
    (tmp_path / "suite.yaml").write_text(
        "name: big\ntasks:\n  - id: t\n    dataset: {format: csv, path: q.csv}\n"
        "    system: {type: predictions, path: p.jsonl}\n    scorers: [mcq]\n"
    )
    peak = tmp_path / "peak_kb"
    args = ["run", "suite.yaml", "--store", f"sqlite:///{tmp_path}/s.db"]
    result = subprocess.run(
        [sys.executable, "-c", PEAK_REPORTING, str(peak), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == ["error: q.csv:2: row has more cells than the header"]
    assert int(peak.read_text()) < 250 * 1024  # kB: start-up and a row, not the 160 MB file (whole: ~500 MB)
