"""The runtime guard: Tier 1 structural and safety checks of a CDS recommendation, for production use.

::

    from clineval.cds.guard import GuardConfig, check

    verdict = check(recommendation, patient=patient_record)          # StructuredOutput | Mapping | JSON
    if not verdict.passed:
        for failure in verdict.failures:
            log(failure.check, failure.reasons)

``check`` never raises and does no I/O (scope terms and red flags are loaded at import or when a
``GuardConfig`` is built); it is fail-closed by default. A pure layer: imports only ``core`` and ``text``.
See ``docs/cds/tier1_checks.md``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.cds.guard.checks import (
        CHECKS,
        check,
        citation_check,
        contraindications_check,
        escalation_check,
        escalation_text,
        latency_check,
        parse,
        schema_check,
        scope_check,
    )
    from clineval.cds.guard.config import (
        CHECK_NAMES,
        DEFAULT_CONFIG,
        TOTAL,
        CheckResult,
        GuardConfig,
        Verdict,
    )
    from clineval.cds.guard.red_flags import DEFAULT_RED_FLAGS, RedFlag, RedFlagHit, RedFlagSet
    from clineval.cds.guard.scope import DEFAULT_SCOPE, DRUGS, Scope, drugs_named
    from clineval.cds.guard.terms import TermIndex

__all__ = [
    "CHECKS",
    "CHECK_NAMES",
    "DEFAULT_CONFIG",
    "DEFAULT_RED_FLAGS",
    "DEFAULT_SCOPE",
    "DRUGS",
    "TOTAL",
    "CheckResult",
    "GuardConfig",
    "RedFlag",
    "RedFlagHit",
    "RedFlagSet",
    "Scope",
    "TermIndex",
    "Verdict",
    "check",
    "citation_check",
    "contraindications_check",
    "drugs_named",
    "escalation_check",
    "escalation_text",
    "latency_check",
    "parse",
    "schema_check",
    "scope_check",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.cds.guard.checks": (
            "CHECKS",
            "check",
            "citation_check",
            "contraindications_check",
            "escalation_check",
            "escalation_text",
            "latency_check",
            "parse",
            "schema_check",
            "scope_check",
        ),
        "clineval.cds.guard.config": (
            "CHECK_NAMES",
            "CheckResult",
            "DEFAULT_CONFIG",
            "GuardConfig",
            "TOTAL",
            "Verdict",
        ),
        "clineval.cds.guard.red_flags": ("DEFAULT_RED_FLAGS", "RedFlag", "RedFlagHit", "RedFlagSet"),
        "clineval.cds.guard.scope": ("DEFAULT_SCOPE", "DRUGS", "Scope", "drugs_named"),
        "clineval.cds.guard.terms": ("TermIndex",),
    },
)
