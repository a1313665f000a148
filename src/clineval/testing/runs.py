"""What two runs of the same cases must agree on, case by case (a sharded run and an unsharded one)."""

from __future__ import annotations

from typing import Any

from clineval.core import RunResult


def case_records(run: RunResult) -> dict[tuple[str, str], dict[str, Any]]:
    """``(task_id, case_id) -> {scores, failed, reference, metadata}`` of every result of ``run``."""
    return {
        (r.task_id, r.case_id): {
            "scores": {name: s.model_dump(mode="json") for name, s in r.scores.items()},
            "failed": r.failed,
            "reference": r.reference,
            "metadata": r.metadata,
        }
        for r in run.results
    }
