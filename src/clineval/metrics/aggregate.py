"""Aggregation of per-case results into task scores, strata and the overall (cross-task) scores.

``aggregate_task`` computes every metric of every scorer over the task's cases, then the same per
value of each stratification key (case metadata). ``overall_scores`` averages tasks with equal weight,
like the "Avg" column of MIRAGE (Xiong et al. 2024) and of most leaderboards, but only over tasks of one
system: a mean of GPT-4's and GPT-3.5's accuracy describes neither (issue 22, "aggregates of like with like").
``overall_by_system`` gives each system's own mean over its tasks.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from clineval.core.helpers.columns import (
    MISSING_STRATUM,
    ScoreColumn,
    TaskColumns,
    columns_of,
    kept_breakdown_keys,
)
from clineval.core.protocols import Metric, Scorer
from clineval.core.run import MetricValue, TaskAggregate
from clineval.core.score import CaseResult

__all__ = [
    "COUNT_KEYS",
    "MISSING_STRATUM",
    "aggregate_columns",
    "aggregate_task",
    "overall_by_system",
    "overall_scores",
]

COUNT_KEYS = ("n", "n_failed", "n_unscored")


def compute_metric(metric: Metric, column: ScoreColumn) -> dict[str, MetricValue]:
    """``metric`` over a column: its ``compute_column`` if it has one, else ``compute`` on Score objects."""
    on_column = getattr(metric, "compute_column", None)
    if callable(on_column):
        values: dict[str, MetricValue] = on_column(column)
        return values
    return metric.compute(column.scores())


def _empty_column() -> ScoreColumn:
    return ScoreColumn(np.empty(0), np.empty(0, dtype=object))


def scorer_values(scorer: Scorer, columns: TaskColumns) -> dict[str, MetricValue]:
    """Every metric of one scorer over the cases it scored."""
    column = columns.scores.get(scorer.name) or _empty_column()
    values: dict[str, MetricValue] = {}
    for metric in scorer.metrics:
        values.update(compute_metric(metric, column))
    return values


def _metric_values(columns: TaskColumns, scorers: Sequence[Scorer]) -> dict[str, MetricValue]:
    """All metrics of all scorers, plus the counts ``n``, ``n_failed``, ``n_unscored``.

    A metric key produced by more than one scorer is written ``<scorer>.<key>`` for each of them.
    ``n_unscored`` counts cases whose primary (first) scorer gave NaN or no score at all.
    """
    per_scorer = [(scorer.name, scorer_values(scorer, columns)) for scorer in scorers]
    seen = Counter(key for _, values in per_scorer for key in values)
    merged: dict[str, MetricValue] = {}
    for name, values in per_scorer:
        for key, value in values.items():
            merged[f"{name}.{key}" if seen[key] > 1 else key] = value
    merged["n"] = len(columns)
    merged["n_failed"] = int(columns.failed.sum())
    primary = columns.scores.get(scorers[0].name) if scorers else None
    scored = 0 if primary is None else int(primary.scorable().sum())
    merged["n_unscored"] = len(columns) - scored
    return merged


def aggregate_columns(
    columns: TaskColumns, scorers: Sequence[Scorer], stratify: Sequence[str] = ()
) -> TaskAggregate:
    """Task scores and ``strata[key][str(value)][metric]`` for each metadata key in ``stratify``.

    Cases whose metadata lacks a key (or holds None) go in the stratum ``"(missing)"``.
    """
    names = [s.name for s in scorers]
    if len(set(names)) != len(names):
        raise ValueError(f"scorer names must be unique, got {names}")
    strata: dict[str, dict[str, dict[str, MetricValue]]] = {}
    for key in stratify:
        groups = columns.strata(key)
        strata[key] = {value: _metric_values(columns.take(rows), scorers) for value, rows in groups.items()}
    return TaskAggregate(scores=_metric_values(columns, scorers), strata=strata)


def breakdown_plan(scorers: Sequence[Scorer]) -> dict[str, tuple[str, ...] | None]:
    """``scorer name -> breakdown keys its metrics read`` (None: all of them)."""
    return {s.name: kept_breakdown_keys(s.metrics) for s in scorers}


def aggregate_task(
    results: Sequence[CaseResult], scorers: Sequence[Scorer], stratify: Sequence[str] = ()
) -> TaskAggregate:
    """:func:`aggregate_columns` over the columns of ``results`` (one task's results)."""
    return aggregate_columns(columns_of(results, breakdown_plan(scorers), stratify), scorers, stratify)


def overall_scores(
    aggregates: Mapping[str, TaskAggregate], systems: Mapping[str, str] | None = None
) -> dict[str, MetricValue]:
    """Unweighted mean over tasks of each float metric all tasks have; counts summed; ``n_tasks``.

    ``overall[m] = (1/T) Σ_t task_scores[t][m]`` for every float metric m present in all T tasks
    (a NaN in any task makes the mean NaN). Intervals (``*_ci``) are not averaged: they are not
    intervals of the mean. ``n``, ``n_failed``, ``n_unscored`` are summed over tasks.

    ``systems`` (task id -> the system it ran, e.g. ``clineval.core.system_identity.task_system_names``): when
    the tasks ran more than one system no metric is averaged (a mean across systems describes none of them):
    only the counts, ``n_tasks`` and ``n_systems`` are returned; see :func:`overall_by_system`.
    """
    tasks = list(aggregates.values())
    overall: dict[str, MetricValue] = {}
    n_systems = len({systems.get(t, t) for t in aggregates}) if systems is not None else None
    if tasks and (n_systems is None or n_systems <= 1):
        common = set(tasks[0].scores).intersection(*(t.scores for t in tasks[1:]))
        for key in sorted(common):
            values = [t.scores[key] for t in tasks]
            if key in COUNT_KEYS or key.endswith("_ci"):
                continue
            if all(isinstance(v, float) for v in values):
                floats = [float(v) for v in values if isinstance(v, float)]
                overall[key] = math.fsum(floats) / len(floats)
    for key in COUNT_KEYS:
        counts = [t.scores.get(key) for t in tasks]
        if tasks and all(isinstance(c, int) and not isinstance(c, bool) for c in counts):
            overall[key] = sum(c for c in counts if isinstance(c, int))
    overall["n_tasks"] = len(tasks)
    if n_systems is not None:
        overall["n_systems"] = n_systems
    return overall


def overall_by_system(
    aggregates: Mapping[str, TaskAggregate], systems: Mapping[str, str]
) -> dict[str, dict[str, MetricValue]]:
    """``system -> overall_scores`` of the tasks that ran it (``systems``: task id -> system; a task not in
    it counts as a system of its own), systems in the order of their first task."""
    groups: dict[str, dict[str, TaskAggregate]] = {}
    for task, aggregate in aggregates.items():
        groups.setdefault(systems.get(task, task), {})[task] = aggregate
    return {name: overall_scores(tasks) for name, tasks in groups.items()}
