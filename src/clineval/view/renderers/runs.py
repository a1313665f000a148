"""Run-page display pieces built from stored aggregates: system labels, tier scorecards, charts per
stratum for every headline metric, and the loud banners. Formatting is ``clineval.report``'s; nothing
here computes a metric."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from markupsafe import Markup

from clineval.core import MetricValue, SuiteSpec, TaskAggregate, TaskSpec
from clineval.core.system_identity import system_groups, system_name
from clineval.report.formatting import headline_metrics, interval, is_number
from clineval.report.sections.charts import stratum_chart
from clineval.report.sections.view import StratumTable, TaskView, task_view

FAILURE_LABELS = frozenset({"failed", "scorer_error", "judge_error", "ungraded"})
BANNER_SHARE = 0.5
JUDGE_ERROR_METRIC = "judge_sample_error_rate"


def system_label(task: TaskSpec, provenance: Mapping[str, Any] | None = None) -> str:
    """A short name for the system under test (``clineval.core.system_identity.system_name``: its model, else
    the name its options give, else its callable, service or file)."""
    return system_name(task.system)


def run_systems(suite: SuiteSpec) -> str:
    return ", ".join(g.name for g in system_groups(suite.tasks))


@dataclass(frozen=True)
class Chart:
    key: str
    metric: str
    svg: Markup


def charts(view: TaskView, aggregate: TaskAggregate) -> list[Chart]:
    """One bar chart per (stratum key, headline metric), not only the task's main metric."""
    found = []
    for table in view.strata:
        values = aggregate.strata.get(table.key, {})
        for metric in table.metrics:
            if not _numeric_metric(values, metric):
                continue
            rows = [
                replace(
                    row,
                    bar=_bar(values.get(row.value, {}).get(metric)),
                    ci=interval(values.get(row.value, {}), metric),
                )
                for row in table.rows
            ]
            chart_table = StratumTable(key=table.key, metrics=table.metrics, chart_metric=metric, rows=rows)
            found.append(Chart(table.key, metric, stratum_chart(chart_table)))
    return found


def _numeric_metric(values: Mapping[str, Mapping[str, MetricValue]], metric: str) -> bool:
    return any(
        isinstance(v.get(metric), int | float) and not isinstance(v.get(metric), bool)
        for v in values.values()
    )


def _bar(value: MetricValue) -> float | None:
    return float(value) if isinstance(value, int | float) and is_number(value) else None


def task_views(aggregates: Mapping[str, Any], order: list[str]) -> list[tuple[TaskView, TaskAggregate]]:
    parsed = {t: TaskAggregate.model_validate(a) for t, a in aggregates.items()}
    ids = order + [t for t in parsed if t not in order]
    return [(task_view(t, parsed[t]), parsed[t]) for t in ids if t in parsed]


def scorecards(suite: SuiteSpec, aggregates: Mapping[str, TaskAggregate]) -> dict[str, list[Any]]:
    """``task -> tier views`` (``clineval.report.sections.tiers``) for tasks whose scorers declare a tier."""
    try:
        from clineval.report.sections.tiers import build_tiers
        from clineval.runs.stored import scorers_for

        built = scorers_for(suite)
    except Exception:  # scorers that cannot be rebuilt here (moved files): no scorecard, metrics still listed
        return {}
    found = {}
    for task_id, scorers in built.items():
        aggregate = aggregates.get(task_id)
        if aggregate is not None:
            tiers = build_tiers(scorers, aggregate.scores)
            if tiers:
                found[task_id] = tiers
    return found


def banners(
    labels: Mapping[str, Mapping[str, Mapping[str, int]]],
    failures: Mapping[str, Mapping[str, int]],
    aggregates: Mapping[str, TaskAggregate],
) -> list[str]:
    """A line for each scorer, system or judge that failed on more than half of a task's cases."""
    found = []
    for task, aggregate in aggregates.items():
        n = aggregate.scores.get("n")
        total = int(n) if isinstance(n, int | float) and is_number(n) and n else 0
        failed = sum(failures.get(task, {}).values())
        if total and failed / total > BANNER_SHARE:
            found.append(f"task {task}: the system failed on {failed} of {total} cases")
        for scorer, counts in labels.get(task, {}).items():
            bad = sum(c for label, c in counts.items() if label in FAILURE_LABELS)
            cases = sum(counts.values())
            if cases and bad / cases > BANNER_SHARE and bad > failed:
                found.append(f"task {task}: scorer {scorer} failed on {bad} of {cases} cases")
        judge = aggregate.scores.get(JUDGE_ERROR_METRIC)
        if isinstance(judge, int | float) and is_number(judge) and judge > BANNER_SHARE:
            found.append(f"task {task}: the judge failed on {judge * 100:.0f}% of its samples")
    return found


def headline_cells(aggregates: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(task, metric, "83.0% [77.2, 87.6]")`` for the runs table: each task's headline metrics."""
    from clineval.report.formatting import fmt_metric

    cells = []
    for task, raw in aggregates.items():
        scores = raw.get("scores", {}) if isinstance(raw, Mapping) else {}
        cells += [(task, m, fmt_metric(scores, m)) for m in headline_metrics(scores)[:3]]
    return cells
