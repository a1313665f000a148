"""ix_case_results_run_row: ``case_results (run_id, id)``, so a run's cases are read in insertion order from
the index (issue 26). The viewer's cases page orders by ``id`` within a run: without it a filtered page sorted
every matching row of the run in a temporary b-tree before taking 50 (a 300,000-case run: 2-6 s a filter),
and a page by offset read every row before it; with it the page walks the index and stops at 51 rows, and an
offset skips index entries, not rows.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_case_results_run_row", "case_results", ["run_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_case_results_run_row", table_name="case_results")
