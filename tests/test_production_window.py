"""``format: production_log`` + ``system: {type: recorded}``: Tier 1 checks on a window of stored production
recommendations (JSONL file or database table), selected by hand-computed window bounds."""

from __future__ import annotations

import asyncio
import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from sqlalchemy import JSON, Column, DateTime, Float, MetaData, String, Table, create_engine, insert

from clineval.core import Case, CaseInput
from clineval.core.errors import DataFileError
from clineval.datasets.registry import DATASETS
from clineval.runs import run as api
from clineval.systems.recorded import recorded_output
from clineval.systems.registry import SYSTEMS

AS_OF = "2024-03-12T12:00:00Z"  # window [2024-03-11T12:00Z, 2024-03-12T12:00Z)

NORMAL = {"age": 54, "sex": "F", "conditions": ["asthma"], "vitals": {"hr": 80, "sbp": 122, "spo2": 97}}
HYPOXIC = {"age": 71, "sex": "M", "conditions": ["copd"], "vitals": {"hr": 104, "sbp": 118, "spo2": 84}}

# (id, timestamp as logged, kind, red-flag patient). US DST began 2024-03-10 02:00 local: -05:00 -> -04:00.
RECORDS: list[tuple[str, str, str, bool]] = [
    ("p01", "2024-03-09T08:00:00Z", "ok", False),
    ("p02", "2024-03-09T14:30:00+00:00", "no_actions", False),
    ("p03", "2024-03-09T20:00:00-05:00", "ok", False),  # 03-10 01:00Z
    ("p04", "2024-03-10T06:15:00Z", "ok", False),
    ("p05", "2024-03-10T09:00:00-04:00", "bad_type", False),  # 13:00Z
    ("p06", "2024-03-10T18:45:00-04:00", "ok", True),  # 22:45Z
    ("p07", "2024-03-11T02:00:00+00:00", "error", False),
    ("p08", "2024-03-11T06:59:59-05:00", "ok", False),  # 11:59:59Z, one second before the window
    ("p09", "2024-03-11T11:59:59.999Z", "no_actions", False),
    ("p10", "2024-03-11T07:00:00-05:00", "ok", False),  # 12:00:00Z: the window's first instant
    ("p11", "2024-03-11T12:30:00Z", "no_actions", False),
    ("p12", "2024-03-11T15:00:00+00:00", "ok", True),
    ("p13", "2024-03-11T13:00:00-04:00", "bad_type", False),  # 17:00Z
    ("p14", "2024-03-11T20:10:00Z", "no_escalation", True),
    ("p15", "2024-03-11T18:00:00-05:00", "ok", False),  # 23:00Z
    ("p16", "2024-03-12T00:00:00+00:00", "error", False),
    ("p17", "2024-03-12T01:30:00Z", "ok", True),
    ("p18", "2024-03-12T03:00:00+05:30", "ok", False),  # 03-11 21:30Z
    ("p19", "2024-03-12T04:45:00-05:00", "no_actions", False),  # 09:45Z
    ("p20", "2024-03-12T06:00:00Z", "error", True),
    ("p21", "2024-03-12T07:59:59-04:00", "ok", False),  # 11:59:59Z
    ("p22", "2024-03-12T17:29:00+05:30", "ok", False),  # 11:59Z
    ("p23", "2024-03-12T07:00:00-05:00", "ok", False),  # 12:00Z = as_of: excluded
    ("p24", "2024-03-12T12:00:00Z", "no_actions", False),
    ("p25", "2024-03-12T17:30:00+05:30", "ok", False),  # 12:00Z
    ("p26", "2024-03-12T13:00:00+00:00", "ok", True),
    ("p27", "2024-03-12T09:00:00-05:00", "ok", False),  # 14:00Z
    ("p28", "2024-03-12T18:00:00Z", "bad_type", False),
    ("p29", "2024-03-12T23:59:00Z", "ok", False),
    ("p30", "2024-03-12T20:00:00-04:00", "ok", False),  # 03-13 00:00Z
]
# By hand, in UTC order (oldest first).
IN_WINDOW = ["p10", "p11", "p12", "p13", "p14", "p18", "p15", "p16", "p17", "p20", "p19", "p22", "p21"]
SCHEMA_PASS = {"p10", "p12", "p14", "p15", "p17", "p18", "p21", "p22"}  # ok / no_escalation
ESCALATION = {"p12": 1.0, "p14": 0.0, "p17": 1.0, "p20": 0.0}  # red-flag cases; the others not applicable


def output_for(kind: str) -> Any:
    actions = [{"action": "Inhaled bronchodilator", "category": "medication", "evidence_refs": ["E1"]}]
    evidence = [{"id": "E1", "source_type": "guideline", "text": "GOLD 2024"}]
    escalate = "ICU review if SpO2 stays below 88% on oxygen"
    if kind == "ok":
        return {"recommended_actions": actions, "evidence_table": evidence, "when_to_escalate": escalate}
    if kind == "no_escalation":
        return {"recommended_actions": actions, "evidence_table": evidence}
    if kind == "no_actions":
        return {"problems": ["dyspnoea"], "when_to_escalate": escalate}
    if kind == "bad_type":  # recommended_actions must be a list of objects
        return {"recommended_actions": "start antibiotics", "when_to_escalate": escalate}
    raise ValueError(kind)


def record(rid: str, stamp: str, kind: str, red: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": rid,
        "timestamp": stamp,
        "patient": HYPOXIC if red else NORMAL,
        "condition": "copd" if red else "asthma",
        "tenant": "north",
    }
    if kind == "error":
        row["error"] = {"kind": "timeout", "message": "generation timed out after 30 s"}
    else:
        row["output"] = output_for(kind)
    return row


def write_log(path: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    rows = rows if rows is not None else [record(*r) for r in RECORDS]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def load(options: dict[str, Any], base: Path) -> Any:
    return DATASETS.get("production_log")(options, base)


def ids(dataset: Any) -> list[str]:
    return [c.id for c in dataset.cases]


# --- JSONL ---------------------------------------------------------------------------------------------


def test_window_selects_the_hand_computed_records(tmp_path: Path) -> None:
    write_log(tmp_path / "log.jsonl")
    dataset = load({"path": "log.jsonl", "window_hours": 24, "as_of": AS_OF}, tmp_path)
    assert ids(dataset) == IN_WINDOW
    case = dataset.cases[0]
    assert case.input.question == "production recommendation" and case.reference.data == {}
    assert case.input.data["recorded_at"] == "2024-03-11T12:00:00Z"
    assert case.input.data["patient"] == NORMAL and case.input.data["recorded_output"] == output_for("ok")
    assert case.metadata == {
        "condition": "asthma",
        "tenant": "north",
        "source": "production",
        "recorded_at": "2024-03-11T12:00:00Z",
    }
    error_case = next(c for c in dataset.cases if c.id == "p16")
    assert "recorded_output" not in error_case.input.data and error_case.input.data["recorded_error"]


def test_limit_keeps_the_most_recent(tmp_path: Path) -> None:
    write_log(tmp_path / "log.jsonl")
    dataset = load({"path": "log.jsonl", "as_of": AS_OF, "limit": 3}, tmp_path)
    assert ids(dataset) == ["p19", "p22", "p21"]


def test_window_hours_and_content_hash(tmp_path: Path) -> None:
    write_log(tmp_path / "log.jsonl")
    six = load({"path": "log.jsonl", "as_of": AS_OF, "window_hours": 6}, tmp_path)
    assert ids(six) == ["p20", "p19", "p22", "p21"]  # [06:00Z, 12:00Z)
    night = load({"path": "log.jsonl", "as_of": AS_OF}, tmp_path)
    again = load({"path": "log.jsonl", "as_of": "2024-03-12T07:00:00-05:00"}, tmp_path)  # same instant
    next_night = load({"path": "log.jsonl", "as_of": "2024-03-13T12:00:00Z"}, tmp_path)
    assert night.content_hash == again.content_hash
    assert len({night.content_hash, six.content_hash, next_night.content_hash}) == 3
    assert ids(next_night) == ["p23", "p24", "p25", "p26", "p27", "p28", "p29", "p30"]


def test_default_as_of_is_now(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    rows = [
        {"id": "recent", "timestamp": (now - timedelta(hours=1)).isoformat(), "output": output_for("ok")},
        {"id": "old", "timestamp": (now - timedelta(hours=30)).isoformat(), "output": output_for("ok")},
    ]
    write_log(tmp_path / "log.jsonl", rows)
    assert ids(load({"path": "log.jsonl"}, tmp_path)) == ["recent"]


def test_naive_timestamp_is_an_error_with_its_line(tmp_path: Path) -> None:
    rows = [record(*r) for r in RECORDS[:5]]
    rows[3]["timestamp"] = "2024-03-10T06:15:00"
    write_log(tmp_path / "log.jsonl", rows)
    with pytest.raises(DataFileError, match=r"log\.jsonl:4: timestamp must carry a timezone"):
        load({"path": "log.jsonl", "as_of": AS_OF}, tmp_path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("id"), r"log\.jsonl:2: missing field 'id'"),
        (lambda r: r.pop("timestamp"), r"log\.jsonl:2: missing field 'timestamp'"),
        (lambda r: r.pop("output"), r"log\.jsonl:2: missing field 'output'"),
        (
            lambda r: r.update(timestamp="yesterday"),
            r"log\.jsonl:2: timestamp 'yesterday' is not an ISO 8601",
        ),
        (lambda r: r.update(patient=["copd"]), r"log\.jsonl:2: field 'patient' should be an object"),
    ],
)
def test_bad_records_name_file_and_line(tmp_path: Path, change: Any, message: str) -> None:
    rows = [record(*r) for r in RECORDS[:3]]
    change(rows[1])
    write_log(tmp_path / "log.jsonl", rows)
    with pytest.raises(DataFileError, match=message):
        load({"path": "log.jsonl", "as_of": AS_OF}, tmp_path)


def test_bad_json_and_duplicates(tmp_path: Path) -> None:
    log = write_log(tmp_path / "log.jsonl")
    log.write_text(log.read_text() + "{not json\n")
    with pytest.raises(DataFileError, match=r"log\.jsonl:31: malformed JSON"):
        load({"path": "log.jsonl", "as_of": AS_OF}, tmp_path)
    rows = [record(*r) for r in RECORDS]
    rows[-1]["id"] = "p12"  # p30 is outside the window: a duplicate id only counts inside it
    write_log(tmp_path / "log.jsonl", rows)
    assert ids(load({"path": "log.jsonl", "as_of": AS_OF}, tmp_path)) == IN_WINDOW
    rows[-1]["timestamp"] = "2024-03-12T02:00:00Z"
    write_log(tmp_path / "log.jsonl", rows)
    with pytest.raises(DataFileError, match="duplicate case id 'p12'"):
        load({"path": "log.jsonl", "as_of": AS_OF}, tmp_path)


def test_empty_window_is_an_error(tmp_path: Path) -> None:
    write_log(tmp_path / "log.jsonl")
    with pytest.raises(DataFileError) as info:
        load({"path": "log.jsonl", "as_of": "2024-04-01T00:00:00Z"}, tmp_path)
    text = str(info.value)
    assert "no recommendations between 2024-03-31T00:00:00Z and 2024-04-01T00:00:00Z" in text
    assert "2024-03-09T08:00:00Z to 2024-03-13T00:00:00Z" in text and "window_hours" in text


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"path": "log.jsonl", "url": "sqlite://", "table": "t"},
        {"url": "sqlite://"},
        {"path": "log.jsonl", "window_hours": 0},
        {"path": "log.jsonl", "as_of": "2024-03-12T12:00:00"},  # naive as_of
        {"path": "log.jsonl", "limit": 0},
        {"path": "log.jsonl", "windowhours": 3},
    ],
)
def test_bad_options(tmp_path: Path, options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        load(options, tmp_path)


# --- database ------------------------------------------------------------------------------------------


def make_table(url: str, rows: list[dict[str, Any]], name: str = "recommendations") -> None:
    engine = create_engine(url)
    table = Table(
        name,
        MetaData(),
        Column("id", String, primary_key=True),
        Column("timestamp", DateTime(timezone=True), nullable=False),
        Column("output", JSON),
        Column("patient", JSON),
        Column("error", JSON),
        Column("condition", String),
        Column("tenant", String),
        Column("latency_s", Float),
    )
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        for row in rows:
            values = dict(row)
            # SQLite keeps no offset: store UTC (as production should) - read back naive, taken as UTC.
            values["timestamp"] = datetime.fromisoformat(row["timestamp"]).astimezone(UTC)
            conn.execute(insert(table).values(**values))
    engine.dispose()


def test_sqlite_table_selects_the_same_ids(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/prod.db"
    rows = [record(*r) for r in RECORDS]
    rows[0]["latency_s"] = 1.25
    make_table(url, rows)
    options = {"url": url, "table": "recommendations", "as_of": AS_OF}
    dataset = load(options, tmp_path)
    assert ids(dataset) == IN_WINDOW
    assert dataset.source.endswith("prod.db table recommendations")
    case = dataset.cases[0]
    assert case.input.data["recorded_at"] == "2024-03-11T12:00:00Z"
    assert case.input.data["recorded_output"] == output_for("ok") and case.input.data["patient"] == NORMAL
    assert case.metadata["condition"] == "asthma" and case.metadata["source"] == "production"
    assert ids(load({**options, "limit": 3}, tmp_path)) == ["p19", "p22", "p21"]
    assert ids(load({**options, "window_hours": 6}, tmp_path)) == ["p20", "p19", "p22", "p21"]
    jsonl = load({"path": str(write_log(tmp_path / "log.jsonl")), "as_of": AS_OF}, tmp_path)
    assert [c.input.data for c in jsonl.cases] == [c.input.data for c in dataset.cases]
    with pytest.raises(DataFileError, match=r"no recommendations between .* records span 2024-03-09T08:00"):
        load({**options, "as_of": "2025-01-01T00:00:00Z"}, tmp_path)


def test_text_timestamp_column_is_filtered_after_parsing(tmp_path: Path) -> None:
    """ISO strings in a TEXT column keep their offsets; the window is applied after parsing them."""
    url = f"sqlite:///{tmp_path}/prod.db"
    engine = create_engine(url)
    table = Table(
        "log", MetaData(), Column("id", String), Column("timestamp", String), Column("output", JSON)
    )
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        for rid, stamp, _kind, _red in RECORDS:
            conn.execute(insert(table).values(id=rid, timestamp=stamp, output=output_for("ok")))
        conn.execute(insert(table).values(id="naive", timestamp="2024-03-12T11:00:00", output="text"))
    engine.dispose()
    selected = ids(load({"url": url, "table": "log", "as_of": AS_OF, "metadata_fields": []}, tmp_path))
    assert selected == [*IN_WINDOW[:-2], "naive", *IN_WINDOW[-2:]]  # a naive DB value is UTC


def test_database_errors_name_table_and_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path}/prod.db"
    make_table(url, [record(*r) for r in RECORDS[:2]])
    with pytest.raises(DataFileError, match="table 'recomendations' not found"):
        load({"url": url, "table": "recomendations", "as_of": AS_OF}, tmp_path)
    with pytest.raises(DataFileError, match=r"has no column 'created_at'.*its columns: id, timestamp"):
        load({"url": url, "table": "recommendations", "timestamp_field": "created_at"}, tmp_path)
    with pytest.raises(DataFileError, match="has no column 'ward'"):
        load({"url": url, "table": "recommendations", "metadata_fields": ["ward"]}, tmp_path)
    monkeypatch.setenv("PROD_DB_URL", url)
    from_env = {"url_env": "PROD_DB_URL", "table": "recommendations", "as_of": "2024-03-10T00:00:00Z"}
    assert ids(load(from_env, tmp_path)) == ["p01", "p02"]
    monkeypatch.delenv("PROD_DB_URL")
    with pytest.raises(DataFileError, match="environment variable PROD_DB_URL is not set"):
        load(from_env, tmp_path)


def test_database_password_never_shown(tmp_path: Path) -> None:
    url = "postgresql+psycopg://nightly:s3cr3t-pw@127.0.0.1:1/clinic?connect_timeout=2"
    with pytest.raises(DataFileError) as info:
        load({"url": url, "table": "recommendations", "as_of": AS_OF}, tmp_path)
    text = str(info.value)
    assert "s3cr3t-pw" not in text and "nightly:***@127.0.0.1:1/clinic" in text


# --- the recorded system -------------------------------------------------------------------------------


def call(data: dict[str, Any], **options: Any) -> Any:
    system = SYSTEMS.get("recorded")(options, Path("."))
    assert system.live is False and system.cache_key(Case(id="x", input=CaseInput())) is None
    return asyncio.run(system.call(Case(id="x", input=CaseInput(data=data))))


def test_recorded_system_replays_outputs_and_errors() -> None:
    ok = call({"recorded_output": output_for("ok"), "recorded_latency_s": 0.5})
    assert ok.structured is not None and ok.structured.recommended_actions and ok.latency_s == 0.5
    assert ok.error is None
    missing = call({"patient": NORMAL})
    assert missing.error is not None and missing.error.kind == "missing_recorded_output"
    failed = call({"recorded_error": {"kind": "timeout", "message": "took too long"}})
    assert failed.failed and failed.error.kind == "timeout"
    both = call({"recorded_output": output_for("ok"), "recorded_error": "upstream 502"})
    assert both.error.kind == "recorded_error" and both.error.message == "upstream 502"
    empty = call({"recorded_output": None})
    assert empty.error.kind == "empty_output"
    invalid = recorded_output({"recorded_output": output_for("bad_type")})
    assert invalid.error is None and invalid.structured is None
    assert json.loads(invalid.text) == output_for("bad_type") and invalid.raw
    text = call({"recorded_output": "Give oxygen."})
    assert text.text == "Give oxygen." and text.structured is None
    with pytest.raises(ValidationError):
        SYSTEMS.get("recorded")({"path": "x"}, Path("."))


# --- end to end ----------------------------------------------------------------------------------------


SUITE = """\
name: nightly-tier1
tasks:
  - id: production
    dataset:
      format: production_log
      path: {log}
      window_hours: 24
      as_of: "{as_of}"
    system:
      type: recorded
    scorers: [schema, escalation]
    stratify: [condition]
"""


def test_nightly_tier1_suite_end_to_end(tmp_path: Path) -> None:
    write_log(tmp_path / "log.jsonl")
    suite = tmp_path / "nightly.yaml"
    suite.write_text(SUITE.format(log="log.jsonl", as_of=AS_OF), encoding="utf-8")
    url = f"sqlite:///{tmp_path}/s.db"
    result = api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None))
    stored = api.load_run(url, result.info.run_id)
    scores = stored.aggregates["production"].scores
    assert scores["n"] == len(IN_WINDOW) == 13
    assert scores["schema_pass_rate"] == pytest.approx(len(SCHEMA_PASS) / len(IN_WINDOW))  # 8 / 13
    assert scores["escalation_pass_rate"] == pytest.approx(0.5)  # p12, p17 pass; p14 fails, p20 failed
    assert scores["red_flag_cases"] == len(ESCALATION)
    by_case = {r.case_id: r for r in stored.results}
    assert sorted(by_case) == sorted(IN_WINDOW)
    for case_id, result_row in by_case.items():
        schema = result_row.scores["schema"]
        expected = "pass" if case_id in SCHEMA_PASS else "failed" if case_id in {"p16", "p20"} else "fail"
        assert schema.label == expected, case_id
        escalation = result_row.scores["escalation"].value
        if case_id in ESCALATION:
            assert escalation == ESCALATION[case_id], case_id
        else:
            assert math.isnan(escalation), case_id
    assert by_case["p16"].output.error is not None and by_case["p16"].output.error.kind == "timeout"
    assert "recommended_actions" in (by_case["p13"].scores["schema"].explanation or "")
    assert stored.info.suite.tasks[0].dataset.content_hash.startswith("sha256:")
