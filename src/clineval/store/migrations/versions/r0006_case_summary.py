"""case_results.summary: each result's case summary (``clineval.core.helpers.columns``), the compact JSON that
aggregation, compare and reports read instead of the full result. NULL for results written before it:
those are summarized from the full result when read.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # a plain ALTER TABLE ... ADD COLUMN on both databases: no copy of a large table
    op.add_column("case_results", sa.Column("summary", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("case_results") as batch:
        batch.drop_column("summary")
