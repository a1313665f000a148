"""``clineval judge qualify`` / ``clineval judge list`` as a user runs them: exit 0 qualified, 1 not
qualified, 2 bad input (one line), the table printed, qualification.json / .md written, the record listed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import clineval
from tests.conftest import StartServer
from tests.judge_qualification_live import script, write_labels, write_suite


def test_qualify_exit_codes_table_files_and_list(tmp_path: Path, start_server: StartServer) -> None:
    store = f"sqlite:///{tmp_path}/s.db"
    labels = write_labels(tmp_path / "labels.jsonl")
    good = write_suite(tmp_path, start_server(script("oracle")).base_url)
    args = ["judge", "qualify", str(good), "--task", "t", "--labels", str(labels), "--store", store]
    ok = clineval(*args, "--out", str(tmp_path / "q"), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "| coherence | 30/30 | 1.000 [" in ok.stdout and ": QUALIFIED" in ok.stdout
    doc = json.loads((tmp_path / "q" / "qualification.json").read_text())
    assert doc["record"]["qualified"] is True and doc["qualification"]["groups"][0]["group"] == "coherence"
    assert "| coherence |" in (tmp_path / "q" / "qualification.md").read_text()

    (tmp_path / "b").mkdir()
    biased = write_suite(tmp_path / "b", start_server(script("position")).base_url)
    bad = clineval(
        "judge",
        "qualify",
        str(biased),
        "--task",
        "t",
        "--labels",
        str(labels),
        "--store",
        store,
        cwd=tmp_path,
    )
    assert bad.returncode == 1, bad.stderr
    assert "NOT QUALIFIED: coherence: order sensitivity" in " ".join(bad.stdout.split())

    listed = clineval("judge", "list", "--store", store, cwd=tmp_path)
    assert listed.returncode == 0 and listed.stdout.count("judge_dimension_v1@") == 2
    # one record failed, one passed: a table on a wide console, a block per record on a narrow one
    assert listed.stdout.count("NOT qualified") == 1 and listed.stdout.count("qualified") == 2


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, start_server: StartServer) -> None:
    store = f"sqlite:///{tmp_path}/s.db"
    suite = write_suite(tmp_path, start_server(script("oracle")).base_url)
    flat = write_labels(tmp_path / "flat.jsonl", flat=True)
    undefined = clineval(
        "judge", "qualify", str(suite), "--task", "t", "--labels", str(flat), "--store", store, cwd=tmp_path
    )
    assert undefined.returncode == 2 and len(undefined.stderr.strip().splitlines()) == 1
    assert (
        "every one of the 30 clinician labels is 4" in undefined.stderr
        and "kappa is undefined" in undefined.stderr
    )
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        '{"case_id": "x", "dimension": "coherence", "grade": 4}\n{"case_id": "y", "grade": 9}\n'
    )
    line = clineval(
        "judge", "qualify", str(suite), "--task", "t", "--labels", str(broken), "--store", store, cwd=tmp_path
    )
    assert line.returncode == 2 and f"{broken}:2:" in line.stderr
    missing = clineval(
        "judge",
        "qualify",
        str(suite),
        "--task",
        "nope",
        "--labels",
        str(flat),
        "--store",
        store,
        cwd=tmp_path,
    )
    assert missing.returncode == 2 and "no task 'nope'" in missing.stderr
    one_sample = clineval(
        "judge",
        "qualify",
        str(suite),
        "--task",
        "t",
        "--labels",
        str(flat),
        "--samples",
        "1",
        "--store",
        store,
        cwd=tmp_path,
    )
    assert one_sample.returncode == 2 and "at least 2 samples" in one_sample.stderr
