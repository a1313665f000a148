"""Wiring of the combined score into a run's aggregates (the formula is in clineval.metrics.combined)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clineval.core import ComponentSpec, MetricValue, Scorer, SuiteSpec, TaskAggregate
from clineval.core.errors import UserInputError
from clineval.core.helpers.columns import TaskColumns
from clineval.metrics.combined import CombinedSpec, combined_for_columns, load_category_map, overall_combined

WARNINGS_KEY = "combined_score_warnings"  # provenance: the warnings of the combined score in force


def combined_spec(spec: ComponentSpec | Mapping[str, Any]) -> CombinedSpec:
    args = dict(spec.args if isinstance(spec, ComponentSpec) else spec)
    mapping = load_category_map(args.get("categories"))
    return CombinedSpec(
        weights={str(k): float(v) for k, v in args["weights"].items()},
        name=str(args.get("name") or "combined_score"),
        renormalize=bool(args.get("renormalize", True)),
        n_resamples=int(args.get("n_resamples", 1000)),
        seed=int(args.get("seed", 0)),
        categories=mapping.categories,
        bounds=mapping.bounds,
        strict=bool(args.get("strict", False)),
    )


def primary_metric(scorer: Scorer) -> str:
    """The metric a scorer's per-case values average to (its first metric, unless it says otherwise)."""
    return str(getattr(scorer, "primary_metric", scorer.metrics[0].name))


@dataclass
class Combined:
    """Aggregates and overall scores with the combined score added, and its warnings (one per problem)."""

    aggregates: dict[str, TaskAggregate]
    overall: dict[str, MetricValue]
    warnings: list[str] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)  # task -> weighted categories with no metric


def with_combined(
    suite: SuiteSpec,
    scorers: Mapping[str, Sequence[Scorer]],
    columns: Mapping[str, TaskColumns],
    aggregates: Mapping[str, TaskAggregate],
    overall: Mapping[str, MetricValue],
    combined: CombinedSpec,
) -> Combined:
    """The run's aggregates with ``combined.name`` (and its interval and parts) added per task and overall.

    A weighted category with no metric in a task is a warning (``Combined.warnings``); the caller raises
    it as an error when ``combined.strict`` (:func:`refuse_missing`)."""
    found = Combined(aggregates={}, overall=dict(overall))
    for task in suite.tasks:
        agg = aggregates[task.id]
        result = combined_for_columns(columns[task.id], scorers[task.id], combined, task_id=task.id)
        found.aggregates[task.id] = agg.model_copy(update={"scores": {**agg.scores, **result.scores}})
        found.warnings += result.warnings
        if result.missing:
            found.missing[task.id] = result.missing
    values = [a.scores.get(combined.name) for a in found.aggregates.values()]
    found.overall[combined.name] = overall_combined(values)
    return found


def refuse_missing(found: Combined, spec: CombinedSpec, *, path: str | None = None) -> None:
    """``strict``: a weighted category with no metric in a task is one line, exit 2."""
    if not spec.strict or not found.missing:
        return
    task, missing = next(iter(found.missing.items()))
    raise UserInputError(
        f"{spec.name} (strict): task {task} has no metric for the weighted categor"
        f"{'ies' if len(missing) > 1 else 'y'} {', '.join(missing)}",
        path=path,
        hint="weigh only categories the task's scorers emit (docs/engine/report_format.md#combined-score), "
        "or drop strict to renormalise with a warning",
    )


def static_missing(scorers: Sequence[Scorer], spec: CombinedSpec) -> list[str] | None:
    """The weighted categories none of ``scorers`` can give a metric to, known before any case is scored
    (None when a scorer's metric keys depend on the data, e.g. retrieval measures: not known)."""
    keys: set[str] = set()
    for scorer in scorers:
        for metric in scorer.metrics:
            if not callable(getattr(metric, "case_values", None)):
                continue
            kind = type(metric).__name__
            if kind == "WhenRecorded":  # extra keys (an equivalence judge's), present only with a judge
                continue
            if kind == "MeasureMeans":  # one key per measure found in the data
                return None
            keys.add(str(metric.name))
    present = {spec.categories.get(k) for k in keys}
    return [c for c, w in spec.weights.items() if w > 0 and c not in present]


def check_strict(suite: SuiteSpec, scorers: Mapping[str, Sequence[Scorer]], spec: CombinedSpec) -> None:
    """Before a run: with ``strict``, a task certain to lack a weighted category is an error (exit 2)."""
    if not spec.strict:
        return
    found = Combined(aggregates={}, overall={})
    for task in suite.tasks:
        missing = static_missing(scorers.get(task.id, ()), spec)
        if missing:
            found.missing[task.id] = missing
    refuse_missing(found, spec, path=suite.source)


def add_combined(
    suite: SuiteSpec,
    scorers: Mapping[str, Sequence[Scorer]],
    columns: Mapping[str, TaskColumns],
    aggregates: dict[str, TaskAggregate],
    overall: dict[str, MetricValue],
    provenance: dict[str, Any],
) -> tuple[dict[str, TaskAggregate], dict[str, MetricValue]]:
    """The suite's combined score (if it has one) added to a run being finalized; its warnings appended to
    ``provenance["warnings"]`` and kept under :data:`WARNINGS_KEY`."""
    if suite.combined is None:
        return aggregates, overall
    found = with_combined(suite, scorers, columns, aggregates, overall, combined_spec(suite.combined))
    earlier = provenance.get("warnings")
    provenance["warnings"] = [*(earlier if isinstance(earlier, list) else []), *found.warnings]
    provenance[WARNINGS_KEY] = found.warnings
    return found.aggregates, found.overall
