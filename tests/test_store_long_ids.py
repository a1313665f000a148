"""Task and case ids of any length, on SQLite and PostgreSQL (revision 0007: TEXT ids, a bounded unique key,
clineval.store.keys.case_key); a case the database refuses is named with its column.

A suite whose task id and case ids are 1,000 characters (one case id 5,000 random characters: a PostgreSQL
btree entry holds at most ~2.7 kB, so an index over the ids themselves would refuse it) is run through the
real CLI, stopped part way by a failing store, resumed, read back and reported: every case exactly once.
"""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.exc import DataError

from clineval.store import ResultStore, make_engine
from clineval.store import commits as commits_module
from clineval.store.keys import CASE_KEY_LENGTH, case_key
from clineval.store.migrate import _config
from tests.cli_helpers import clineval
from tests.test_store import info, result
from tests.test_store_errors import run_printed_command, with_fault

N = 24
RNG = random.Random(1000)


def _random_id(n: int) -> str:
    return "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(n))


TASK = "t-" + _random_id(998)
IDS = [f"{i:02d}-" + _random_id(4997 if i == 5 else 997) for i in range(N)]
GOLD = "ABCD"


def write_long_id_suite(folder: Path) -> Path:
    rows, predictions = [], []
    for i, case_id in enumerate(IDS):
        options = {"A": "alpha", "B": "beta", "C": "gamma", "D": "delta"}
        row = {
            "id": case_id,
            "question": f"Q{i}?",
            "options": options,
            "answer_idx": GOLD[i % 4],
            "answer": "x",
        }
        rows.append(json.dumps(row))
        predictions.append(json.dumps({"id": case_id, "output": f"answer: {'A' if i % 3 else 'B'}"}))
    (folder / "q.jsonl").write_text("\n".join(rows) + "\n")
    (folder / "p.jsonl").write_text("\n".join(predictions) + "\n")
    suite = folder / "suite.yaml"
    suite.write_text(
        f"name: long-ids\ntasks:\n  - id: {TASK}\n    dataset: {{format: medqa, path: q.jsonl}}\n"
        "    system: {type: predictions, path: p.jsonl}\n    scorers: [mcq]\n"
    )
    return suite


def test_thousand_character_ids_run_resume_read_back_and_report(store_url: str, tmp_path: Path) -> None:
    assert len(TASK) == 1000 and {len(i) for i in IDS} == {1000, 5000}
    write_long_id_suite(tmp_path)
    failed = with_fault("store_full", 7, "run", "suite.yaml", "--store", store_url, cwd=tmp_path)
    assert failed.returncode == 2, failed.stderr
    line = failed.stderr.strip().splitlines()[-1]
    assert "7 finished cases are stored" in line, line
    resumed = run_printed_command(line, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    run_id = re.search(r"--resume ([0-9a-f]{32})", line)
    assert run_id is not None

    with ResultStore(store_url) as store:
        run = store.load_run(run_id[1])
        assert run.info.status == "finished"
        assert sorted(r.case_id for r in run.results) == sorted(IDS)  # each case once, whole
        assert {r.task_id for r in run.results} == {TASK}
        assert store.finished_keys(run.run_id) == {(TASK, i) for i in IDS}
        looked_up = store.results_for(run.run_id, [(TASK, IDS[5]), (TASK, IDS[0]), (TASK, "absent")])
        assert sorted(looked_up) == sorted([(TASK, IDS[5]), (TASK, IDS[0])])
        assert looked_up[(TASK, IDS[5])].case_id == IDS[5]
    # right: i % 3 == 0 answers B, right when gold is B (i % 4 == 1); else A, right when i % 4 == 0
    right = sum(1 for i in range(N) if GOLD[i % 4] == ("B" if i % 3 == 0 else "A"))

    report = clineval("report", run_id[1], "--out", "out", "--store", store_url, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    scores = json.loads((tmp_path / "out" / "report.json").read_text())["task_scores"][TASK]
    assert scores["n"] == N and scores["accuracy"] == pytest.approx(right / N)
    lines = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert sorted(x["case_id"] for x in lines) == sorted(IDS)


def test_a_stored_case_is_not_written_twice_with_a_long_id(store_url: str) -> None:
    long_id = _random_id(5000)
    with ResultStore(store_url) as store:
        store.create_run(info("run-1"))
        for _ in range(2):  # a second writer (a resume) puts the same case again
            with store.writer("run-1") as writer:
                writer.put(result(long_id, task_id=TASK))
                writer.put(result(long_id, task_id=TASK, value=0.0))
        assert store.finished_keys("run-1") == {(TASK, long_id)}
        assert store.load_results("run-1")[0].scores["mcq"].value == 1.0  # the first one stored wins


# literal and hashed keys, multi-byte characters; at most 255 characters (VARCHAR(255) before 0007)
OLD_IDS = ("a", "é/ü", "c" * 200, "é" * 250, "\U0001d538" * 120)


def test_case_keys_are_ordered_bounded_and_distinct() -> None:
    assert case_key("medqa", "12") == "5:medqa:12"  # short: the ids, in their order
    assert case_key("medqa", "10") < case_key("medqa", "11") < case_key("medqa", "12")
    long_key = case_key("medqa", "x" * 5000)
    assert len(long_key) == CASE_KEY_LENGTH == 215 and long_key.startswith("5:medqa:xxx")
    assert case_key("medqa", "x" * 5000) != case_key("medqa", "x" * 5001)  # told apart by the digest
    assert case_key("a:b", "c") != case_key("a", "b:c")  # the task's length is part of the key
    assert len({case_key(TASK, i) for i in IDS}) == N


def test_the_migration_fills_the_key_of_stored_results(store_url: str) -> None:
    """A store at revision 0006 with results: 0007 fills case_key as Python computes it (the SQL of the
    PostgreSQL migration counts characters, not bytes), and the unique key holds after it."""
    engine = make_engine(store_url)
    with engine.begin() as conn:
        command.upgrade(_config(conn), "0006")
        conn.execute(
            text(
                "INSERT INTO runs (run_id, suite_name, suite_spec, suite_hash, status, created_at,"
                " provenance) VALUES ('old', 's', '{}', 'h', 'running', CURRENT_TIMESTAMP, '{}')"
            )
        )
        for case_id in OLD_IDS:
            conn.execute(
                text(
                    "INSERT INTO case_results (run_id, task_id, case_id, status, result, created_at)"
                    " VALUES ('old', 'medqa', :c, 'ok', :r, CURRENT_TIMESTAMP)"
                ),
                {"c": case_id, "r": result(case_id).model_dump_json()},
            )
    engine.dispose()
    with ResultStore(store_url) as store:
        with store.engine.connect() as conn:
            rows = conn.execute(text("SELECT case_id, case_key FROM case_results")).all()
        assert dict(rows) == {c: case_key("medqa", c) for c in OLD_IDS}
        with store.writer("old") as writer:  # resumed: the stored cases are not stored again
            for case_id in (*OLD_IDS, "new"):
                writer.put(result(case_id))
        assert store.count_results("old") == len(OLD_IDS) + 1


def test_a_refused_case_is_named_with_its_column(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    real = commits_module._commit

    def refusing(engine: Any, insert: Any, rows: list[dict[str, Any]]) -> None:
        if any(row["case_id"] == "bad\ncase" for row in rows):
            raise DataError("INSERT ...", {}, psycopg.errors.StringDataRightTruncation("value too long"))
        real(engine, insert, rows)

    monkeypatch.setattr(commits_module, "_commit", refusing)
    with ResultStore(store_url) as store:
        store.create_run(info("run-1"))
        writer = store.writer("run-1")
        for case_id in ("ok-1", "ok-2", "bad\ncase", "ok-3"):
            writer.put(result(case_id))
        with pytest.raises(Exception, match=r"^cannot store case medqa/bad\\x0acase: value too long$"):
            writer.close()
        # the rows before the refused one are stored (committed one by one to find it), none after it
        assert store.finished_keys("run-1") == {("medqa", "ok-1"), ("medqa", "ok-2")}


def test_a_nul_in_a_case_id_names_the_case_and_column_on_postgresql(store_url: str, tmp_path: Path) -> None:
    if not store_url.startswith("postgresql"):
        pytest.skip("SQLite text holds a NUL")
    rows, predictions = [], []
    for i in range(12):
        case_id = f"case-{i}" if i != 7 else "case-7\u0000" + "z" * 60
        rows.append(
            json.dumps(
                {"id": case_id, "question": f"Q{i}?", "options": {"A": "a", "B": "b"}, "answer_idx": "A"}
            )
        )
        predictions.append(json.dumps({"id": case_id, "output": "answer: A"}))
    (tmp_path / "q.jsonl").write_text("\n".join(rows) + "\n")
    (tmp_path / "p.jsonl").write_text("\n".join(predictions) + "\n")
    (tmp_path / "suite.yaml").write_text(
        "name: nul\ntasks:\n  - id: t\n    dataset: {format: medqa, path: q.jsonl}\n"
        "    system: {type: predictions, path: p.jsonl}\n    scorers: [mcq]\n"
    )
    done = clineval("run", "suite.yaml", "--no-cache", "--store", store_url, cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    expected = (
        "cannot store case t/case-7\\x00zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz… (67 characters): column case_id:"
    )
    assert expected in done.stderr, done.stderr
