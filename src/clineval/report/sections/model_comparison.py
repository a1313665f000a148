"""The model comparison: tasks of one suite that ran on the same dataset (e.g. GPT-4 vs GPT-3.5 on the
same MedQA questions), their headline metric side by side, overall and per stratum (display only).

Tasks are grouped by their dataset (format, options and content hash as stored); a group of two or more
gives one comparison: its metric is the first task's chart metric (``accuracy`` when present), the groups
of bars are "all" and each value of the first stratification key the tasks share.
"""

from __future__ import annotations

from dataclasses import dataclass

from clineval.core import MetricValue, RunResult
from clineval.report.formatting import chart_metric, fmt_interval, fmt_value, interval, is_number


@dataclass(frozen=True)
class Bar:
    task_id: str
    value: float | None
    ci: tuple[float, float] | None
    text: str  # "83.97% [81.8, 85.9]"


@dataclass(frozen=True)
class BarGroup:
    label: str  # "all" or a stratum value
    n: str
    bars: list[Bar]


@dataclass(frozen=True)
class Comparison:
    dataset: str
    metric: str
    key: str | None  # the stratification key of the groups after "all"
    tasks: list[str]
    groups: list[BarGroup]


def _bar(task_id: str, scores: dict[str, MetricValue] | None, metric: str) -> Bar:
    raw = (scores or {}).get(metric)
    value = float(raw) if isinstance(raw, int | float) and is_number(raw) else None
    ci = interval(scores or {}, metric)
    text = fmt_value(metric, raw) + (f" {fmt_interval(metric, ci)}" if ci else "")
    return Bar(task_id, value, ci, text)


def _dataset_label(run: RunResult, task_id: str) -> str:
    task = next(t for t in run.info.suite.tasks if t.id == task_id)
    path = task.dataset.args.get("path") or task.dataset.args.get("name") or ""
    return f"{task.dataset.type} {path}".strip()


def comparisons(run: RunResult) -> list[Comparison]:
    groups: dict[str, list[str]] = {}
    for task in run.info.suite.tasks:
        if task.id in run.aggregates:
            groups.setdefault(task.dataset.spec_hash, []).append(task.id)
    found = []
    for task_ids in groups.values():
        if len(task_ids) < 2:
            continue
        aggregates = [run.aggregates[t] for t in task_ids]
        metric = chart_metric(aggregates[0].scores)
        if metric is None:
            continue
        n = aggregates[0].scores.get("n")
        bar_groups = [
            BarGroup(
                "all",
                f"{int(n)}" if isinstance(n, int | float) and is_number(n) else "",
                [_bar(t, dict(a.scores), metric) for t, a in zip(task_ids, aggregates, strict=True)],
            )
        ]
        shared = [k for k in aggregates[0].strata if all(k in a.strata for a in aggregates)]
        key = shared[0] if shared else None
        if key is not None:
            values = list(dict.fromkeys(v for a in aggregates for v in a.strata[key]))
            for value in values:
                first = aggregates[0].strata[key].get(value) or {}
                count = first.get("n")
                bar_groups.append(
                    BarGroup(
                        value,
                        f"{int(count)}" if isinstance(count, int | float) and is_number(count) else "",
                        [
                            _bar(t, dict(a.strata[key].get(value) or {}), metric)
                            for t, a in zip(task_ids, aggregates, strict=True)
                        ],
                    )
                )
        found.append(Comparison(_dataset_label(run, task_ids[0]), metric, key, task_ids, bar_groups))
    return found
