"""The guard's configuration and results: ``GuardConfig``, ``CheckResult``, ``Verdict``.

Everything a check needs (scope terms, red flags, drug vocabulary) is built when the config is built,
so ``check()`` itself does no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clineval.cds.guard.red_flags import DEFAULT_RED_FLAGS, RedFlagSet
from clineval.cds.guard.scope import DEFAULT_SCOPE, DRUGS, Scope
from clineval.cds.guard.terms import TermIndex

CHECK_NAMES: tuple[str, ...] = (
    "schema",
    "citation_grounding",
    "scope",
    "contraindications",
    "escalation",
    "latency",
)
TOTAL = "total"  # the latency budget key of the end-to-end latency


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's outcome: ``passed`` True / False, or None when the check does not apply.

    ``reasons`` say why (every violation for a failure); ``error`` is True when the check could not be
    evaluated (it raised, or the recommendation could not be parsed); ``data`` holds machine-readable
    details (offending terms, red flags...)."""

    check: str
    passed: bool | None
    reasons: list[str] = field(default_factory=list)
    error: bool = False
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The guard's decision: ``passed`` is False iff ``failures`` is non-empty."""

    passed: bool
    failures: list[CheckResult]
    results: list[CheckResult]

    def result(self, check: str) -> CheckResult | None:
        return next((r for r in self.results if r.check == check), None)


@dataclass(frozen=True)
class GuardConfig:
    """How the guard checks a recommendation.

    - ``fail_closed`` (default True): a check that raises, or a recommendation that cannot be parsed,
      fails the verdict (with the reason); when False such errors are recorded (``error=True``) but do
      not fail it. The guard never raises to its caller either way.
    - ``scope``: the clinical scope (``Scope.load(path)``; cardiopulmonary by default).
    - ``red_flags``: the red-flag set (``RedFlagSet.load(path)``; the packaged one by default).
    - ``checks``: the checks to run (``CHECK_NAMES``).
    - ``latency_budget_s``: per-stage budgets in seconds (``{"retrieval": 0.5, "total": 3.0}``);
      stages without a budget are not checked.
    - ``required_fields``: structured-output fields a recommendation must have non-empty.
    - ``allow_extra_fields``: when False, top-level keys outside the schema are violations.
    """

    fail_closed: bool = True
    scope: Scope = DEFAULT_SCOPE
    red_flags: RedFlagSet = DEFAULT_RED_FLAGS
    checks: frozenset[str] = frozenset(CHECK_NAMES)
    latency_budget_s: Mapping[str, float] = field(default_factory=dict)
    required_fields: tuple[str, ...] = ("recommended_actions",)
    allow_extra_fields: bool = True
    drugs: TermIndex = DRUGS

    def __post_init__(self) -> None:
        unknown = set(self.checks) - set(CHECK_NAMES)
        if unknown:
            raise ValueError(f"unknown guard checks {sorted(unknown)}; use some of {list(CHECK_NAMES)}")
        for stage, budget in self.latency_budget_s.items():
            if not budget > 0:
                raise ValueError(f"latency budget of {stage!r} must be > 0 seconds, got {budget!r}")

    @classmethod
    def load(
        cls,
        *,
        scope_path: str | Path | None = None,
        red_flags_path: str | Path | None = None,
        **options: Any,
    ) -> GuardConfig:
        """A config whose scope and red flags come from YAML files (read here, once)."""
        if "checks" in options:
            options["checks"] = frozenset(options["checks"])
        return cls(
            scope=Scope.load(scope_path) if scope_path is not None else DEFAULT_SCOPE,
            red_flags=RedFlagSet.load(red_flags_path) if red_flags_path is not None else DEFAULT_RED_FLAGS,
            **options,
        )


DEFAULT_CONFIG = GuardConfig()
