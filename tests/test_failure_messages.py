"""What a failed system call said reaches the user: the console and report.md show, beside each failure
kind, the first line of its most frequent message (``exception: ValueError: model file ... not found``),
never only ``exception 2``; secrets from the environment are masked in it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clineval.analysis.degradation import assess, failure_lines, first_line
from clineval.core import CaseResult, SystemOutput
from clineval.core.helpers.redaction import env_secrets, exception_message
from clineval.testing import Reply, Rule, Script
from tests.cli_helpers import clineval, write_small_suite
from tests.conftest import StartServer

KEY = "sk-test-Zq8Wm3Nx7Lp2Vb6Rt"
RAISES = f"""
def answer(case):
    if case.id == "2":
        return "A"
    raise ValueError("model file /models/x.bin not found (key {KEY})\\nTraceback detail on line two")
"""


def _callable_suite(folder: Path) -> Path:
    suite = write_small_suite(folder, predictions=[])
    (folder / "user_sys.py").write_text(RAISES, encoding="utf-8")
    text = suite.read_text().replace(
        "      type: predictions\n      path: p.jsonl\n",
        '      type: callable\n      target: "user_sys:answer"\n',
    )
    suite.write_text(text)
    return suite


def test_a_callable_exception_is_shown_in_console_and_report_with_secrets_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _callable_suite(tmp_path)
    monkeypatch.setenv("MY_MODEL_API_KEY", KEY)  # the subprocess inherits it
    store = f"sqlite:///{tmp_path}/s.db"
    done = clineval("run", str(suite), "--store", store, "--out", "o", "--no-cache", cwd=tmp_path)
    assert done.returncode == 3, done.stderr  # 2 of 3 cases failed: degraded
    line = "exception: ValueError: model file /models/x.bin not found (key ***)"
    assert "task t: failures: system 2/3 (exception 2)\n  " + line in done.stderr
    assert "Traceback detail" not in done.stderr  # the first line only
    report_md = (tmp_path / "o" / "report.md").read_text()
    assert f"| t | exception | 2 | {line.removeprefix('exception: ')} |" in report_md
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    (system,) = report["provenance"]["degradation"]["components"]
    assert system["messages"] == {"exception": line.removeprefix("exception: ")}
    for name in ("report.md", "report.json", "report.html", "results.jsonl"):
        text = (tmp_path / "o" / name).read_text()
        assert KEY not in text and KEY[6:14] not in text, name
    # `clineval report` of the stored run shows the same row (read from the stored provenance)
    again = clineval("report", _run_id(done.stderr), "--out", "again", "--store", store, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert line.removeprefix("exception: ") in (tmp_path / "again" / "report.md").read_text()


def _run_id(stderr: str) -> str:
    return next(w.split()[1] for w in stderr.splitlines() if w.startswith("run "))


def test_an_http_system_error_message_is_shown(tmp_path: Path, start_server: StartServer) -> None:
    refuse = Reply(status=400, json_body={"error": {"message": "context length 9000 exceeds 8192"}})
    server = start_server(
        Script(latency_s=0.0, rules=[Rule(match=f"Q{i}?", replies=[refuse]) for i in (0, 1)])
    )
    suite = write_small_suite(tmp_path, predictions=[])
    suite.write_text(
        suite.read_text().replace(
            "      type: predictions\n      path: p.jsonl\n",
            f"      type: http\n      url: {server.url}/predict\n",
        )
    )
    store = f"sqlite:///{tmp_path}/s.db"
    done = clineval("run", str(suite), "--store", store, "--out", "o", "--no-cache", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    said = "HTTP 400: context length 9000 exceeds 8192"
    assert f"task t: failures: system 2/3 (http_400 2)\n  http_400: {said}" in done.stderr
    assert f"| t | http_400 | 2 | {said} |" in (tmp_path / "o" / "report.md").read_text()


def _failed(case_id: str, message: str, kind: str = "exception") -> CaseResult:
    return CaseResult(task_id="t", case_id=case_id, output=SystemOutput.failure(kind, message), scores={})


def test_the_most_frequent_message_of_each_kind_is_kept() -> None:
    results = [
        _failed("1", "KeyError: 'answer'"),
        _failed("2", "KeyError: 'answer'"),
        _failed("3", "ValueError: empty\nmore"),
        _failed("4", "HTTP 500: overloaded", kind="http_500"),
        CaseResult(task_id="t", case_id="5", output=SystemOutput(text="A"), scores={}),
    ]
    found = assess(results, 0.2)
    (system,) = found["components"]
    assert system["kinds"] == {"exception": 3, "http_500": 1}
    assert system["messages"] == {"exception": "KeyError: 'answer'", "http_500": "HTTP 500: overloaded"}
    assert failure_lines({"degradation": found}) == [
        "task t: failures: system 4/5 (exception 3, http_500 1)",
        "  exception: KeyError: 'answer'",
        "  http_500: HTTP 500: overloaded",
    ]


def test_first_line_and_secret_masking() -> None:
    assert first_line("\n  ValueError: x  \nsecond") == "ValueError: x"
    assert first_line("E: " + "y" * 300, limit=20) == "E: " + "y" * 16 + "…"
    env = {
        "OPENAI_API_KEY": KEY,
        "DB_PASSWORD": "hunter2hunter2",
        "HOME": "/root/abcdefgh",
        "MY_TOKEN": "short",
    }
    assert env_secrets(env) == [KEY, "hunter2hunter2"]  # longest first; HOME is no secret, MY_TOKEN too short
    message = exception_message(RuntimeError(f"bad key {KEY} for pw hunter2hunter2 at /root/abcdefgh"), env)
    assert message == "RuntimeError: bad key *** for pw *** at /root/abcdefgh"
    assert exception_message(KeyError(), env) == "KeyError"
