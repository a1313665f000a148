"""Wiring of the combined score into a run's aggregates (the formula is in clineval.metrics.combined)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clineval.core import ComponentSpec, MetricValue, Scorer, SuiteSpec, TaskAggregate
from clineval.core.columns import TaskColumns
from clineval.metrics.combined import CombinedSpec, combined_for_columns, load_categories, overall_combined


def combined_spec(spec: ComponentSpec | Mapping[str, Any]) -> CombinedSpec:
    args = dict(spec.args if isinstance(spec, ComponentSpec) else spec)
    return CombinedSpec(
        weights={str(k): float(v) for k, v in args["weights"].items()},
        name=str(args.get("name") or "combined_score"),
        renormalize=bool(args.get("renormalize", True)),
        n_resamples=int(args.get("n_resamples", 1000)),
        seed=int(args.get("seed", 0)),
        categories=load_categories(args.get("categories")),
    )


def primary_metric(scorer: Scorer) -> str:
    """The metric a scorer's per-case values average to (its first metric, unless it says otherwise)."""
    return str(getattr(scorer, "primary_metric", scorer.metrics[0].name))


def with_combined(
    suite: SuiteSpec,
    scorers: Mapping[str, Sequence[Scorer]],
    columns: Mapping[str, TaskColumns],
    aggregates: Mapping[str, TaskAggregate],
    overall: Mapping[str, MetricValue],
    combined: CombinedSpec,
) -> tuple[dict[str, TaskAggregate], dict[str, MetricValue]]:
    """Aggregates and overall scores with ``combined.name`` (and its interval and parts) added."""
    new_aggregates: dict[str, TaskAggregate] = {}
    for task in suite.tasks:
        agg = aggregates[task.id]
        primaries = {s.name: primary_metric(s) for s in scorers[task.id]}
        extra = combined_for_columns(columns[task.id], primaries, combined)
        new_aggregates[task.id] = agg.model_copy(update={"scores": {**agg.scores, **extra}})
    values = [a.scores.get(combined.name) for a in new_aggregates.values()]
    return new_aggregates, {**overall, combined.name: overall_combined(values)}
