"""Task and case ids of any length; the finalizer of a sharded run.

- ``case_results.task_id`` / ``case_id``, ``adjudications.task_id`` / ``case_id`` and
  ``eval_results.condition`` become TEXT (they were VARCHAR(255): a suite whose ids are longer ran on SQLite,
  which does not enforce the length, and failed on PostgreSQL).
- ``case_results.case_key`` (``clineval.store.keys.case_key``: the ids when short, else a prefix and their
  digest), filled for the stored rows; the unique key per run is ``(run_id, case_key)``, since a PostgreSQL
  btree index entry holds at most ~2.7 kB and cannot hold ids of any length. ``ix_adjudications_case`` becomes
  ``ix_adjudications_run`` (the run id only) for the same reason.
- ``runs.finalizer_pid`` / ``finalizer_host`` / ``finalizer_beat``: which process finalizes a sharded run and
  its heartbeat (``clineval.store.finalizing``), so a claim whose process died is taken over.

On PostgreSQL the type changes rewrite no table (VARCHAR -> TEXT is binary compatible); filling
``case_key`` rewrites ``case_results`` once. On SQLite the altered tables are copied (batch mode).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-10
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from clineval.store.keys import LITERAL_MAX, PREFIX, case_key

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

# clineval.store.keys.case_key in SQL (char_length and left count characters, as Python's len and slices do)
_PG_LITERAL = "char_length(task_id)::text || ':' || task_id || ':' || case_id"
_PG_CASE_KEY = (
    f"CASE WHEN char_length({_PG_LITERAL}) <= {LITERAL_MAX} THEN {_PG_LITERAL}"
    f" ELSE left({_PG_LITERAL}, {PREFIX}) || '#'"
    f" || encode(sha256(convert_to({_PG_LITERAL}, 'UTF8')), 'hex') END"
)


def _fill_case_key() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        op.execute(f"UPDATE case_results SET case_key = {_PG_CASE_KEY}")
        return
    if bind.dialect.name == "sqlite":
        raw = bind.connection.dbapi_connection
        assert raw is not None
        raw.create_function("clineval_case_key", 2, case_key, deterministic=True)  # type: ignore[attr-defined]
        op.execute("UPDATE case_results SET case_key = clineval_case_key(task_id, case_id)")
        return
    rows = bind.execute(sa.text("SELECT id, task_id, case_id FROM case_results")).all()
    update = sa.text("UPDATE case_results SET case_key = :k WHERE id = :id")
    for row_id, task_id, case_id in rows:
        bind.execute(update, {"k": case_key(task_id, case_id), "id": row_id})


def upgrade() -> None:
    op.add_column("case_results", sa.Column("case_key", sa.String(255), nullable=True))
    _fill_case_key()
    with op.batch_alter_table("case_results") as batch:
        batch.drop_constraint("uq_case_results_key", type_="unique")
        batch.alter_column("task_id", type_=sa.Text(), existing_type=sa.String(255), existing_nullable=False)
        batch.alter_column("case_id", type_=sa.Text(), existing_type=sa.String(255), existing_nullable=False)
        batch.alter_column("case_key", nullable=False, existing_type=sa.String(255))
        batch.create_unique_constraint("uq_case_results_key", ["run_id", "case_key"])
    op.drop_index("ix_adjudications_case", table_name="adjudications")
    with op.batch_alter_table("adjudications") as batch:
        batch.alter_column("task_id", type_=sa.Text(), existing_type=sa.String(255), existing_nullable=False)
        batch.alter_column("case_id", type_=sa.Text(), existing_type=sa.String(255), existing_nullable=False)
    op.create_index("ix_adjudications_run", "adjudications", ["run_id"])
    with op.batch_alter_table("eval_results") as batch:
        batch.alter_column("condition", type_=sa.Text(), existing_type=sa.String(255), existing_nullable=True)
    # plain ALTER TABLE ... ADD COLUMN on both databases (no copy of runs, whose rows case_results reference)
    op.add_column("runs", sa.Column("finalizer_pid", sa.Integer(), nullable=True))
    op.add_column("runs", sa.Column("finalizer_host", sa.String(255), nullable=True))
    op.add_column("runs", sa.Column("finalizer_beat", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    """Back to VARCHAR(255): fails on PostgreSQL if a stored id is longer (nothing is cut silently)."""
    for column in ("finalizer_beat", "finalizer_host", "finalizer_pid"):
        op.drop_column("runs", column)  # native on SQLite >= 3.35: runs is not copied
    with op.batch_alter_table("eval_results") as batch:
        batch.alter_column("condition", type_=sa.String(255), existing_type=sa.Text(), existing_nullable=True)
    op.drop_index("ix_adjudications_run", table_name="adjudications")
    with op.batch_alter_table("adjudications") as batch:
        batch.alter_column("task_id", type_=sa.String(255), existing_type=sa.Text(), existing_nullable=False)
        batch.alter_column("case_id", type_=sa.String(255), existing_type=sa.Text(), existing_nullable=False)
    op.create_index("ix_adjudications_case", "adjudications", ["run_id", "task_id", "case_id"])
    with op.batch_alter_table("case_results") as batch:
        batch.drop_constraint("uq_case_results_key", type_="unique")
        batch.alter_column("task_id", type_=sa.String(255), existing_type=sa.Text(), existing_nullable=False)
        batch.alter_column("case_id", type_=sa.String(255), existing_type=sa.Text(), existing_nullable=False)
        batch.create_unique_constraint("uq_case_results_key", ["run_id", "task_id", "case_id"])
        batch.drop_column("case_key")
