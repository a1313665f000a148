"""``clineval runs``: each stored run with what tells runs apart at a glance.

Per run: its id (what users copy: never cut), status, when it was created, the suite, the system(s) it
evaluated (``report.systems``: the model, else the callable, URL or predictions file), how many tasks, the
headline metric (the first task's chart metric: ``accuracy 83.00%``; one value per system when the tasks
ran several, from each system's own stored mean) and the cases stored and failed. A table when the
console is wide enough, else one block per run (``report.layout``): on 80 columns nothing is cut. Before,
an 80-column table cut suite names to 7 characters (``medqa-o…`` four times) and showed neither model nor
metric.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from clineval.report.formatting import MISSING, chart_metric, fmt_value
from clineval.report.layout import Col, fitted_table

if TYPE_CHECKING:
    from clineval.core import MetricValue, RunInfo


@dataclass(frozen=True)
class RunSummary:
    """What a listing shows of a run (``store.RunSummary`` has these fields; report imports only core)."""

    info: RunInfo
    n_cases: int
    n_failed: int
    overall: Mapping[str, MetricValue] = field(default_factory=dict)
    task_scores: Mapping[str, Mapping[str, MetricValue]] = field(default_factory=dict)


STATUS_STYLE = {
    "finished": "green",
    "failed": "red",
    "running": "yellow",
    "partial": "yellow",
    "interrupted": "red",
}
COLUMNS = (
    Col("run id", label=True),
    Col("status", justify="left"),
    Col("created", justify="left"),
    Col("suite", label=True),  # a table only when it fits in full: never cut to 7 characters
    Col("system", justify="left"),
    Col("tasks"),
    Col("headline", justify="left"),
    Col("cases"),
    Col("failed"),
)


def systems_of(info: RunInfo) -> list[tuple[str, list[str]]]:
    """``(system name, its task ids)`` in the order the suite first names each system."""
    from clineval.core.system_identity import system_groups  # the core models: only when runs are listed

    return [(group.name, group.tasks) for group in system_groups(info.suite.tasks)]


def headlines(
    info: RunInfo,
    overall: Mapping[str, MetricValue],
    task_scores: Mapping[str, Mapping[str, MetricValue]],
) -> list[tuple[str, str]]:
    """``(system name, "accuracy 83.00%")`` per system of the run: the first task's chart metric, each
    system's own mean over its tasks as the run stored it (else its first task's value); the metric is
    empty before the run finished."""
    first = next(iter(task_scores.values()), None)
    metric = chart_metric(first) if first else None
    systems = systems_of(info)
    if metric is None or first is None:
        return [(name, "") for name, _ in systems]
    if len(systems) == 1:
        return [(systems[0][0], f"{metric} {fmt_value(metric, overall.get(metric, first.get(metric)))}")]
    stored = info.provenance.get("overall_by_system")
    by_system: Mapping[str, Any] = stored if isinstance(stored, Mapping) else {}
    found = []
    for name, tasks in systems:
        own = by_system.get(name) or task_scores.get(tasks[0]) or {}
        value = fmt_value(metric, own.get(metric)) if isinstance(own, Mapping) else MISSING
        found.append((name, f"{metric} {value}"))
    return found


def _counts(summary: RunSummary) -> str:
    tasks = len(summary.info.suite.tasks)
    return f"{tasks} task{'' if tasks == 1 else 's'}, {summary.n_cases} cases, {summary.n_failed} failed"


def _table_row(summary: RunSummary) -> list[Text]:
    info = summary.info
    found = headlines(info, summary.overall, summary.task_scores)
    metrics = [m for _, m in found if m]
    metric = metrics[0].split(" ", 1)[0] if metrics else ""
    return [
        Text(info.run_id),
        Text(info.status, style=STATUS_STYLE.get(info.status, "")),
        Text(info.created_at.strftime("%Y-%m-%d %H:%M")),
        Text(info.suite.name),
        Text(" / ".join(name for name, _ in found)),
        Text(str(len(info.suite.tasks))),
        Text(f"{metric} " + " / ".join(m.split(" ", 1)[1] for m in metrics) if metrics else ""),
        Text(str(summary.n_cases)),
        Text(str(summary.n_failed), style="red" if summary.n_failed else ""),
    ]


def _print_block(summary: RunSummary, console: Console) -> None:
    """Three lines or so: id and suite; status, time and counts; per system its headline and name."""
    info = summary.info
    console.print(Text.assemble("  ", (info.run_id, "bold"), "  ", info.suite.name), soft_wrap=True)
    console.print(
        Text.assemble(
            "    ",
            (info.status, STATUS_STYLE.get(info.status, "")),
            "  ",
            info.created_at.strftime("%Y-%m-%d %H:%M"),
            "  ",
            (_counts(summary), "red" if summary.n_failed else ""),
        ),
        soft_wrap=True,
    )
    for name, metric in headlines(info, summary.overall, summary.task_scores):
        console.print(Text.assemble("    ", (metric or "no scores yet", "bold"), "  ", name), soft_wrap=True)


def print_runs_table(runs: Iterable[tuple[Any, ...]], console: Console) -> None:
    """``clineval runs``: the runs as the store lists them (newest first: ``store.RunSummary`` tuples, or
    ``(info, n_cases, n_failed)``), as a table when every cell fits the console, else one block per run
    (id and suite; status, time and counts; each system's headline)."""
    summaries = [RunSummary(*row) for row in runs]
    console.print(Text("runs, newest first (times in UTC)"))
    table = fitted_table(console, COLUMNS, [_table_row(s) for s in summaries])
    if table is not None:
        console.print(table)
    else:
        for summary in summaries:
            _print_block(summary, console)
    console.print()
