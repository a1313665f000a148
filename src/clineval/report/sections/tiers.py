"""The four-tier scorecard: a task's metrics grouped by the tier its scorers declare (display only).

Scorers of the four-tier CDS suite carry a ``tier`` (1: structural and safety checks, 2: retrieval /
citations, 3: guideline adherence, 4: scoped LLM judge, never gates). Each scorer, as the caller built it
from the stored spec (``report.context``), is asked which metrics it reports (its metrics on no case); a
metric goes to the tier of the scorer that reports it. Tier 3's per-rule ``adherence_<rule>`` /
``n_applicable_<rule>`` pairs become one rule | n applicable | adherence | CI table. A task none of whose
scorers has a tier, or whose scorers were not given, gets no scorecard (its metrics stay listed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from clineval.report.formatting import fmt_count, fmt_interval, fmt_value, interval, other_metrics
from clineval.report.sections.judge_qualification import qualification_lines

if TYPE_CHECKING:
    from clineval.core import MetricValue, RunResult
TIER_NAMES = {
    1: "Tier 1: structural and safety checks",
    2: "Tier 2: retrieval / citations",
    3: "Tier 3: guideline adherence",
    4: "Tier 4: scoped LLM judge (never gates)",
}
RULE_PREFIX, APPLICABLE_PREFIX = "adherence_", "n_applicable_"
JUDGE_ERROR_METRIC = "judge_sample_error_rate"


@dataclass(frozen=True)
class TierMetric:
    name: str
    value: str
    interval: str


@dataclass(frozen=True)
class RuleRow:
    rule: str
    n_applicable: str
    adherence: str
    interval: str


@dataclass(frozen=True)
class TierView:
    tier: int
    title: str
    metrics: list[TierMetric]
    rules: list[RuleRow]  # tier 3: one row per guideline rule
    judge_error_rate: str | None = None  # tier 4: the share of judge samples that failed
    judge_qualification: tuple[str, ...] = ()  # tier 4: the judge's qualification as the run recorded it


def _metric_names(scorer: object) -> list[str]:
    """The metric keys a scorer reports (its metrics computed on no case), intervals left out."""
    names: list[str] = []
    for metric in getattr(scorer, "metrics", ()):
        try:
            probe = metric.compute([])
        except Exception:  # a metric that cannot run on nothing names nothing
            continue
        names += [k for k in probe if not k.endswith("_ci")]
    return names


def _rule_rows(scores: Mapping[str, MetricValue]) -> list[RuleRow]:
    rows = []
    for key in scores:
        if not key.startswith(RULE_PREFIX) or key.endswith("_ci"):
            continue
        rule = key.removeprefix(RULE_PREFIX)
        rows.append(
            RuleRow(
                rule=rule,
                n_applicable=fmt_count(scores.get(APPLICABLE_PREFIX + rule)),
                adherence=fmt_value("adherence_rate", scores.get(key)),
                interval=fmt_interval("adherence_rate", interval(scores, key)),
            )
        )
    return rows


def _is_rule_key(key: str) -> bool:
    return key.startswith((RULE_PREFIX, APPLICABLE_PREFIX))


def tier_of_metrics(scorers: Sequence[object], scores: Mapping[str, MetricValue]) -> dict[str, int]:
    """``metric -> tier`` for every stored metric a tiered scorer reports (prefix match for the metrics a
    scorer names after its stages or rules, e.g. ``latency_p50_<stage>``, ``adherence_<rule>``)."""
    found: dict[str, int] = {}
    for scorer in scorers:
        tier = getattr(scorer, "tier", None)
        if not isinstance(tier, int) or isinstance(tier, bool):
            continue
        for name in _metric_names(scorer):
            found.setdefault(name, tier)
        if tier == 3:
            found.update({k: 3 for k in scores if _is_rule_key(k)})
        scorer_name = str(getattr(scorer, "name", ""))
        if scorer_name:
            found.update({k: tier for k in scores if k.startswith(f"{scorer_name}_p") and k not in found})
    return {k: t for k, t in found.items() if k in scores}


def build_tiers(scorers: Sequence[object], scores: Mapping[str, MetricValue]) -> list[TierView]:
    tiers = tier_of_metrics(scorers, scores)
    if not tiers:
        return []
    views = []
    for tier in sorted(set(tiers.values())):
        names = [m for m in other_metrics(scores) + _headline_first(scores) if tiers.get(m) == tier]
        names = list(dict.fromkeys(sorted(names, key=list(scores).index)))
        shown = [m for m in names if not _is_rule_key(m)]
        judge = scores.get(JUDGE_ERROR_METRIC) if tier == 4 else None
        views.append(
            TierView(
                tier=tier,
                title=TIER_NAMES.get(tier, f"Tier {tier}"),
                metrics=[
                    TierMetric(m, fmt_value(m, scores.get(m)), fmt_interval(m, interval(scores, m)))
                    for m in shown
                ],
                rules=_rule_rows(scores) if tier == 3 else [],
                judge_error_rate=fmt_value(JUDGE_ERROR_METRIC, judge) if tier == 4 else None,
            )
        )
    return views


def _headline_first(scores: Mapping[str, MetricValue]) -> list[str]:
    return [k for k in scores if not k.endswith("_ci") and f"{k}_ci" in scores]


def run_tiers(run: RunResult, scorers: Mapping[str, Sequence[object]]) -> dict[str, list[TierView]]:
    """``task_id -> tier views`` for every task with tiered scorers (``scorers``: each task's scorers as
    built, see ``report.context``); {} when none is given."""
    views = {}
    qualification = qualification_lines(run)  # shown next to the tier-4 table (issue 28), never a gate
    for task_id, built in scorers.items():
        aggregate = run.aggregates.get(task_id)
        if aggregate is None:
            continue
        found = build_tiers(built, aggregate.scores)
        lines = tuple(qualification.get(task_id, ()))
        found = [replace(t, judge_qualification=lines) if t.tier == 4 else t for t in found]
        if found:
            views[task_id] = found
    return views
