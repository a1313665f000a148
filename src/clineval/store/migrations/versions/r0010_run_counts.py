"""run_counts: per run and task, how many cases, failed cases, cases per scorer label and per failure kind
(issue 26). The store's writer adds one row per (task, kind, name, value) with each batch it commits, in the
same transaction, so the sums are exact for a running run too; the viewer's run page and runs list read the
sums (a few rows) instead of a JSON path over every case (a 300,000-case run: 2.6 s of label counts). A run
whose sums disagree with its stored cases (written before this table, or stored one row at a time after a
refused row) is counted from its cases as before.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_counts",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id", ondelete="CASCADE"), nullable=False),
        sa.Column("task_id", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("value", sa.Text(), nullable=True),
        sa.Column("n", sa.Integer(), nullable=False),
    )
    op.create_index("ix_run_counts_run_id", "run_counts", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_run_counts_run_id", table_name="run_counts")
    op.drop_table("run_counts")
