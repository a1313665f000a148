"""Run-page pieces of a tiered (four-tier CDS) task: tier-3 rule intervals filled in where the stored
aggregate has none (Wilson, from adherent / n applicable), the full metric list formatted for the collapsed
table, and the charts split into the ones shown and the ones folded away. Display only."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from clineval.core import MetricValue, TaskAggregate
from clineval.metrics.intervals import wilson_interval
from clineval.report.formatting import (
    fmt_count,
    fmt_interval,
    fmt_metric,
    fmt_value,
    interval,
    is_number,
    is_proportion,
    other_metrics,
)
from clineval.report.formatting import headline_metrics as _headline
from clineval.report.sections.tiers import APPLICABLE_PREFIX, RULE_PREFIX, TierView
from clineval.report.sections.view import TaskView

COUNT_KEYS = ("n", "n_failed", "n_unscored")


def rule_interval(scores: Mapping[str, MetricValue], rule: str) -> str:
    """``[lo, hi]`` (percent) of a rule's adherence: the stored interval, else Wilson from adherent / n."""
    stored = scores.get(f"{RULE_PREFIX}{rule}_ci")
    if isinstance(stored, list | tuple) and len(stored) == 2 and all(is_number(x) for x in stored):
        return fmt_interval("adherence_rate", (float(stored[0]), float(stored[1])))
    rate, n = scores.get(RULE_PREFIX + rule), scores.get(APPLICABLE_PREFIX + rule)
    if not (is_number(rate) and is_number(n)) or not isinstance(rate, int | float):
        return ""
    total = int(n) if isinstance(n, int | float) else 0
    if total <= 0:
        return ""
    adherent = min(max(round(float(rate) * total), 0), total)
    lo, hi = wilson_interval(adherent, total)
    return "" if math.isnan(lo) else fmt_interval("adherence_rate", (lo, hi))


def with_rule_intervals(tiers: Sequence[TierView], scores: Mapping[str, MetricValue]) -> list[TierView]:
    """The tier views with every tier-3 rule row's empty interval computed (see :func:`rule_interval`)."""
    return [
        replace(
            t,
            rules=[r if r.interval else replace(r, interval=rule_interval(scores, r.rule)) for r in t.rules],
        )
        for t in tiers
    ]


def as_proportion(name: str) -> str:
    """The name the report formatter reads as a proportion (adherence: a share of cases), else ``name``."""
    return "adherence_rate" if "adherence" in name and not is_proportion(name) else name


def with_percentages(tiers: Sequence[TierView], scores: Mapping[str, MetricValue]) -> list[TierView]:
    """Adherence metrics written as percentages like every other proportion."""
    found = []
    for t in tiers:
        metrics = [
            replace(
                m,
                value=fmt_value(alias, scores.get(m.name)),
                interval=fmt_interval(alias, interval(scores, m.name)),
            )
            if (alias := as_proportion(m.name)) != m.name
            else m
            for m in t.metrics
        ]
        found.append(replace(t, metrics=metrics))
    return found


def fmt_any(scores: Mapping[str, MetricValue], metric: str) -> str:
    """``fmt_metric`` with adherence metrics read as proportions (``78.12% [66.9, 85.2]``)."""
    alias = as_proportion(metric)
    return fmt_metric({alias: scores.get(metric), f"{alias}_ci": scores.get(f"{metric}_ci")}, alias)


def all_metrics(scores: Mapping[str, MetricValue]) -> list[tuple[str, str]]:
    """``(metric, "83.97% [81.8, 85.9]")`` for every stored scalar metric: headline ones, others, counts."""
    rows = [(m, fmt_any(scores, m)) for m in _headline(scores) + other_metrics(scores)]
    return rows + [(k, fmt_count(scores.get(k))) for k in COUNT_KEYS if k in scores]


def formatted_strata(view: TaskView, aggregate: TaskAggregate) -> TaskView:
    """The task view with its stratum cells written by :func:`fmt_any` (adherence as percentages)."""
    strata = []
    for table in view.strata:
        values = aggregate.strata.get(table.key, {})
        rows = [
            replace(row, cells=[fmt_any(values.get(row.value, {}), m) for m in table.metrics])
            for row in table.rows
        ]
        strata.append(replace(table, rows=rows))
    return replace(view, strata=strata)


def split_charts(charts: Sequence[Any], shown_per_key: int = 1) -> tuple[list[Any], list[Any]]:
    """The first ``shown_per_key`` charts of every stratum key (the key's main metric), and the rest."""
    seen: dict[str, int] = {}
    first: list[Any] = []
    rest: list[Any] = []
    for chart in charts:
        seen[chart.key] = seen.get(chart.key, 0) + 1
        (first if seen[chart.key] <= shown_per_key else rest).append(chart)
    return first, rest
