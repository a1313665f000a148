"""Rich console output: a run's headline metrics, and the ``clineval runs`` table.

Data strings are passed as ``rich.text.Text`` so that ``[...]`` in a task id or suite name is shown,
never interpreted as console markup.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from clineval.core import RunInfo, RunResult
from clineval.report.context import EMPTY, ReportContext
from clineval.report.formatting import MISSING, union_in_order
from clineval.report.layout import Col, fitted_table, print_block, print_pairs
from clineval.report.sections.counterfactual import console_lines, counterfactual_of
from clineval.report.sections.view import ReportView, StratumTable, TaskView, build_view

_STATUS_STYLE = {
    "finished": "green",
    "failed": "red",
    "running": "yellow",
    "partial": "yellow",
    "interrupted": "red",
}


def _when(info: RunInfo, *, narrow: bool = False) -> str:
    return info.created_at.strftime("%m-%d %H:%M" if narrow else "%Y-%m-%d %H:%M")


def _short(value: str) -> str:
    """Rates sit under a ``%`` header: drop the repeated sign."""
    return value.removesuffix("%")


def _rate_header(name: str) -> str:
    return name.removesuffix("_rate") + " %" if name.endswith("_rate") else name


def print_run_summary(run: RunResult, console: Console, *, context: ReportContext = EMPTY) -> None:
    """One row per task (headline metrics with their intervals, the other metrics, the counts), then each
    task's strata; as stacked blocks when a table would not fit the console (see ``layout``)."""
    view = build_view(run, max_samples=0, context=context)
    title = Text.assemble(
        ("run ", "dim"),
        (view.run_id, "bold"),
        ("  suite ", "dim"),
        view.suite_name,
        ("  ", ""),
        (view.status, _STATUS_STYLE.get(view.status, "")),
    )
    console.print(title)
    for line in view.banners:  # a component that failed on most cases: its numbers mean nothing
        console.print(Text.assemble(("FAILED ON MOST CASES: ", "bold white on red"), (line, "bold red")))
    for line in view.judge_banners:  # tier-4 grades from a judge nobody qualified: said, never gated
        console.print(Text.assemble(("JUDGE NOT QUALIFIED: ", "bold black on yellow"), (line, "yellow")))
    if not view.tasks:
        console.print(Text("no aggregates stored for this run", style="dim"))
        return
    others = union_in_order([[m.name for m in t.metrics if m.name not in t.headline] for t in view.tasks])
    heads = view.headline_columns
    cols = [
        Col("task", label=True),
        *(Col(f"{name} [95% CI]") for name in heads),
        *(Col(_rate_header(name)) for name in others),
        *(Col(header) for header in ("n", "failed", "unscored")),
    ]
    rows: list[list[Text]] = []
    for task in view.tasks:
        values = {m.name: m.value for m in task.metrics}
        rows.append(
            [
                Text(task.task_id),
                *(Text(task.headline.get(name, MISSING)) for name in heads),
                *(Text(_short(values.get(name, MISSING))) for name in others),
                *(Text(task.counts[k]) for k in ("n", "n_failed", "n_unscored")),
            ]
        )
    means = _means(view)
    for label, values in means:
        rows.append(
            [
                Text(label, style="bold"),
                *(Text(values.get(name, "")) for name in heads),
                *(Text(_short(values.get(name, ""))) for name in others),
                *(Text("") for _ in range(3)),
            ]
        )
    table = fitted_table(console, cols, rows)
    if table is not None:
        console.print(table)
    else:
        _print_stacked_summary(view.tasks, means, console)
    _print_systems(view, console)
    console.print()
    for task_id, lines in view.usage.items():
        for line in lines:
            console.print(Text.assemble((f"{task_id} tokens: ", "dim"), line))
    if view.usage:
        console.print()
    for task in view.tasks:
        for stratum in task.strata:
            _print_stratum(task.task_id, stratum, console)
    for line in console_lines(counterfactual_of(run)):
        console.print(Text(line))


def _means(view: ReportView) -> list[tuple[str, dict[str, str]]]:
    """The mean-over-tasks rows: all tasks when they ran one system, else one per system that ran several
    tasks (as stored); none for a run of one task (its own row says it all)."""
    if len(view.tasks) < 2:
        return []
    if view.overall:
        return [("mean over tasks", {m.name: m.value for m in view.overall})]
    return [(f"mean: {name}", {m.name: m.value for m in lines}) for name, lines in view.overall_by_system]


def _print_systems(view: ReportView, console: Console) -> None:
    """Several systems: why there is no mean over all tasks, and which task ran which system."""
    if view.overall or len(view.tasks) < 2 or not view.systems:
        return
    by_system: dict[str, list[str]] = {}
    for task, name in view.systems.items():
        by_system.setdefault(name, []).append(task)
    console.print()
    console.print(Text(f"no mean over tasks: they ran {len(by_system)} different systems", style="bold"))
    for name, tasks in by_system.items():
        console.print(Text.assemble("  ", (name, "bold"), (": ", "dim"), ", ".join(tasks)))


def _print_stacked_summary(
    tasks: list[TaskView], means: list[tuple[str, dict[str, str]]], console: Console
) -> None:
    """Narrow consoles: per task, its headline metrics one a line (value [95% CI]), then the other
    metrics and the counts packed several a line."""
    console.print(Text("headline metrics: value [95% CI]", style="dim"))
    for task in tasks:
        console.print()
        heads = [(name, Text(value)) for name, value in task.headline.items()]
        print_block(console, Text(task.task_id, style="bold"), heads)
        others = [(m.name, Text(m.value)) for m in task.metrics if m.name not in task.headline]
        print_pairs(console, others, packed=True)
        counts = [("n", task.counts["n"]), ("failed", task.counts["n_failed"])]
        print_pairs(console, [*counts, ("unscored", task.counts["n_unscored"])], packed=True)
    for label, values in means:
        console.print()
        print_block(console, Text(label, style="bold"), [(name, Text(v)) for name, v in values.items()])


MAX_CONSOLE_STRATA = 25  # more values than this (e.g. 21 MedMCQA subjects is fine, years are not)


def _print_stratum(task_id: str, stratum: StratumTable, console: Console) -> None:
    """A per-value table of the headline metrics, e.g. by question type. When it is too wide: the same
    table transposed (one row per metric, one column per value), else one block per value."""
    if not stratum.rows or len(stratum.rows) > MAX_CONSOLE_STRATA:
        return
    console.print(Text(f"{task_id} by {stratum.key}"))
    table = fitted_table(
        console,
        [Col(stratum.key, label=True), Col("n"), *(Col(name) for name in stratum.metrics)],
        [[Text(row.value), Text(row.n), *(Text(c) for c in row.cells)] for row in stratum.rows],
    ) or fitted_table(
        console,
        [Col("metric", label=True), *(Col(row.value) for row in stratum.rows)],
        [
            [Text("n"), *(Text(row.n) for row in stratum.rows)],
            *(
                [Text(name), *(Text(row.cells[i]) for row in stratum.rows)]
                for i, name in enumerate(stratum.metrics)
            ),
        ],
    )
    if table is not None:
        console.print(table)
        console.print()
        return
    for row in stratum.rows:
        label = Text.assemble((row.value, "bold"), (f"  (n {row.n})", "dim"))
        print_block(console, label, list(zip(stratum.metrics, map(Text, row.cells), strict=True)), indent=2)
    console.print()
