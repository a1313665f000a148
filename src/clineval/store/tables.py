"""The tables of the result store (SQLAlchemy Core) and the JSON codec their JSON columns use.

``runs`` holds one row per run (suite spec, status, tenant, run type, provenance, aggregates);
``case_results`` one row per (run, task, case), appended while the run is going; ``baselines`` and
``gate_results`` hold promoted baseline snapshots and gate decisions (:mod:`clineval.store.baselines`);
``eval_results`` one row per metric value of a run (overall and per condition), of a gate decision or of a
pipeline's regression check (:mod:`clineval.store.eval_results`). The schema is created and upgraded by
the Alembic migrations in ``clineval/store/migrations`` (:mod:`clineval.store.migrate`); these tables
are what the migrations must produce (a test compares them). JSON columns go through
:func:`dumps` / :func:`loads`, which keep NaN and ±infinity (a NaN score means "not scorable") without
writing invalid JSON: PostgreSQL rejects ``NaN`` in JSON, so non-finite floats are stored as
``{"$float": "NaN"}`` and restored on load.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    Uuid,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

from clineval.core.helpers.lines import loads as fast_loads


class JsonDocument(TypeDecorator[Any]):
    """JSON, stored as JSONB on PostgreSQL (indexable, compact). A decorator rather than
    ``JSON().with_variant(JSONB(), "postgresql")`` so that opening a SQLite store does not import the
    PostgreSQL dialect (a cost on every `clineval` command that reads a store)."""

    impl = JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import JSONB

            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(JSON())


metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("suite_name", String(255), nullable=False),
    Column("suite_spec", JSON, nullable=False),
    Column("suite_hash", String(64), nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("provenance", JSON, nullable=False),
    Column("overall", JSON, nullable=True),
    Column("aggregates", JSON, nullable=True),
    Column("tenant_id", String(255), nullable=False, server_default="default"),
    Column("run_type", String(16), nullable=False, server_default="adhoc"),
    # Who runs it (clineval.store.liveness): a `running` run whose owner died is shown `interrupted`.
    Column("heartbeat_at", DateTime(timezone=True), nullable=True),
    Column("owner_pid", Integer, nullable=True),
    Column("owner_host", String(255), nullable=True),
    # Who finalizes a sharded run (clineval.store.finalizing): claimed by one process, which keeps the beat
    # fresh while it aggregates; a claim whose process died is taken over.
    Column("finalizer_pid", Integer, nullable=True),
    Column("finalizer_host", String(255), nullable=True),
    Column("finalizer_beat", DateTime(timezone=True), nullable=True),
    CheckConstraint(
        "status IN ('running', 'finished', 'partial', 'failed', 'interrupted')", name="ck_runs_status"
    ),
    CheckConstraint("run_type IN ('nightly', 'weekly', 'config_gate', 'adhoc')", name="ck_runs_run_type"),
    Index("ix_runs_created_at", "created_at"),
    Index("ix_runs_tenant_id", "tenant_id"),
)

case_results = Table(
    "case_results",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("runs.run_id", ondelete="CASCADE"), nullable=False),
    # ids of any length (TEXT): a PostgreSQL btree entry holds at most ~2.7 kB, so the unique key is
    # case_key (clineval.store.keys: the ids when short, else a prefix and their digest), not the ids
    Column("task_id", Text, nullable=False),
    Column("case_id", Text, nullable=False),
    Column("case_key", String(255), nullable=False),
    Column("status", String(16), nullable=False),
    Column("result", JSON, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # the case summary (clineval.core.helpers.columns): what aggregation reads; NULL for results stored before
    # it
    Column("summary", Text, nullable=True),
    CheckConstraint("status IN ('ok', 'failed')", name="ck_case_results_status"),
    UniqueConstraint("run_id", "case_key", name="uq_case_results_key"),
    Index("ix_case_results_run_row", "run_id", "id"),  # a run's cases in insertion order (migration 0009)
)

# Per run and task: cases (kind "n"), failed cases ("failed"), cases per scorer label ("label": name = the
# scorer, value = the label) and per failure kind ("failure"); one row per kind and value for each batch the
# writer commits, summed when read (clineval.store.case_reads; migration 0010)
run_counts = Table(
    "run_counts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("runs.run_id", ondelete="CASCADE"), nullable=False),
    Column("task_id", Text, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("name", Text, nullable=False),
    Column("value", Text, nullable=True),
    Column("n", Integer, nullable=False),
    Index("ix_run_counts_run_id", "run_id"),
)

# Named baseline snapshots (clineval.store.baselines): one row per (name, tenant, version), never updated.
baselines = Table(
    "baselines",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False),
    Column("tenant", String(255), nullable=False),
    Column("version", Integer, nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("promoted_at", DateTime(timezone=True), nullable=False),
    Column("snapshot", JSON, nullable=False),
    UniqueConstraint("name", "tenant", "version", name="uq_baselines_version"),
)

# One row per `clineval gate` decision.
gate_results = Table(
    "gate_results",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False),
    Column("baseline_name", String(255), nullable=False),
    Column("baseline_version", Integer, nullable=False),
    Column("tenant", String(255), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("passed", Boolean, nullable=False),
    Column("details", JSON, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("ix_gate_results_run_id", "run_id"),
)

# One metric value per row (clineval.store.eval_results). JSONB on PostgreSQL so metadata can be indexed
# and queried (metadata->>'task'); plain JSON text elsewhere.
eval_results = Table(
    "eval_results",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", Uuid(as_uuid=False), nullable=False),
    Column("run_type", String(16), nullable=False),
    Column("timestamp", DateTime(timezone=True), nullable=False),
    Column("tenant_id", String(255), nullable=False),
    Column("condition", Text, nullable=True),  # a case metadata value, any length; NULL: the task aggregate
    Column("tier", SmallInteger, nullable=True),  # NULL: a metric outside the four tiers
    Column("metric_name", String(255), nullable=False),
    Column("metric_value", Float, nullable=True),  # NULL: not scorable (NaN)
    Column("baseline_id", Integer, ForeignKey("baselines.id"), nullable=True),
    Column("passed_baseline", Boolean, nullable=True),
    Column("metadata", JsonDocument(), nullable=False),
    CheckConstraint(
        "run_type IN ('nightly', 'weekly', 'config_gate', 'adhoc')", name="ck_eval_results_run_type"
    ),
    CheckConstraint("tier IS NULL OR (tier BETWEEN 1 AND 4)", name="ck_eval_results_tier"),
    Index("ix_eval_results_run_id", "run_id"),
    Index("ix_eval_results_trend", "tenant_id", "metric_name", "timestamp"),
)

# Clinician adjudications of automated verdicts (clineval.view.review.adjudication): append-only, never
# updated; the newest row per (run, task, case, item, reviewer) is that reviewer's current verdict.
adjudications = Table(
    "adjudications",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False),
    Column("task_id", Text, nullable=False),
    Column("case_id", Text, nullable=False),
    Column("item_kind", String(32), nullable=False),
    Column("item_key", String(1024), nullable=False),
    Column("automated_value", JSON, nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("corrected_value", JSON, nullable=False),
    Column("reviewer", String(255), nullable=False),
    Column("comment", String, nullable=False, server_default=""),
    Column("created_at", DateTime(timezone=True), nullable=False),
    CheckConstraint("verdict IN ('agree', 'disagree')", name="ck_adjudications_verdict"),
    CheckConstraint(
        "item_kind IN ('mcq', 'ddx_pair', 'check', 'rule', 'judge_dimension', 'label')",
        name="ck_adjudications_item_kind",
    ),
    CheckConstraint("reviewer <> ''", name="ck_adjudications_reviewer"),
    Index("ix_adjudications_run", "run_id"),  # not the ids (unbounded text): a run's rows are few
)

# The shards of a sharded run (clineval.store.shards): one row per (run, shard), written by that shard.
run_shards = Table(
    "run_shards",
    metadata,
    Column("run_id", String(64), ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True),
    Column("shard", Integer, primary_key=True),
    Column("of", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("cases", Integer, nullable=False, server_default="0"),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    CheckConstraint("status IN ('running', 'complete', 'interrupted')", name="ck_run_shards_status"),
    CheckConstraint("shard >= 0", name="ck_run_shards_range"),
)

# Judge qualifications (clineval.store.qualifications): one row per `clineval judge qualify`, append-only;
# a run's judge is matched on judge_key (model + prompt + prompt hash + settings), the newest row applies.
judge_qualifications = Table(
    "judge_qualifications",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("qualification_id", String(64), nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("tenant_id", String(255), nullable=False, server_default="default"),
    Column("judge_key", String(64), nullable=False),
    Column("judge_model", String(255), nullable=False),
    Column("served_model", String(255), nullable=True),
    Column("judge_endpoint", Text, nullable=False, server_default=""),
    Column("prompt", String(255), nullable=False),
    Column("prompt_hash", String(64), nullable=False),
    Column("settings", JSON, nullable=False),
    Column("settings_hash", String(64), nullable=False),
    Column("samples", SmallInteger, nullable=False),
    Column("vote_samples", SmallInteger, nullable=True),
    Column("seed", Integer, nullable=False),
    Column("suite", Text, nullable=False),
    Column("task_id", Text, nullable=False),
    Column("labels_hash", String(64), nullable=False),
    Column("labels_source", String(16), nullable=False),
    Column("labels_ref", Text, nullable=False),
    Column("n_labelled", Integer, nullable=False),
    Column("reviewers", SmallInteger, nullable=False),
    Column("thresholds", JSON, nullable=False),
    Column("figures", JSON, nullable=False),
    Column("qualified", Boolean, nullable=False),
    Column("reasons", JSON, nullable=False),
    Column("clineval_version", String(32), nullable=False),
    CheckConstraint("labels_source IN ('file', 'adjudications')", name="ck_judge_qualifications_source"),
    CheckConstraint("samples >= 2", name="ck_judge_qualifications_samples"),
    Index("ix_judge_qualifications_key", "judge_key", "created_at"),
)

# partial: finalised with cases missing; interrupted: stopped (Ctrl-C, or its process died) — resumable.
RUN_STATUSES = ("running", "finished", "partial", "failed", "interrupted")
FINAL_STATUSES = ("finished", "partial", "failed")
_FLOAT_TAG = "$float"


def _tag_nonfinite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return {_FLOAT_TAG: repr(value)}  # 'nan', 'inf', '-inf'
    if isinstance(value, dict):
        return {key: _tag_nonfinite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_tag_nonfinite(item) for item in value]
    return value


def _untag(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and isinstance(obj.get(_FLOAT_TAG), str):
        return float(obj[_FLOAT_TAG])
    return obj


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def dumps(value: Any) -> str:
    """Serialise a JSON column value; non-finite floats become ``{"$float": "nan"}`` (valid JSON)."""
    try:
        return _ENCODER.encode(value)
    except ValueError:  # a NaN / inf somewhere: the slow path, only for values that have one
        return _ENCODER.encode(_tag_nonfinite(value))


def is_tagged(text: str) -> bool:
    """Whether ``text`` (from :func:`dumps`) holds a tagged non-finite float."""
    return '"$float"' in text


def loads(text: str | bytes) -> Any:
    """Inverse of :func:`dumps`."""
    tagged = b'"$float"' in text if isinstance(text, bytes) else is_tagged(text)
    return json.loads(text, object_hook=_untag) if tagged else fast_loads(text)  # msgspec, json's values


def utc(moment: datetime | None) -> datetime | None:
    """A tz-aware UTC datetime (SQLite hands back naive datetimes, which are stored in UTC)."""
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)
