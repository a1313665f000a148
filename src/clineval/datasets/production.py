"""``format: production_log``: stored production recommendations within a time window (nightly Tier 1).

The records come from a JSONL file (``path``) or a database table (``url`` or ``url_env``, plus ``table``;
read with SQLAlchemy Core reflection and bound parameters only). Each record has an id, a timestamp, the
recorded ``output`` (the structured recommendation the system returned) and, optionally, the ``patient``
record, the ``question``, a recorded ``error``, ``latency_s``, ``stage_latency_s`` and metadata fields
(``condition``, ``tenant``...).

The window is ``[as_of - window_hours, as_of)`` (``as_of`` defaults to now, UTC); ``limit`` keeps the most
recent N of it. Cases come out oldest first. Each record becomes a Case with ``input.question`` (the record's
question, else "production recommendation"), ``input.data = {"patient", "recorded_output", "recorded_at"}``
(plus ``recorded_error`` / ``recorded_latency_s`` / ``recorded_stage_latency_s`` when recorded), no reference,
and metadata = the ``metadata_fields`` present plus ``source: "production"`` and ``recorded_at``. Replay the
outputs with ``system: {type: recorded}``.

Timestamps: ISO 8601 strings with ``Z`` or an offset, or datetimes from the database. A JSONL timestamp
without a timezone is an error (logs span DST changes). A database value without a timezone (SQLite
returns naive datetimes even for ``DateTime(timezone=True)`` columns; ``TIMESTAMP WITHOUT TIME ZONE``
columns) is read as UTC. Every JSONL line is validated, also those outside the window.

An empty window is an error, never an empty run. The content hash covers the selected records (canonical
JSON) and the window bounds, so two nights never share one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from clineval.core import Case, CaseInput, LoadedDataset, canonical_json, sha256_text
from clineval.core.errors import DataFileError
from clineval.core.helpers.lines import MAX_JSON_DEPTH, json_too_deep
from clineval.datasets._io import resolve, stream_jsonl
from clineval.datasets.cases import check_unique

DEFAULT_QUESTION = "production recommendation"
WINDOW_HINT = "widen window_hours or move as_of (the window is [as_of - window_hours, as_of))"


class ProductionLogOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str | None = None  # JSONL, relative to the suite's folder
    url: str | None = None  # SQLAlchemy URL (it is stored with the run's spec: prefer url_env)
    url_env: str | None = None  # name of an environment variable holding the SQLAlchemy URL
    table: str | None = None
    db_schema: str | None = None  # the table's schema (PostgreSQL ``schema.table``)
    id_field: str = "id"
    timestamp_field: str = "timestamp"
    output_field: str = "output"
    patient_field: str | None = "patient"
    question_field: str | None = "question"
    error_field: str | None = "error"
    metadata_fields: list[str] = Field(default_factory=lambda: ["condition", "tenant"])
    window_hours: float = Field(default=24.0, gt=0)
    as_of: AwareDatetime | None = None
    limit: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _one_source(self) -> ProductionLogOptions:
        database = self.url is not None or self.url_env is not None
        if self.url is not None and self.url_env is not None:
            raise ValueError("give url or url_env, not both")
        if self.path is not None and (database or self.table is not None):
            raise ValueError("give either path (a JSONL file) or url + table (a database table), not both")
        if self.path is None and not database:
            raise ValueError("give path (a JSONL file) or url + table (a database table)")
        if database and not self.table:
            raise ValueError("a database source needs table")
        if not math.isfinite(self.window_hours):
            raise ValueError("window_hours must be finite")
        return self


@dataclass(frozen=True)
class Window:
    start: datetime  # inclusive
    end: datetime  # exclusive

    def __contains__(self, when: object) -> bool:
        return isinstance(when, datetime) and self.start <= when < self.end

    def describe(self) -> str:
        return f"{_iso(self.start)} and {_iso(self.end)}"


@dataclass(frozen=True)
class _Record:
    when: datetime
    case: Case
    canonical: dict[str, Any]  # what the content hash covers


def window_for(opts: ProductionLogOptions, now: datetime | None = None) -> Window:
    end = (opts.as_of or now or datetime.now(UTC)).astimezone(UTC)
    return Window(start=end - timedelta(hours=opts.window_hours), end=end)


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


class _Bad(ValueError):
    """A problem with one record (the caller adds where: file and line, or table and row)."""

    def __init__(self, problem: str, hint: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.hint = hint


def parse_timestamp(value: Any, *, naive_is_utc: bool, field: str = "timestamp") -> datetime:
    """An ISO 8601 string or a datetime as an aware UTC datetime; a naive one is an error unless
    ``naive_is_utc`` (database sources)."""
    if isinstance(value, datetime):
        when = value
    elif isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.strip())
        except ValueError:
            raise _Bad(
                f"{field} {value!r} is not an ISO 8601 date-time", hint="e.g. 2024-03-10T14:05:00Z"
            ) from None
    elif isinstance(value, date):
        raise _Bad(f"{field} is a date without a time ({value.isoformat()})")
    else:
        raise _Bad(f"{field} must be an ISO 8601 string, got {type(value).__name__}")
    if when.tzinfo is None or when.utcoffset() is None:
        if not naive_is_utc:
            raise _Bad(
                "timestamp must carry a timezone",
                hint="add Z or an offset such as +01:00 (clinical logs span DST changes)",
            )
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return _iso(value) if value.tzinfo is not None else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise _Bad(f"{name} must be a number of seconds, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise _Bad(f"{name} must be a non-negative number of seconds, got {value!r}")
    return number


def _object(value: Any, name: str, *, decode: bool) -> dict[str, Any]:
    if decode and isinstance(value, str):
        if json_too_deep(value):
            raise _Bad(f"{name} holds JSON nested deeper than {MAX_JSON_DEPTH} levels")
        try:
            value = json.loads(value)
        except ValueError:
            raise _Bad(f"{name} should hold a JSON object") from None
    if not isinstance(value, Mapping):
        raise _Bad(f"{name} should be an object, got {type(value).__name__}")
    return dict(value)


def _make_record(row: Mapping[str, Any], opts: ProductionLogOptions, *, database: bool) -> _Record:
    """One record as a Case; problems raise ``_Bad``."""
    raw_id = row.get(opts.id_field)
    if raw_id is None or raw_id == "" or isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
        raise _Bad(f"missing field {opts.id_field!r}" if raw_id in (None, "") else "id must be text or int")
    case_id = str(raw_id)
    if row.get(opts.timestamp_field) is None:
        raise _Bad(f"missing field {opts.timestamp_field!r}")
    when = parse_timestamp(row[opts.timestamp_field], naive_is_utc=database, field=opts.timestamp_field)
    error = row.get(opts.error_field) if opts.error_field else None
    if opts.output_field not in row and error is None:
        raise _Bad(f"missing field {opts.output_field!r}", hint="a record without an output needs an error")
    if error is not None and not isinstance(error, str | Mapping):
        raise _Bad(f"{opts.error_field} must be a string or an object, got {type(error).__name__}")
    data: dict[str, Any] = {}
    patient = row.get(opts.patient_field) if opts.patient_field else None
    data["patient"] = (
        None if patient is None else _object(patient, f"field {opts.patient_field!r}", decode=database)
    )
    if opts.output_field in row and not (row[opts.output_field] is None and error is not None):
        data["recorded_output"] = _jsonable(row[opts.output_field])  # null without an error: empty output
    data["recorded_at"] = _iso(when)
    if error is not None:
        data["recorded_error"] = _jsonable(error)
    if row.get("latency_s") is not None:
        data["recorded_latency_s"] = _number(row["latency_s"], "latency_s")
    if row.get("stage_latency_s") is not None:
        stages = _object(row["stage_latency_s"], "stage_latency_s", decode=database)
        data["recorded_stage_latency_s"] = {
            str(k): _number(v, f"stage_latency_s.{k}") for k, v in stages.items()
        }
    question = row.get(opts.question_field) if opts.question_field else None
    if question is not None and not isinstance(question, str):
        raise _Bad(f"field {opts.question_field!r} should be a string, got {type(question).__name__}")
    metadata: dict[str, Any] = {
        name: _jsonable(row[name]) for name in opts.metadata_fields if row.get(name) is not None
    }
    metadata.update(source="production", recorded_at=data["recorded_at"])
    case = Case(
        id=case_id,
        input=CaseInput(question=question or DEFAULT_QUESTION, data=data),
        metadata=metadata,
    )
    return _Record(when=when, case=case, canonical=_jsonable(dict(row)))


def _select(records: list[_Record], window: Window, limit: int | None) -> list[_Record]:
    """The records in the window, the most recent ``limit`` of them, oldest first."""
    inside = sorted((r for r in records if r.when in window), key=lambda r: (r.when, r.case.id))
    return inside[-limit:] if limit is not None else inside


def _dataset(
    selected: list[_Record], window: Window, source: str, span: tuple[datetime, datetime] | None
) -> LoadedDataset:
    if not selected:
        seen = f"; the records span {_iso(span[0])} to {_iso(span[1])}" if span else "; there are no records"
        raise DataFileError(
            f"no recommendations between {window.describe()}{seen}", path=source, hint=WINDOW_HINT
        )
    payload = {
        "window": [_iso(window.start), _iso(window.end)],
        "records": [r.canonical for r in selected],
    }
    cases = [r.case for r in selected]
    return LoadedDataset(
        cases=cases, content_hash="sha256:" + sha256_text(canonical_json(payload)), source=source
    )


def _span(times: Iterable[datetime]) -> tuple[datetime, datetime] | None:
    ordered = sorted(times)
    return (ordered[0], ordered[-1]) if ordered else None


# --- JSONL ---------------------------------------------------------------------------------------------


def _load_jsonl(opts: ProductionLogOptions, path: Path, window: Window) -> LoadedDataset:
    records: list[_Record] = []
    for line, row in stream_jsonl(path, None):  # a bad line stops the load when it is reached
        try:
            records.append(_make_record(row, opts, database=False))
        except _Bad as bad:
            raise DataFileError(bad.problem, path=path, line=line, hint=bad.hint) from None
    selected = _select(records, window, None)
    check_unique([r.case for r in selected], path)
    if opts.limit is not None:
        selected = selected[-opts.limit :]
    return _dataset(selected, window, str(path), _span(r.when for r in records))


def check_unique_at(records: list[_Record], label: str) -> None:
    """``check_unique`` for a source that is not a file (the error names ``label``)."""
    try:
        check_unique([r.case for r in records], Path(label))
    except DataFileError as err:
        raise DataFileError(err.problem, path=label, hint=err.hint) from None


def load_production_log(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    opts = ProductionLogOptions.model_validate(dict(options))
    window = window_for(opts)
    if opts.path is not None:
        return _load_jsonl(opts, resolve(opts.path, base_dir), window)
    if opts.table is None:
        raise ValueError("production_log: a database source needs table")
    from clineval.datasets.production_table import load_table  # SQLAlchemy reflection, only for tables

    return load_table(opts, opts.table, window)
