"""Run liveness: the owning process (pid, host) and the writer's heartbeat; the ``interrupted`` status.

A ``running`` run whose process died is shown as ``interrupted`` (``clineval.store.liveness``); Ctrl-C
stores that status. Runs stored before this revision have no heartbeat: a ``running`` one is shown as
``interrupted`` (no process can still be writing it through an older clineval and a newer schema).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_OLD = "status IN ('running', 'finished', 'partial', 'failed')"
_NEW = "status IN ('running', 'finished', 'partial', 'failed', 'interrupted')"


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("owner_pid", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("owner_host", sa.String(255), nullable=True))
        batch.drop_constraint("ck_runs_status", type_="check")
        batch.create_check_constraint("ck_runs_status", _NEW)


def downgrade() -> None:
    op.execute("UPDATE runs SET status = 'running' WHERE status = 'interrupted'")
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint("ck_runs_status", type_="check")
        batch.create_check_constraint("ck_runs_status", _OLD)
        batch.drop_column("owner_host")
        batch.drop_column("owner_pid")
        batch.drop_column("heartbeat_at")
