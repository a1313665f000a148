"""Tenants and run types on runs; the eval_results table (one metric value per row).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_RUN_TYPES = "run_type IN ('nightly', 'weekly', 'config_gate', 'adhoc')"


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("tenant_id", sa.String(255), nullable=False, server_default="default"))
        batch.add_column(sa.Column("run_type", sa.String(16), nullable=False, server_default="adhoc"))
        batch.create_check_constraint("ck_runs_run_type", _RUN_TYPES)
    op.create_index("ix_runs_tenant_id", "runs", ["tenant_id"])
    op.create_table(
        "eval_results",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Uuid(as_uuid=False), nullable=False),
        sa.Column("run_type", sa.String(16), nullable=False),
        sa.Column("timestamp", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tenant_id", sa.String(255), nullable=False),
        sa.Column("condition", sa.String(255), nullable=True),
        sa.Column("tier", sa.SmallInteger(), nullable=True),
        sa.Column("metric_name", sa.String(255), nullable=False),
        sa.Column("metric_value", sa.Float(), nullable=True),
        sa.Column("baseline_id", sa.Integer(), sa.ForeignKey("baselines.id"), nullable=True),
        sa.Column("passed_baseline", sa.Boolean(), nullable=True),
        sa.Column("metadata", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=False),
        sa.CheckConstraint(_RUN_TYPES, name="ck_eval_results_run_type"),
        sa.CheckConstraint("tier IS NULL OR (tier BETWEEN 1 AND 4)", name="ck_eval_results_tier"),
    )
    op.create_index("ix_eval_results_run_id", "eval_results", ["run_id"])
    op.create_index("ix_eval_results_trend", "eval_results", ["tenant_id", "metric_name", "timestamp"])


def downgrade() -> None:
    op.drop_index("ix_eval_results_trend", table_name="eval_results")
    op.drop_index("ix_eval_results_run_id", table_name="eval_results")
    op.drop_table("eval_results")
    op.drop_index("ix_runs_tenant_id", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint("ck_runs_run_type", type_="check")
        batch.drop_column("run_type")
        batch.drop_column("tenant_id")
