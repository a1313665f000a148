"""The audit as a console table, ``audit.md`` and ``audit.json`` (display only: nothing is computed here).

Values are written as the reports write them (proportions as percentages, other metrics as decimals);
a value a stand-in inflates is marked ``!`` (console) or bold with ``(inflated)`` (Markdown).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from rich.console import Console
from rich.text import Text

from clineval.audit.model import AuditReport, MetricAudit, Reached, TaskAudit
from clineval.report.formatting import MISSING, fmt_value
from clineval.report.layout import Col, print_records
from clineval.report.md_text import md_inline

LEGEND = (
    "baseline: the best of the empty and constant stand-ins; bound: its 95% upper bound; "
    "! = above the bound (inflated)"
)


def _value(metric: str, reached: Reached | None) -> str:
    if reached is None or not math.isfinite(reached.value):
        return MISSING
    return fmt_value(metric, reached.value)


def _bound(m: MetricAudit) -> str:
    return fmt_value(m.metric, m.bound) if math.isfinite(m.bound) else MISSING


def _source(m: MetricAudit) -> str:
    return f"{m.baseline_from} {m.baseline.variant}".strip() if m.baseline.finite else ""


def _role(m: MetricAudit) -> str:
    tier = f" t{m.tier}" if m.tier is not None else ""
    return f"{m.role}{tier}"


def _console_rows(task: TaskAudit, probes: list[str]) -> list[list[Text | str]]:
    rows: list[list[Text | str]] = []
    for m in task.metrics:
        flagged = set(m.inflated)
        cells: list[Text | str] = [m.metric, _role(m), _value(m.metric, m.baseline), _bound(m), _source(m)]
        for name in probes:
            text = _value(m.metric, m.reached.get(name))
            cells.append(Text(f"{text}!", style="bold red") if name in flagged else text)
        rows.append(cells)
    return rows


def print_audit(report: AuditReport, console: Console) -> None:
    """Per task: one row per audited metric (a table when it fits, else one block per metric)."""
    console.print(Text(f"audit of suite {report.suite}", style="bold"))
    console.print(Text(LEGEND, style="dim"))
    console.print()
    for task in report.tasks:
        probes = [s for s in task.standins if s not in ("empty", "constant")]
        cols = [Col("metric", label=True), Col("role"), Col("baseline"), Col("bound")]
        cols += [Col("from", shrink=True), *(Col(name) for name in probes)]
        print_records(
            console, cols, _console_rows(task, probes), title=Text(f"task {task.task_id} (n={task.n})")
        )
        if task.not_audited:
            names = ", ".join(task.not_audited)
            console.print(Text(f"not audited (no stand-in gives them a value): {names}", style="dim"))
            console.print()
    _print_verdict(report, console)


def _print_verdict(report: AuditReport, console: Console) -> None:
    gating, tracked = report.inflated_gating(), report.inflated_tracked()
    for label, found in (("gating", gating), ("tracked", tracked)):
        for task, metric, standin in found:
            audit = next(t for t in report.tasks if t.task_id == task)
            lowered = audit.lowered(standin)
            also = f" (it lowers {', '.join(lowered)} below the baseline)" if lowered else ""
            console.print(Text(f"inflated ({label}): {task} {metric} by {standin}{also}"))
    if not gating:
        console.print(Text("no gating metric is inflated by any stand-in", style="green"))


def markdown(report: AuditReport) -> str:
    """``audit.md``: the rules, then per task a table (metric x stand-in) and the stand-ins' variants."""
    lines = [f"# Metric robustness audit: {md_inline(report.suite)}", ""]
    if report.limit is not None:
        lines += [f"Cases: a seeded sample of {report.limit} (seed {report.seed}) per task.", ""]
    lines += [
        f"{LEGEND}. A value a stand-in inflates is **bold** with (inflated). Exit code {report.exit_code}: "
        + ("a gating metric is inflated." if report.exit_code else "no gating metric is inflated."),
        "",
    ]
    for task in report.tasks:
        lines += task_markdown(task)
    lines += ["## Stand-ins", "", "| stand-in | what it answers |", "| --- | --- |"]
    lines += [f"| {name} | {md_inline(text)} |" for name, text in report.standins.items()]
    return "\n".join(lines) + "\n"


def task_markdown(task: TaskAudit) -> list[str]:
    """One task's table: a row per metric, a column per stand-in."""
    names = task.standins
    lines = [f"## Task {md_inline(task.task_id)} (n = {task.n})", ""]
    lines.append("| metric | role | baseline | bound | from | " + " | ".join(names) + " |")
    lines.append("| --- | --- | --- | --- | --- |" + " --- |" * len(names))
    for m in task.metrics:
        flagged = set(m.inflated)
        cells = [m.metric, _role(m), _value(m.metric, m.baseline), _bound(m), md_inline(_source(m))]
        for name in names:
            text = _value(m.metric, m.reached.get(name))
            cells.append(f"**{text}** (inflated)" if name in flagged else text)
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    if task.not_audited:
        lines += [f"Not audited: {', '.join(sorted(task.not_audited))} (no stand-in gives them a value).", ""]
    if task.not_applicable:
        lines += [f"Not applicable here: {', '.join(task.not_applicable)}.", ""]
    lines += ["Variants (the best one per metric is shown):", ""]
    lines += [f"- {name}: {md_inline('; '.join(task.variants.get(name, [])))}" for name in names]
    return [*lines, ""]


def write_audit(report: AuditReport, out: Path) -> list[Path]:
    """``audit.json`` and ``audit.md`` in ``out`` (created)."""
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "audit.json", out / "audit.md"
    json_path.write_text(json.dumps(report.as_dict(), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(report), encoding="utf-8")
    return [json_path, md_path]
