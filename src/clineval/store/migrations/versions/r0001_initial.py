"""The initial store: runs, case_results, baselines, gate_results.

Databases created before clineval used Alembic hold exactly this schema; ``clineval.store.migrate`` stamps
them with this revision before upgrading.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("suite_name", sa.String(255), nullable=False),
        sa.Column("suite_spec", sa.JSON(), nullable=False),
        sa.Column("suite_hash", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("provenance", sa.JSON(), nullable=False),
        sa.Column("overall", sa.JSON(), nullable=True),
        sa.Column("aggregates", sa.JSON(), nullable=True),
        sa.CheckConstraint("status IN ('running', 'finished', 'partial', 'failed')", name="ck_runs_status"),
    )
    op.create_index("ix_runs_created_at", "runs", ["created_at"])
    op.create_table(
        "case_results",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id", ondelete="CASCADE"), nullable=False),
        sa.Column("task_id", sa.String(255), nullable=False),
        sa.Column("case_id", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("status IN ('ok', 'failed')", name="ck_case_results_status"),
        sa.UniqueConstraint("run_id", "task_id", "case_id", name="uq_case_results_key"),
    )
    op.create_table(
        "baselines",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("tenant", sa.String(255), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("promoted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("snapshot", sa.JSON(), nullable=False),
        sa.UniqueConstraint("name", "tenant", "version", name="uq_baselines_version"),
    )
    op.create_table(
        "gate_results",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("baseline_name", sa.String(255), nullable=False),
        sa.Column("baseline_version", sa.Integer(), nullable=False),
        sa.Column("tenant", sa.String(255), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_gate_results_run_id", "gate_results", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_gate_results_run_id", table_name="gate_results")
    op.drop_table("gate_results")
    op.drop_table("baselines")
    op.drop_table("case_results")
    op.drop_index("ix_runs_created_at", table_name="runs")
    op.drop_table("runs")
