"""The metric robustness audit as a test helper: audit your own scorers on your own cases.

::

    from clineval.testing.audit import assert_not_inflated, audit_scorers

    def test_my_scorer_cannot_be_gamed():
        audit = audit_scorers(my_cases, [MyScorer()])
        assert_not_inflated(audit)

``assert_not_inflated`` fails with one line per (metric, stand-in) a stand-in inflates (docs/runs/audit.md for
the rules), leaving out the pairs named in ``allowed`` (known findings, documented where they are kept).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from clineval.audit.model import AuditReport, TaskAudit
from clineval.audit.run import audit_task
from clineval.core import Case, Scorer


def audit_scorers(
    cases: Sequence[Case],
    scorers: Sequence[Scorer],
    *,
    standins: Sequence[str] | None = None,
    task_id: str = "task",
) -> TaskAudit:
    """Every stand-in (``standins``: names, default all) through ``scorers`` on ``cases``."""
    return audit_task(task_id, cases, scorers, standins=standins)


def inflated(audit: TaskAudit | AuditReport, *, role: str | None = "gate") -> set[tuple[str, str, str]]:
    """``(task, metric, stand-in)`` for each inflated metric of ``role`` (``None``: gating and tracked)."""
    tasks = audit.tasks if isinstance(audit, AuditReport) else [audit]
    return {(t.task_id, metric, standin) for t in tasks for metric, standin in t.inflated(role)}


def assert_not_inflated(
    audit: TaskAudit | AuditReport,
    *,
    allowed: Iterable[tuple[str, str, str]] = (),
    role: str | None = "gate",
) -> None:
    """AssertionError naming every inflated metric of ``role`` that is not in ``allowed``."""
    tasks = audit.tasks if isinstance(audit, AuditReport) else [audit]
    known = set(allowed)
    lines = []
    for task in tasks:
        for m in task.metrics:
            for standin in m.inflated:
                if (role is None or m.role == role) and (task.task_id, m.metric, standin) not in known:
                    value = m.reached[standin].value
                    lines.append(
                        f"{task.task_id}: {m.metric} ({m.role}) inflated by {standin}: {value:.4f} "
                        f"> bound {m.bound:.4f} (baseline {m.baseline.value:.4f}, {m.baseline_from})"
                    )
    assert not lines, "metrics a degenerate stand-in inflates:\n" + "\n".join(lines)
