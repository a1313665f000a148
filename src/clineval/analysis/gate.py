"""The regression gate: a candidate run's metrics against a promoted baseline snapshot.

Every float metric of a task that is not a count or an interval is a row of the gate with a *direction*
(higher or lower is better) and a *role* (gate or track), looked up in the table of
:mod:`clineval.analysis.gate_roles`: by default tier 1/2 metrics gate, tier 3 ``guideline_adherence``
gates, tier 4 is tracked, metrics of untiered scorers (MCQ ``accuracy``, DDx ``recall``...) gate when
higher is better, and lower-is-better rates (failed, unparsed, latency percentiles) are tracked. A
:class:`~clineval.analysis.gate_roles.RoleChoice` (``--metrics``/``--track``, or stored in the baseline)
overrides the defaults.

Strict rule (``evaluate_strict``), per gating row: ``candidate >= baseline`` (``<=`` when lower is
better). For tier 3 ``guideline_adherence`` the rule also applies to every value of the ``condition``
stratum (when the task stratifies by it): a regression on ANY condition blocks, even when the mean
improves. A baseline value that is NaN (not scorable) gates nothing; a candidate that lacks a gating
metric, or has NaN where the baseline had a value, fails it. Strict mode has no p-values.

Statistical mode: :mod:`clineval.analysis.gate_statistical`. A gate with no gating metric in common
(:attr:`GateResult.n_compared` = 0) decides nothing; the caller refuses it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from clineval.analysis.gate_roles import (
    ADHERENCE,
    RoleChoice,
    direction_of,
    is_gate_metric,
    is_latency_percentile,
)
from clineval.core.helpers.columns import TaskColumns, columns_of
from clineval.core.protocols import Scorer
from clineval.core.run import MetricValue, RunResult
from clineval.core.score import CaseResult
from clineval.metrics.aggregate import breakdown_plan, scorer_values

CONDITION = "condition"
MODES = ("strict", "statistical")
_TOLERANCE = 1e-12  # float noise only: identical runs must pass


@dataclass(frozen=True)
class GateRow:
    """One metric's comparison. ``status``: ``pass``, ``fail`` or ``tracked``."""

    task: str
    metric: str
    tier: int | None
    baseline: float | None
    candidate: float | None
    status: str
    stratum: str = ""  # e.g. "condition=copd"; empty for the task-level value
    p: float | None = None  # statistical mode: the Holm-adjusted p-value of the paired test
    ci: tuple[float, float] | None = None  # statistical mode: 95% paired bootstrap interval of the delta
    note: str = ""  # statistical mode: the test used, or why the strict rule applied
    direction: str = "higher"  # "higher" or "lower" is better (gate_roles.METRIC_RULES)

    @property
    def role(self) -> str:
        """``gate`` (the row decides: pass or fail) or ``track`` (shown, never decides)."""
        return "track" if self.status == "tracked" else "gate"

    @property
    def compared(self) -> bool:
        """A gating row with a baseline value and the metric in the candidate: it decided something."""
        return self.role == "gate" and _finite(self.baseline) and self.candidate is not None

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.candidate is None:
            return None
        return self.candidate - self.baseline

    @property
    def label(self) -> str:
        return f"{self.metric} ({self.stratum})" if self.stratum else self.metric


@dataclass(frozen=True)
class GateResult:
    run_id: str
    baseline_name: str
    baseline_version: int
    tenant: str
    mode: str
    rows: list[GateRow] = field(default_factory=list)

    @property
    def failures(self) -> list[GateRow]:
        return [r for r in self.rows if r.status == "fail"]

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def n_gating(self) -> int:
        return sum(1 for r in self.rows if r.role == "gate")

    @property
    def n_tracked(self) -> int:
        return sum(1 for r in self.rows if r.role == "track")

    @property
    def n_compared(self) -> int:
        """Gating rows that compared two values (0: the gate gated nothing)."""
        return sum(1 for r in self.rows if r.compared)

    def details(self) -> dict[str, Any]:
        """JSON-ready rows (with delta and role) for the ``gate_results`` table."""
        rows = [{**asdict(r), "delta": r.delta, "role": r.role} for r in self.rows]
        counts = {"n_gating": self.n_gating, "n_tracked": self.n_tracked}
        return {"rows": rows, "n_failed": len(self.failures), **counts}


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def metric_tiers(results: Sequence[CaseResult], scorers: Sequence[Scorer]) -> dict[str, int | None]:
    """:func:`metric_tiers_of_columns` over one task's results."""
    return metric_tiers_of_columns(columns_of(results, breakdown_plan(scorers), ()), scorers)


def metric_tiers_of_columns(columns: TaskColumns, scorers: Sequence[Scorer]) -> dict[str, int | None]:
    """``metric key -> tier`` of the scorer that produces it (None: untiered), keyed as aggregation keys
    them (``<scorer>.<key>`` when two scorers produce the same key)."""
    per_scorer = [(s, set(scorer_values(s, columns))) for s in scorers]
    seen = Counter(key for _, keys in per_scorer for key in keys)
    tiers: dict[str, int | None] = {}
    for scorer, keys in per_scorer:
        tier = getattr(scorer, "tier", None)
        for key in keys:
            tiers[f"{scorer.name}.{key}" if seen[key] > 1 else key] = tier if isinstance(tier, int) else None
    return tiers


def snapshot(
    run: RunResult, scorers: Mapping[str, Sequence[Scorer]], choice: RoleChoice | None = None
) -> dict[str, Any]:
    """The JSON a baseline stores: per task the scores, strata, metric tiers and the dataset's hash; with
    ``choice``, the metrics named to gate (``gate_metrics``) and to track (``track_metrics``)."""
    tasks: dict[str, Any] = {}
    for spec in run.info.suite.tasks:
        agg = run.aggregates.get(spec.id)
        if agg is None:
            continue
        task_scorers = scorers.get(spec.id, ())
        if run.columns is not None and spec.id in run.columns:
            tiers = metric_tiers_of_columns(run.columns[spec.id], task_scorers)
        else:
            tiers = metric_tiers([r for r in run.results if r.task_id == spec.id], task_scorers)
        tasks[spec.id] = {
            "scores": dict(agg.scores),
            "strata": agg.strata,
            "tiers": tiers,
            "stratify": list(spec.stratify),
            "dataset": {"type": spec.dataset.type, "content_hash": spec.dataset.content_hash},
        }
    suite = run.info.suite
    snap: dict[str, Any] = {
        "run_id": run.run_id,
        "suite": suite.name,
        "limit": suite.limit,
        "seed": suite.seed,
        "tasks": tasks,
    }
    if choice:
        snap |= {"gate_metrics": list(choice.gate), "track_metrics": list(choice.track)}
    return snap


def stored_choice(snap: Mapping[str, Any]) -> RoleChoice:
    """The metrics a baseline was promoted with (``--gate-metrics``/``--track-metrics``); empty if none."""
    return RoleChoice.of(snap.get("gate_metrics") or (), snap.get("track_metrics") or ())


def mismatch(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> str | None:
    """Why the two snapshots are not comparable (different tasks, datasets or sampling), or None."""
    tasks_b, tasks_c = baseline.get("tasks", {}), candidate.get("tasks", {})
    if set(tasks_b) != set(tasks_c):
        return f"the candidate's tasks {sorted(tasks_c)} differ from the baseline's {sorted(tasks_b)}"
    for task in sorted(tasks_b):
        if tasks_b[task].get("dataset") != tasks_c[task].get("dataset"):
            return f"task {task}: the candidate was scored on a different dataset than the baseline"
    for key in ("limit", "seed"):
        if baseline.get(key) != candidate.get(key):
            ours, theirs = candidate.get(key), baseline.get(key)
            return f"the candidate's --{key} ({ours}) differs from the baseline's ({theirs})"
    return None


def _float(value: MetricValue | Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, float):
        return None
    return value


def is_headline(key: str, value: MetricValue | Any) -> bool:
    """A float metric that is not an interval, a count, or a latency percentile (``latency_p50_<stage>``,
    ``latency_p95_<stage>``: the gate-role table's families, so ``latency_pass_rate`` is a headline)."""
    short = key.rsplit(".", 1)[-1]
    return _float(value) is not None and not short.endswith("_ci") and not is_latency_percentile(key)


def not_worse(baseline: float, candidate: float, direction: str) -> bool:
    """The strict rule: ``candidate >= baseline`` (``<=`` when lower is better), up to float noise."""
    if direction == "lower":
        return candidate <= baseline + _TOLERANCE
    return candidate >= baseline - _TOLERANCE


def _compare(task: str, key: str, tier: int | None, base: Any, cand: Any, stratum: str = "") -> GateRow:
    b, c = _float(base), _float(cand)
    direction = direction_of(key)
    if b is None or math.isnan(b):
        status = "pass"
    elif c is None or math.isnan(c):
        status = "fail"
    else:
        status = "pass" if not_worse(b, c, direction) else "fail"
    return GateRow(task, key, tier, b, c, status, stratum, direction=direction)


def _is_adherence(key: str) -> bool:
    return key == ADHERENCE or key.endswith(f".{ADHERENCE}")


def _task_rows(
    task: str, base: Mapping[str, Any], cand: Mapping[str, Any], choice: RoleChoice
) -> list[GateRow]:
    b_scores, c_scores = base.get("scores", {}), cand.get("scores", {})
    tiers: Mapping[str, int | None] = base.get("tiers", {})
    gating: list[GateRow] = []
    tracked: list[GateRow] = []
    for key, value in sorted(b_scores.items(), key=lambda kv: (tiers.get(kv[0]) or 9, kv[0])):
        if not is_gate_metric(key, value):
            continue
        tier = tiers.get(key)
        role = choice.role(key, tier)
        if role != "gate":
            row = GateRow(task, key, tier, _float(value), _float(c_scores.get(key)), "tracked")
            tracked.append(replace(row, direction=direction_of(key)))
            continue
        gating.append(_compare(task, key, tier, value, c_scores.get(key)))
        if tier == 3 and _is_adherence(key):  # every condition must hold too
            b_cond = base.get("strata", {}).get(CONDITION, {})
            c_cond = cand.get("strata", {}).get(CONDITION, {})
            for condition in sorted(b_cond):
                b_val = b_cond[condition].get(key)
                c_val = c_cond.get(condition, {}).get(key)
                gating.append(_compare(task, key, tier, b_val, c_val, f"{CONDITION}={condition}"))
    return gating + tracked


def gate_rows(baseline: Mapping[str, Any], candidate: Mapping[str, Any], choice: RoleChoice) -> list[GateRow]:
    """Every task's rows under the strict rule: gating rows first, then tracked ones."""
    rows: list[GateRow] = []
    cand_tasks = candidate.get("tasks", {})
    for task, base in sorted(baseline.get("tasks", {}).items()):
        rows.extend(_task_rows(task, base, cand_tasks.get(task, {}), choice))
    return rows


def evaluate_strict(
    baseline: Mapping[str, Any],
    candidate: Mapping[str, Any],
    *,
    run_id: str,
    name: str,
    version: int,
    tenant: str,
    choice: RoleChoice | None = None,
) -> GateResult:
    """The literal rule: every gating metric not worse than the baseline (see the module docstring).
    ``choice``: the metrics named to gate/track; None = the baseline's stored choice, else the defaults."""
    chosen = choice if choice else stored_choice(baseline)
    rows = gate_rows(baseline, candidate, chosen)
    return GateResult(run_id, name, version, tenant, "strict", rows)
