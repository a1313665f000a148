"""The adjudications table: clinicians' reviews of automated verdicts, append-only
(``clineval.view.review.adjudication``).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "adjudications",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("task_id", sa.String(255), nullable=False),
        sa.Column("case_id", sa.String(255), nullable=False),
        sa.Column("item_kind", sa.String(32), nullable=False),
        sa.Column("item_key", sa.String(1024), nullable=False),
        sa.Column("automated_value", sa.JSON(), nullable=False),
        sa.Column("verdict", sa.String(16), nullable=False),
        sa.Column("corrected_value", sa.JSON(), nullable=False),
        sa.Column("reviewer", sa.String(255), nullable=False),
        sa.Column("comment", sa.String(), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("verdict IN ('agree', 'disagree')", name="ck_adjudications_verdict"),
        sa.CheckConstraint(
            "item_kind IN ('mcq', 'ddx_pair', 'check', 'rule', 'judge_dimension', 'label')",
            name="ck_adjudications_item_kind",
        ),
        sa.CheckConstraint("reviewer <> ''", name="ck_adjudications_reviewer"),
    )
    op.create_index("ix_adjudications_case", "adjudications", ["run_id", "task_id", "case_id"])


def downgrade() -> None:
    op.drop_index("ix_adjudications_case", table_name="adjudications")
    op.drop_table("adjudications")
