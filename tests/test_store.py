"""ResultStore and ResultWriter on a temporary SQLite file and a fresh PostgreSQL schema (fixtures built by
hand, no other modules)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from clineval.core import (
    CaseResult,
    ComponentSpec,
    RunInfo,
    RunNotFoundError,
    Score,
    SuiteSpec,
    SystemOutput,
    TaskAggregate,
    TaskSpec,
)
from clineval.store import ResultStore, display_url
from clineval.store.tables import dumps, loads

SUITE = SuiteSpec(
    name="medqa-demo",
    source="suites/demo.yaml",
    tasks=[
        TaskSpec(
            id="medqa",
            dataset=ComponentSpec(type="medqa", args={"path": "d.jsonl"}, content_hash="ab"),
            system=ComponentSpec(type="predictions", args={"path": "p.jsonl"}),
            scorers=[ComponentSpec(type="mcq")],
            stratify=["meta_info"],
        )
    ],
)
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def info(run_id: str, *, minutes: int = 0, status: str = "running") -> RunInfo:
    return RunInfo(
        run_id=run_id,
        suite=SUITE,
        status=status,
        created_at=T0 + timedelta(minutes=minutes),
        provenance={"versions": {"clineval": "0.1.0"}, "dataset_hash": "ab"},
    )


def result(
    case_id: str,
    *,
    value: float = 1.0,
    label: str = "correct",
    task_id: str = "medqa",
    text_out: str = "Answer: B",
    failed: bool = False,
) -> CaseResult:
    if failed:
        output = SystemOutput.failure("timeout", "no answer within 30 s", attempts=3, latency_s=30.0)
        scores = {"mcq": Score(value=math.nan, label="failed")}
    else:
        output = SystemOutput(text=text_out, latency_s=0.25, stage_latency_s={"call": 0.2})
        breakdown = {"predicted": "B", "confidence": math.inf}
        scores = {"mcq": Score(value=value, label=label, breakdown=breakdown)}
    return CaseResult(
        task_id=task_id,
        case_id=case_id,
        output=output,
        scores=scores,
        metadata={"meta_info": "step1"},
        reference="B",
    )


def same(a: list[CaseResult], b: list[CaseResult]) -> bool:
    """Equality that treats NaN as equal to NaN (pydantic's == does not)."""
    return [dumps(r.model_dump(mode="json")) for r in a] == [dumps(r.model_dump(mode="json")) for r in b]


@pytest.fixture
def db_url(store_url: str) -> str:
    return store_url  # every test below runs on SQLite and on PostgreSQL (tests/backends.py)


@pytest.fixture
def store(db_url: str) -> Any:
    with ResultStore(db_url) as opened:
        yield opened


def test_creates_parent_directories_and_sets_pragmas(store: ResultStore, db_url: str) -> None:
    if not db_url.startswith("sqlite"):
        pytest.skip("SQLite only")
    assert Path(db_url.removeprefix("sqlite:///")).exists()
    with store.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() >= 1000
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1


def test_round_trip_with_duplicates_nan_and_failures(store: ResultStore) -> None:
    store.create_run(info("run-1"))
    written = [
        result("c1"),
        result("c2", value=0.0, label="incorrect"),
        result("c3", failed=True),
        result("c4", value=math.nan, label="unparsed", text_out="<script>alert(1)</script>'); DROP"),
    ]
    with store.writer("run-1") as writer:
        for item in written:
            writer.put(item)
        writer.put(result("c1", value=0.0, label="incorrect"))  # same key: ignored, first one kept
    with store.writer("run-1") as writer:  # a resumed run re-sending a stored case
        writer.put(result("c2", value=1.0))

    assert store.finished_keys("run-1") == {("medqa", f"c{i}") for i in range(1, 5)}
    loaded = store.load_results("run-1")
    assert same(loaded, written)
    assert math.isnan(loaded[2].scores["mcq"].value) and loaded[2].failed
    # typed floats keep NaN/inf; pydantic's JSON mode writes non-finite floats in Any-typed dicts as null
    assert loaded[0].scores["mcq"].breakdown["confidence"] is None
    assert store.case_counts(["run-1", "other"]) == {"run-1": (4, 1)}

    aggregates = {
        "medqa": TaskAggregate(
            scores={"accuracy": 0.5, "accuracy_ci": [0.1, 0.9], "macro_f1": math.nan, "n": 4, "n_failed": 1},
            strata={"meta_info": {"step1": {"accuracy": 0.5, "n": 4}}},
        )
    }
    store.finish_run("run-1", aggregates, overall={"combined": 0.5}, status="partial")
    store.update_provenance("run-1", {"timings": {"medqa": {"seconds": 1.5}}})
    run = store.load_run("run-1")
    assert run.info.status == "partial"
    assert run.info.suite == SUITE
    assert run.info.provenance == {**info("run-1").provenance, "timings": {"medqa": {"seconds": 1.5}}}
    assert run.info.created_at == T0 and run.info.created_at.tzinfo is not None
    assert run.info.finished_at is not None and run.info.finished_at.utcoffset() == timedelta(0)
    assert same(run.results, written)
    assert run.overall == {"combined": 0.5}
    assert run.aggregates["medqa"].strata == aggregates["medqa"].strata
    stored = run.aggregates["medqa"].scores
    assert math.isnan(stored.pop("macro_f1"))  # type: ignore[arg-type]
    assert stored == {"accuracy": 0.5, "accuracy_ci": [0.1, 0.9], "n": 4, "n_failed": 1}


def test_nan_is_stored_as_valid_json(store: ResultStore) -> None:
    store.create_run(info("run-1"))
    with store.writer("run-1") as writer:
        writer.put(result("c1", failed=True))
    with store.engine.connect() as conn:
        raw = conn.execute(text("SELECT CAST(result AS TEXT) FROM case_results")).scalar_one()
    json.loads(raw, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    for value in (math.inf, -math.inf, {"a": [1.5, {"b": -math.inf}]}, "NaN", {"$float": 1}):
        assert dumps(loads(dumps(value))) == dumps(value)
    assert math.isnan(loads(dumps({"v": math.nan}))["v"])


def test_lookup_by_prefix_and_errors(store: ResultStore) -> None:
    for i, run_id in enumerate(["abc123", "abc456", "xyz789", "a_c999"]):
        store.create_run(info(run_id, minutes=i))
    assert store.get_run("xyz").run_id == "xyz789"
    assert store.get_run("abc123").run_id == "abc123"
    assert store.resolve_run_id("a_") == "a_c999"  # '_' is literal, not a LIKE wildcard
    with pytest.raises(RunNotFoundError, match=r"ambiguous: it matches abc123, abc456"):
        store.get_run("abc")
    with pytest.raises(RunNotFoundError) as caught:
        store.get_run("%")
    assert str(caught.value) == f"no run '%' in {store.url} — list runs with `clineval runs`"
    with pytest.raises(RunNotFoundError, match="no run 'nope'"):
        store.load_run("nope")
    with pytest.raises(RunNotFoundError):
        store.writer("nope")
    with pytest.raises(RunNotFoundError):
        store.finish_run("nope", {}, {})
    with pytest.raises(RunNotFoundError):
        store.update_provenance("nope", {"timings": {}})
    with pytest.raises(ValueError, match="already exists"):
        store.create_run(info("abc123"))
    with pytest.raises(ValueError, match="finish status"):
        store.finish_run("abc123", {}, {}, status="running")


def test_error_messages_hide_passwords() -> None:
    shown = display_url("postgresql+psycopg://eval:s3cret@db.example/clineval")
    assert "s3cret" not in shown and "eval:***@db.example" in shown


def test_list_runs_newest_first_with_counts(store: ResultStore) -> None:
    for i in range(5):
        store.create_run(info(f"run-{i}", minutes=i))
    with store.writer("run-3") as writer:
        writer.put(result("c1"))
        writer.put(result("c2", failed=True))
    assert [r.run_id for r in store.list_runs(limit=3)] == ["run-4", "run-3", "run-2"]
    summaries = store.list_runs_with_counts()
    assert [(s.info.run_id, s.n_cases, s.n_failed) for s in summaries[:3]] == [
        ("run-4", 0, 0),
        ("run-3", 2, 1),
        ("run-2", 0, 0),
    ]


def test_writer_thread_error_reaches_the_caller(store: ResultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.create_run(info("run-1"))
    writer = store.writer("run-1")

    def broken(batch: list[CaseResult]) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(writer, "_insert", broken)
    writer.put(result("c1"))
    with pytest.raises(OSError, match="disk full"):
        writer.flush()
    with pytest.raises(RuntimeError, match="failed earlier"):  # never silently accepted afterwards
        writer.put(result("c2"))
    writer.close()  # already reported: close does not raise it a second time

    second = store.writer("run-1")
    monkeypatch.setattr(second, "_insert", broken)
    second.put(result("c1"))
    with pytest.raises(OSError, match="disk full"):
        second.close()
    with pytest.raises(RuntimeError, match="failed earlier"):
        second.put(result("c3"))


def test_put_after_close_raises(store: ResultStore) -> None:
    store.create_run(info("run-1"))
    writer = store.writer("run-1")
    writer.close()
    with pytest.raises(RuntimeError, match="closed"):
        writer.put(result("c1"))


def test_committed_within_milliseconds_without_close(store: ResultStore, db_url: str) -> None:
    """Simulated kill: never close the writer; a second store on the same file sees the rows."""
    store.create_run(info("run-1"))
    writer = store.writer("run-1")
    for i in range(20):
        writer.put(result(f"c{i}"))
    with ResultStore(db_url) as other:
        deadline = time.monotonic() + 5.0
        while len(other.finished_keys("run-1")) < 20 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert len(other.finished_keys("run-1")) == 20
        assert other.get_run("run-1").status == "running"


def test_sigkill_loses_nothing_committed(db_url: str, tmp_path: Path) -> None:
    """A real ``kill -9`` of a process that wrote through the writer and never closed it."""
    script = tmp_path / "writer_child.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_store import info, result
        from clineval.store import ResultStore
        store = ResultStore({db_url!r})
        store.create_run(info("killed"))
        writer = store.writer("killed")
        for i in range(500):
            writer.put(result(f"c{{i}}"))
        writer.flush()
        print("ready", flush=True)
        time.sleep(60)
    """)
    )
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    finally:
        child.kill()
        child.wait(timeout=10)
    with ResultStore(db_url) as after:
        assert len(after.finished_keys("killed")) == 500
        # Stored as running; its process is gone, so it is shown (and resumable) as interrupted.
        assert after.load_run("killed").info.status == "interrupted"


def test_in_memory_sqlite_is_shared_with_the_writer_thread() -> None:
    with ResultStore("sqlite://") as memory:
        memory.create_run(info("run-1"))
        with memory.writer("run-1") as writer:
            writer.put(result("c1"))
        assert memory.finished_keys("run-1") == {("medqa", "c1")}


def test_insert_statement_compiles_for_postgresql() -> None:
    from sqlalchemy.dialects import postgresql
    from sqlalchemy.schema import CreateTable

    from clineval.store.tables import runs
    from clineval.store.writer import insert_ignoring_duplicates

    stmt = insert_ignoring_duplicates("postgresql")
    assert stmt is not None and insert_ignoring_duplicates("mysql") is None
    sql = str(stmt.compile(dialect=postgresql.dialect()))
    assert "ON CONFLICT (run_id, case_key) DO NOTHING" in sql
    ddl = str(CreateTable(runs).compile(dialect=postgresql.dialect()))
    assert "TIMESTAMP WITH TIME ZONE" in ddl and "JSON" in ddl


def test_portable_fallback_ignores_duplicates(store: ResultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import clineval.store.writer as writer_module

    monkeypatch.setattr(writer_module, "insert_ignoring_duplicates", lambda dialect: None)
    store.create_run(info("run-1"))
    with store.writer("run-1") as writer:
        writer.put(result("c1"))
    with store.writer("run-1") as writer:
        writer.put(result("c1", value=0.0, label="incorrect"))
        writer.put(result("c2"))
    assert [r.scores["mcq"].label for r in store.load_results("run-1")] == ["correct", "correct"]


def test_default_url_is_a_file_under_dot_clineval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with ResultStore() as default:
        default.create_run(info("run-1"))
    assert (tmp_path / ".clineval" / "clineval.db").is_file()


def test_encode_result_fast_path_writes_what_the_tagged_codec_writes() -> None:
    """pydantic-core's encoding of an ordinary result parses to exactly the tagged codec's JSON; a NaN
    score, an infinity, or the word NaN in the text takes the tagged path (NaN is never written as null)."""
    from clineval.store.writer import encode_result

    plain = result("c1", text_out="Answer: C — naïve ✓")
    assert json.loads(encode_result(plain)) == json.loads(dumps(plain.model_dump(mode="json")))
    tricky_ones = (result("c2", failed=True), result("c3", text_out="NaN mmHg"), result("c4", value=math.inf))
    for tricky in tricky_ones:
        text = encode_result(tricky)
        assert text == dumps(tricky.model_dump(mode="json"))
        assert same([CaseResult.model_validate(loads(text))], [tricky])
