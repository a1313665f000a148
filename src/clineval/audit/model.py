"""What the audit found, and the two rules it applies: the trivial baseline and the inflation flag.

**Which metrics.** Per task, every float metric a scorer reports whose default gate role
(``clineval.analysis.gate_roles.default_role``, with the tier of the scorer that reports it) is ``gate``,
and every *headline* metric (one with an interval beside it, as the reports pick them:
``<metric>_ci``) that is higher-is-better. Lower-is-better metrics (failed, unparsed, error rates; latency
percentiles) are left out: a stand-in raising them is the opposite of inflating them. A metric that is NaN
for every stand-in (it needs a judge that did not run, or no case is applicable) is listed as not audited.

**Trivial baseline.** For every metric the same rule: the best value any variant of the ``baseline``
stand-ins reaches (``empty`` and ``constant``: registry ``baseline=True``). Per kind of task that is:

- multiple choice: the best constant letter's accuracy (chance, or the majority letter's share);
- differential diagnosis: an empty differential, or the 1, 3, 5 or 10 most frequent diagnoses of the sample;
- CDS: an empty answer, or each of the 5 most frequent actions / problems with each severity;
- free text (rubric): an empty or a generic answer.

**Inflated.** A stand-in inflates a metric when its best variant's value exceeds the baseline's upper
bound: the largest upper bound of the 95% interval of any baseline variant, read from the metric's own
``<metric>_ci`` (Wilson for proportions, bootstrap or the no-spread bound for means:
``clineval.metrics.intervals``); for a metric with no interval, the Wilson upper bound of value x n events
in the task's n cases. So a stand-in is flagged only when it is better than every trivial system by more
than sampling noise on these cases allows. Where no baseline variant gives the metric a value (NaN), the
baseline counts as 0. Every stand-in is scored on the same cases, so the comparison is
paired; the bound is conservative for it.

**Exit code** (``clineval audit``): 1 when a stand-in inflates a metric that gates, 0 otherwise (an inflated
tracked metric is shown, but does not gate a release), 2 on bad input.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clineval.core import MetricValue
from clineval.metrics.intervals import wilson_interval

EPS = 1e-9


@dataclass(frozen=True)
class Reached:
    """A stand-in's best value of one metric: the value (NaN: not computed), its variant and interval."""

    value: float
    variant: str = ""
    ci: tuple[float, float] | None = None

    @property
    def finite(self) -> bool:
        return math.isfinite(self.value)


NOT_REACHED = Reached(math.nan)


def _float(value: MetricValue | Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def reached_in(scores: Mapping[str, MetricValue], metric: str, variant: str) -> Reached:
    ci = scores.get(f"{metric}_ci")
    pair = None
    if isinstance(ci, list | tuple) and len(ci) == 2 and all(math.isfinite(_float(x)) for x in ci):
        pair = (_float(ci[0]), _float(ci[1]))
    return Reached(_float(scores.get(metric)), variant, pair)


def best(candidates: list[Reached]) -> Reached:
    """The highest finite value (the first of equals), else NaN."""
    finite = [c for c in candidates if c.finite]
    return max(finite, key=lambda c: c.value) if finite else NOT_REACHED


def bounds(reached: Reached, n: int) -> tuple[float, float]:
    """The 95% interval of a baseline value (module docstring); (NaN, NaN) when it has no value."""
    if not reached.finite:
        return math.nan, math.nan
    if reached.ci is not None:
        return min(reached.ci[0], reached.value), max(reached.ci[1], reached.value)
    if 0.0 <= reached.value <= 1.0 and n > 0:
        return wilson_interval(round(reached.value * n), n)
    return reached.value, reached.value


@dataclass
class MetricAudit:
    """One metric of one task: its role, the trivial baseline and every stand-in's best value."""

    metric: str
    tier: int | None
    role: str  # gate | track
    headline: bool
    baseline: Reached
    baseline_from: str  # the baseline stand-in that reached it
    bound: float  # the largest upper bound of a baseline variant
    lower: float  # the lower bound of the best baseline variant
    reached: dict[str, Reached] = field(default_factory=dict)

    @property
    def inflated(self) -> list[str]:
        """The probe stand-ins whose value exceeds the baseline's upper bound."""
        bound = self.bound if math.isfinite(self.bound) else 0.0  # no trivial value: the baseline is 0
        return [s for s, r in self.reached.items() if r.finite and r.value > bound + EPS]

    def lowered_by(self, standin: str) -> bool:
        """Whether ``standin`` is below the baseline's lower bound (worse than trivial beyond noise)."""
        r = self.reached.get(standin)
        return r is not None and r.finite and math.isfinite(self.lower) and r.value < self.lower - EPS

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "tier": self.tier,
            "role": self.role,
            "headline": self.headline,
            "baseline": _num(self.baseline.value),
            "baseline_from": f"{self.baseline_from} ({self.baseline.variant})".replace(" ()", ""),
            "baseline_upper": _num(self.bound),
            "baseline_lower": _num(self.lower),
            "standins": {
                name: {"value": _num(r.value), "variant": r.variant, "ci": list(r.ci) if r.ci else None}
                for name, r in self.reached.items()
            },
            "inflated_by": self.inflated,
        }


def _num(value: float) -> float | None:
    return value if math.isfinite(value) else None


@dataclass
class TaskAudit:
    task_id: str
    n: int
    standins: list[str]  # applicable, in registry order
    variants: dict[str, list[str]]
    metrics: list[MetricAudit]
    not_audited: dict[str, str] = field(default_factory=dict)  # metric -> why
    not_applicable: list[str] = field(default_factory=list)

    def inflated(self, role: str | None = None) -> list[tuple[str, str]]:
        """(metric, stand-in) pairs flagged, of metrics with ``role`` (all when None)."""
        return [(m.metric, s) for m in self.metrics if role in (None, m.role) for s in m.inflated]

    def lowered(self, standin: str) -> list[str]:
        """The gating metrics ``standin`` pushes below their baseline's lower bound: what a gate would see
        of it beside the metric it inflates (shown with a finding; it does not change the exit code)."""
        return [m.metric for m in self.metrics if m.role == "gate" and m.lowered_by(standin)]

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "n": self.n,
            "standins": {name: self.variants.get(name, []) for name in self.standins},
            "not_applicable": self.not_applicable,
            "metrics": [m.as_dict() for m in self.metrics],
            "not_audited": self.not_audited,
        }


@dataclass
class AuditReport:
    suite: str
    tasks: list[TaskAudit]
    limit: int | None = None
    seed: int = 0
    judge: bool = False
    standins: dict[str, str] = field(default_factory=dict)  # name -> description

    def inflated_gating(self) -> list[tuple[str, str, str]]:
        return [(t.task_id, m, s) for t in self.tasks for m, s in t.inflated("gate")]

    def inflated_tracked(self) -> list[tuple[str, str, str]]:
        return [(t.task_id, m, s) for t in self.tasks for m, s in t.inflated("track")]

    @property
    def exit_code(self) -> int:
        return 1 if self.inflated_gating() else 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "limit": self.limit,
            "seed": self.seed,
            "judge": self.judge,
            "standins": self.standins,
            "rules": {
                "baseline": "best value of the baseline stand-ins (empty, constant: best variant)",
                "inflated": "a stand-in's best value > the largest upper 95% bound of any baseline variant",
                "exit": "1 when a metric that gates is inflated, else 0",
            },
            "inflated_gating": [list(x) for x in self.inflated_gating()],
            "lowered_with_inflation": {
                f"{t.task_id}/{s}": t.lowered(s)
                for t in self.tasks
                for _, s in t.inflated("gate")
                if t.lowered(s)
            },
            "inflated_tracked": [list(x) for x in self.inflated_tracked()],
            "tasks": [t.as_dict() for t in self.tasks],
        }
