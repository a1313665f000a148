"""The run_shards table: one row per shard of a sharded run (``clineval run --shard K/N --run-id R``),
its status and when it started and completed (``clineval.store.shards``).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-08
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_shards",
        sa.Column(
            "run_id", sa.String(64), sa.ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("shard", sa.Integer(), primary_key=True),
        sa.Column("of", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("cases", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("status IN ('running', 'complete', 'interrupted')", name="ck_run_shards_status"),
        sa.CheckConstraint("shard >= 0", name="ck_run_shards_range"),
    )


def downgrade() -> None:
    op.drop_table("run_shards")
