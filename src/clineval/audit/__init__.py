"""The metric robustness audit (issue 22 item 1): can a system that knows nothing raise a metric?

Each task of a suite is scored, by its own scorers, on degenerate stand-in systems built from its own cases
(empty, refusal, a constant answer, every option, a copy of the question, hedging, DDx labels and transcript
tricks, every guideline action, every escalation term, every evidence type; ``clineval.audit.standins``).
Per headline and gating metric the report gives each stand-in's value beside the trivial baseline (the best
of the empty and constant answers) and flags a stand-in that beats the baseline by more than its interval
(``clineval.audit.model``). ``clineval audit SUITE``; ``audit_suite``, ``audit_task`` here; for tests of a
user's own scorers ``clineval.testing.audit``. Stand-ins are a registry: ``register_standin``.
Documentation and the table for every built-in task type: docs/runs/audit.md.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.audit.context import AuditContext
    from clineval.audit.model import AuditReport, MetricAudit, Reached, TaskAudit
    from clineval.audit.registry import (
        STANDINS,
        StandIn,
        Variant,
        register_standin,
        structured_output,
        text_output,
    )
    from clineval.audit.run import audit_suite, audit_task, standins_named

__all__ = [
    "STANDINS",
    "AuditContext",
    "AuditReport",
    "MetricAudit",
    "Reached",
    "StandIn",
    "TaskAudit",
    "Variant",
    "audit_suite",
    "audit_task",
    "register_standin",
    "standins_named",
    "structured_output",
    "text_output",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.audit.context": ("AuditContext",),
        "clineval.audit.model": ("AuditReport", "MetricAudit", "Reached", "TaskAudit"),
        "clineval.audit.registry": (
            "STANDINS",
            "StandIn",
            "Variant",
            "register_standin",
            "structured_output",
            "text_output",
        ),
        "clineval.audit.run": ("audit_suite", "audit_task", "standins_named"),
    },
)
