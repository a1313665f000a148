"""The display model every renderer (Markdown, HTML, console) reads: formatted strings, in order."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from clineval.core import MetricValue, RunResult, TaskAggregate
from clineval.core.system_identity import overall_rule
from clineval.report.context import EMPTY, ReportContext
from clineval.report.formatting import (
    chart_metric,
    fmt_count,
    fmt_interval,
    fmt_metric,
    fmt_value,
    headline_metrics,
    interval,
    is_number,
    jsonable,
    other_metrics,
    task_ids,
    union_in_order,
)
from clineval.report.sections.banners import failure_banners
from clineval.report.sections.case_inputs import case_inputs
from clineval.report.sections.cases import SampleCase, sample_cases
from clineval.report.sections.judge_qualification import qualification_banners
from clineval.report.sections.model_comparison import Comparison, comparisons
from clineval.report.sections.run_cases import run_failure_messages, run_failures, run_picks
from clineval.report.sections.tiers import TierView, run_tiers
from clineval.report.sections.usage_lines import usage_lines


@dataclass(frozen=True)
class MetricLine:
    name: str
    value: str
    interval: str


@dataclass(frozen=True)
class StratumRow:
    value: str
    n: str
    cells: list[str]
    bar: float | None  # the chart metric's raw value
    ci: tuple[float, float] | None
    points: dict[str, tuple[float | None, tuple[float, float] | None]] = field(default_factory=dict)
    # every charted metric's (raw value, interval): one chart per headline metric


@dataclass(frozen=True)
class StratumTable:
    key: str
    metrics: list[str]
    chart_metric: str | None
    rows: list[StratumRow]
    chart_metrics: list[str] = field(default_factory=list)  # every headline metric, the chart metric first


@dataclass(frozen=True)
class TaskView:
    task_id: str
    headline: dict[str, str]
    metrics: list[MetricLine]
    counts: dict[str, str]
    strata: list[StratumTable]
    tiers: list[TierView] = field(default_factory=list)  # four-tier scorecard (empty: not a tiered task)


@dataclass(frozen=True)
class ReportView:
    run_id: str
    suite_name: str
    suite_hash: str
    source: str
    status: str
    created_at: str
    finished_at: str
    headline_columns: list[str]
    tasks: list[TaskView]
    overall: list[MetricLine]  # the mean over tasks: only when every task ran one system (report.systems)
    failures: dict[str, dict[str, int]]
    failure_messages: dict[str, dict[str, str]]  # task -> kind -> the first line of its commonest message
    samples: list[SampleCase]
    provenance_json: str
    warnings: list[str] = field(default_factory=list)  # provenance["warnings"]: shown at the top
    banners: list[str] = field(default_factory=list)  # a component that failed on most cases: loudest
    judge_banners: list[str] = field(default_factory=list)  # a judged task's judge not qualified / stale
    comparisons: list[Comparison] = field(default_factory=list)  # tasks on one dataset, side by side
    usage: dict[str, list[str]] = field(
        default_factory=dict
    )  # task -> its "Tokens" lines (report.usage_lines)
    systems: dict[str, str] = field(default_factory=dict)  # task -> the name of the system it ran
    overall_note: str = ""  # what the overall is a mean of, or why there is none
    overall_by_system: list[tuple[str, list[MetricLine]]] = field(default_factory=list)  # several systems


def metric_lines(scores: Mapping[str, MetricValue]) -> list[MetricLine]:
    return [
        MetricLine(m, fmt_value(m, scores.get(m)), fmt_interval(m, interval(scores, m)))
        for m in headline_metrics(scores) + other_metrics(scores)
    ]


def _stratum_table(
    key: str, values: Mapping[str, Mapping[str, MetricValue]], task_metric: str | None
) -> StratumTable:
    metrics = union_in_order([headline_metrics(scores) for scores in values.values()])
    bar_metric = task_metric if task_metric in metrics else chart_metric(next(iter(values.values()), {}))
    charted = [bar_metric] if bar_metric else []
    charted += [m for m in metrics if m != bar_metric]
    rows = []
    for value, scores in values.items():
        raw = scores.get(bar_metric) if bar_metric else None
        rows.append(
            StratumRow(
                value=value,
                n=fmt_count(scores.get("n")),
                cells=[fmt_metric(scores, m) for m in metrics],
                bar=float(raw) if isinstance(raw, int | float) and is_number(raw) else None,
                ci=interval(scores, bar_metric) if bar_metric else None,
                points={m: (_raw(scores.get(m)), interval(scores, m)) for m in charted},
            )
        )
    charted = [m for m in charted if any(row.points[m][0] is not None for row in rows)]
    return StratumTable(key=key, metrics=metrics, chart_metric=bar_metric, rows=rows, chart_metrics=charted)


def _raw(value: MetricValue | None) -> float | None:
    return float(value) if isinstance(value, int | float) and is_number(value) else None


def task_view(task_id: str, aggregate: TaskAggregate, tiers: list[TierView] | None = None) -> TaskView:
    scores = aggregate.scores
    main_metric = chart_metric(scores)
    return TaskView(
        task_id=task_id,
        headline={m: fmt_metric(scores, m) for m in headline_metrics(scores)},
        metrics=metric_lines(scores),
        counts={k: fmt_count(scores.get(k)) for k in ("n", "n_failed", "n_unscored")},
        strata=[
            _stratum_table(key, values, main_metric) for key, values in aggregate.strata.items() if values
        ],
        tiers=tiers or [],
    )


def build_view(run: RunResult, *, max_samples: int = 50, context: ReportContext = EMPTY) -> ReportView:
    """``context``: what the caller built beyond the stored run (scorers, a dataset loader; see
    ``report.context``): the four-tier scorecard and the sample cases' questions come from it."""
    info = run.info
    tiers = run_tiers(run, context.scorers)
    tasks = [task_view(t, run.aggregates[t], tiers.get(t)) for t in task_ids(run) if t in run.aggregates]
    rule = overall_rule(run, [t.task_id for t in tasks])
    picked = run_picks(run, max_samples, context)
    inputs = case_inputs(run, [(r.task_id, r.case_id) for _, r in picked], context.load_dataset)
    return ReportView(
        run_id=info.run_id,
        suite_name=info.suite.name,
        suite_hash=info.suite.spec_hash,
        source=info.suite.source or "",
        status=info.status,
        created_at=info.created_at.isoformat(timespec="seconds"),
        finished_at=info.finished_at.isoformat(timespec="seconds") if info.finished_at else "",
        headline_columns=union_in_order([list(t.headline) for t in tasks]),
        tasks=tasks,
        overall=metric_lines(run.overall) if rule.one_system else [],
        failures=run_failures(run),
        failure_messages=run_failure_messages(run),
        samples=sample_cases((), max_samples, inputs, picked=picked),
        provenance_json=json.dumps(
            jsonable(info.provenance), indent=2, sort_keys=True, ensure_ascii=False, default=str
        ),
        warnings=run_warnings(run),
        banners=failure_banners(run),
        judge_banners=qualification_banners(run),
        comparisons=comparisons(run),
        usage=usage_lines(run),
        systems={task: group.name for group in rule.groups for task in group.tasks},
        overall_note=rule.note if len(tasks) > 1 else "",
        overall_by_system=[(name, metric_lines(scores)) for name, scores in rule.by_system.items()],
    )


def run_warnings(run: RunResult) -> list[str]:
    """The run's stored warnings (degraded components, unmatched predictions), as strings."""
    found = run.info.provenance.get("warnings")
    return [str(w) for w in found] if isinstance(found, list) else []
