"""The judge_qualifications table: one row per ``clineval judge qualify`` (``clineval.store.qualifications``),
append-only. A run's judge is matched on ``judge_key`` (model + prompt + prompt hash + settings, see
``clineval.judging.qualification.identity``); the newest row with that key is the qualification that applies.
API keys are never stored: ``settings`` holds only what changes the judge's answers.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-12
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "judge_qualifications",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("qualification_id", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tenant_id", sa.String(255), nullable=False, server_default="default"),
        sa.Column("judge_key", sa.String(64), nullable=False),
        sa.Column("judge_model", sa.String(255), nullable=False),
        sa.Column("served_model", sa.String(255), nullable=True),
        sa.Column("judge_endpoint", sa.Text(), nullable=False, server_default=""),
        sa.Column("prompt", sa.String(255), nullable=False),
        sa.Column("prompt_hash", sa.String(64), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("settings_hash", sa.String(64), nullable=False),
        sa.Column("samples", sa.SmallInteger(), nullable=False),
        sa.Column("vote_samples", sa.SmallInteger(), nullable=True),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("suite", sa.Text(), nullable=False),
        sa.Column("task_id", sa.Text(), nullable=False),
        sa.Column("labels_hash", sa.String(64), nullable=False),
        sa.Column("labels_source", sa.String(16), nullable=False),
        sa.Column("labels_ref", sa.Text(), nullable=False),
        sa.Column("n_labelled", sa.Integer(), nullable=False),
        sa.Column("reviewers", sa.SmallInteger(), nullable=False),
        sa.Column("thresholds", sa.JSON(), nullable=False),
        sa.Column("figures", sa.JSON(), nullable=False),
        sa.Column("qualified", sa.Boolean(), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("clineval_version", sa.String(32), nullable=False),
        sa.CheckConstraint(
            "labels_source IN ('file', 'adjudications')", name="ck_judge_qualifications_source"
        ),
        sa.CheckConstraint("samples >= 2", name="ck_judge_qualifications_samples"),
    )
    op.create_index("ix_judge_qualifications_key", "judge_qualifications", ["judge_key", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_judge_qualifications_key", table_name="judge_qualifications")
    op.drop_table("judge_qualifications")
