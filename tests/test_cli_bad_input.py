"""Bad input: one line naming the file and line, exit code 2, no traceback (one test per kind)."""

from __future__ import annotations

from pathlib import Path

from tests.cli_helpers import clineval, write_small_suite

GOOD_PREDICTIONS = [
    '{"id": "0", "output": "Answer: A"}',
    '{"id": "1", "output": "B"}',
    '{"id": "2", "output": "the answer is C"}',
]


def assert_one_line_error(result, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode == 2, result.stderr + result.stdout
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert expected in lines[0], lines[0]


def test_malformed_jsonl_line(tmp_path: Path) -> None:
    bad = [GOOD_PREDICTIONS[0], '{"id": "1", "output": "B"', GOOD_PREDICTIONS[2]]
    suite = write_small_suite(tmp_path, predictions=bad)
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "p.jsonl:2: malformed JSON")


def test_missing_file(tmp_path: Path) -> None:
    suite = write_small_suite(tmp_path, predictions=GOOD_PREDICTIONS)
    (tmp_path / "q.jsonl").unlink()
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "q.jsonl: file not found")


def test_missing_suite_file(tmp_path: Path) -> None:
    result = clineval("run", str(tmp_path / "nope.yaml"), cwd=tmp_path)
    assert_one_line_error(result, "nope.yaml: suite file not found")


def test_unknown_scorer(tmp_path: Path) -> None:
    suite = write_small_suite(tmp_path, predictions=GOOD_PREDICTIONS, scorers="[mcqq]")
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "suite.yaml:10: unknown scorer 'mcqq' — did you mean 'mcq'?")


def test_suite_key_typo(tmp_path: Path) -> None:
    suite = write_small_suite(
        tmp_path, predictions=GOOD_PREDICTIONS, suite_extra="    stratfy: [meta_info]\n"
    )
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "suite.yaml:11: unknown key 'stratfy'")
    assert "did you mean 'stratify'?" in result.stderr


def test_unknown_system_option(tmp_path: Path) -> None:
    suite = write_small_suite(tmp_path, predictions=GOOD_PREDICTIONS)
    suite.write_text(
        suite.read_text().replace("      path: p.jsonl\n", "      path: p.jsonl\n      ouput_field: x\n")
    )
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "suite.yaml:10: unknown key 'ouput_field'")


def test_duplicate_prediction_ids(tmp_path: Path) -> None:
    dup = [*GOOD_PREDICTIONS, '{"id": "1", "output": "C"}']
    suite = write_small_suite(tmp_path, predictions=dup)
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "p.jsonl:4: duplicate id '1'")
    assert "line 2" in result.stderr


def test_bad_stratify_key(tmp_path: Path) -> None:
    suite = write_small_suite(
        tmp_path, predictions=GOOD_PREDICTIONS, suite_extra="    stratify: [meta_inf]\n"
    )
    result = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert_one_line_error(result, "suite.yaml:11: stratify key 'meta_inf' is in no case's metadata")


def test_invalid_yaml(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("name: x\ntasks:\n  - id: [unclosed\n")
    result = clineval("run", str(tmp_path / "s.yaml"), cwd=tmp_path)
    assert_one_line_error(result, "s.yaml:")
    assert "invalid YAML" in result.stderr


def test_unknown_run_id(tmp_path: Path) -> None:
    # an existing (empty) store: a store path that does not exist is its own error (test_store_errors)
    assert clineval("db", "upgrade", "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path).returncode == 0
    result = clineval(
        "report",
        "doesnotexist",
        "--out",
        str(tmp_path / "o"),
        "--store",
        f"sqlite:///{tmp_path}/s.db",
        cwd=tmp_path,
    )
    assert_one_line_error(result, "no run 'doesnotexist'")
