"""``report.md``: headline table with intervals, counts, strata per task, failures by kind, provenance.

Every string from data goes through :func:`cell` (``report.md_text.md_inline``: HTML-escaped; a ``]`` that
could close a link, ``|``, backslash and backtick escaped; one line), so neither a table nor a Markdown
renderer can be broken, nor made to show a link, an image or HTML, by what a model or dataset said.
"""

from __future__ import annotations

from collections.abc import Sequence

from clineval.core import GateDecision, RunResult
from clineval.report.context import EMPTY, ReportContext
from clineval.report.formatting import MISSING
from clineval.report.md_text import md_inline
from clineval.report.sections.combined_view import build_combined_view, combined_markdown
from clineval.report.sections.counterfactual import counterfactual_of
from clineval.report.sections.counterfactual import markdown_lines as counterfactual_lines
from clineval.report.sections.gate_section import GateView, gate_views
from clineval.report.sections.view import MetricLine, ReportView, TaskView, build_view


def cell(text: object) -> str:
    """A table cell or heading text: one line, inert in Markdown (no link, image, HTML; see md_text)."""
    return md_inline(text)


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def _metrics_table(metrics: list[MetricLine]) -> list[str]:
    return table(["Metric", "Value", "95% CI"], [[m.name, m.value, m.interval] for m in metrics])


def _several_systems(view: ReportView) -> bool:
    return len(set(view.systems.values())) > 1


def _headline(view: ReportView) -> list[str]:
    system = ["System"] if _several_systems(view) else []
    header = ["Task", *system, *view.headline_columns, "n", "failed", "unscored"]
    rows = [
        [
            t.task_id,
            *([view.systems.get(t.task_id, MISSING)] if system else []),
            *(t.headline.get(c, MISSING) for c in view.headline_columns),
            t.counts["n"],
            t.counts["n_failed"],
            t.counts["n_unscored"],
        ]
        for t in view.tasks
    ]
    return ["## Headline", "", *table(header, rows), *_tokens(view)]


def _tokens(view: ReportView) -> list[str]:
    """One "Tokens" line per task (and its judge), under the headline table."""
    lines = [f"Tokens ({cell(task)}): {cell(line)}  " for task, found in view.usage.items() for line in found]
    return [*lines, ""] if lines else []


def _tiers(task: TaskView) -> list[str]:
    """The four-tier scorecard: one table per tier, tier 3's rules as rule | n applicable | adherence | CI."""
    lines: list[str] = []
    for tier in task.tiers:
        lines += [f"### {cell(tier.title)}", ""]
        if tier.judge_error_rate is not None:
            lines += [f"Judge error rate: **{cell(tier.judge_error_rate)}** of judge samples failed.", ""]
        lines += [*(f"Judge qualification: {cell(q)}  " for q in tier.judge_qualification)]
        lines += [""] if tier.judge_qualification else []
        if tier.metrics:
            lines += table(
                ["Metric", "Value", "95% CI"], [[m.name, m.value, m.interval] for m in tier.metrics]
            )
        if tier.rules:
            lines += table(
                ["Rule", "n applicable", "Adherence", "95% CI"],
                [[r.rule, r.n_applicable, r.adherence, r.interval] for r in tier.rules],
            )
    return lines


def _overall(view: ReportView) -> list[str]:
    """The mean over tasks of one system; with several systems, why there is none and each system's own."""
    if view.overall and not (len(view.tasks) == 1 and view.tasks[0].tiers):
        note = [f"{cell(view.overall_note)}.", ""] if view.overall_note else []
        return ["## Overall", "", *note, *_metrics_table(view.overall)]
    if not view.overall_note:
        return []
    lines = ["## Overall", "", cell(view.overall_note), ""]
    for name, metrics in view.overall_by_system:
        lines += [f"### Mean over the tasks of {cell(name)}", "", *_metrics_table(metrics)]
    return lines


def _comparisons(view: ReportView) -> list[str]:
    lines: list[str] = []
    for c in view.comparisons:
        lines += [f"## Model comparison: {cell(c.metric)} on {cell(c.dataset)}", ""]
        lines += table(
            [c.key or "group", "n", *c.tasks], [[g.label, g.n, *(b.text for b in g.bars)] for g in c.groups]
        )
    return lines


def _task(task: TaskView) -> list[str]:
    lines = [f"## Task {cell(task.task_id)}", ""]
    lines += _tiers(task) if task.tiers else _metrics_table(task.metrics)
    lines += [
        f"Counts: n = {task.counts['n']}, failed = {task.counts['n_failed']}, "
        f"unscored = {task.counts['n_unscored']}",
        "",
    ]
    for strat in task.strata:
        lines += [f"### By {cell(strat.key)}", ""]
        lines += table([strat.key, "n", *strat.metrics], [[r.value, r.n, *r.cells] for r in strat.rows])
    return lines


def _failures(view: ReportView) -> list[str]:
    """Each task's failed calls by kind, with the first line of the kind's commonest message (what the
    user must fix: ``ValueError: model file /models/x.bin not found``, not ``exception 20``)."""
    said = view.failure_messages
    rows = [
        [task, kind, str(n), said.get(task, {}).get(kind, "")]
        for task, kinds in view.failures.items()
        for kind, n in kinds.items()
    ]
    header = ["Task", "Error kind", "Cases", "Message (most frequent)"]
    body = table(header, rows) if rows else ["No failed system calls.", ""]
    return ["## Failures by kind", "", *body]


def _gates(views: list[GateView]) -> list[str]:
    """The "Release gate" section: per stored decision a PASS/FAIL heading, a summary, the listed rows."""
    if not views:
        return []
    lines = ["## Release gate", ""]
    for v in views:
        lines += [
            f"### {v.verdict}: baseline {cell(v.baseline)}, tenant {cell(v.tenant)}, {cell(v.mode)} mode, "
            f"{v.date}",
            "",
            v.summary,
            "",
        ]
        if not v.rows:
            continue
        header = ["Result", "Task", "Metric", "Stratum", "Baseline", "Candidate", "Delta", "p"]
        header += ["Note"] if v.show_notes else []
        rows = [
            [r.status.upper(), r.task, r.metric, r.stratum or "(all)", r.baseline, r.candidate, r.delta, r.p]
            + ([r.note] if v.show_notes else [])
            for r in v.rows
        ]
        lines += table(header, rows)
    return lines


def _banners(view: ReportView) -> list[str]:
    """The loudest block: a component that failed on most cases (its numbers mean nothing)."""
    if not view.banners:
        return []
    title = "> **⚠ FAILED ON MOST CASES: the affected numbers are not meaningful.**"
    return [title, ">", *(f"> - **{cell(b)}**" for b in view.banners), ""]


def _judge_banners(view: ReportView) -> list[str]:
    """A judged task whose judge is not qualified (none on record, failed, stale): tier 4 is unvalidated."""
    if not view.judge_banners:
        return []
    title = "> **⚠ JUDGE NOT QUALIFIED: these tier-4 grades are not validated against clinicians.**"
    return [title, ">", *(f"> - {cell(b)}" for b in view.judge_banners), ""]


def _warnings(view: ReportView) -> list[str]:
    """A block quote at the top: a degraded run must not be read as a clean one."""
    if not view.warnings:
        return []
    title = f"> **Warning: {len(view.warnings)} problem(s) with this run; read its numbers with care.**"
    return [title, ">", *(f"> - {cell(w)}" for w in view.warnings), ""]


def render_markdown(
    run: RunResult, gates: Sequence[GateDecision] = (), *, context: ReportContext = EMPTY
) -> str:
    """``report.md``; ``gates``: the run's stored release-gate decisions (a section only when given)."""
    view = build_view(run, max_samples=0, context=context)
    lines = [
        f"# clineval report: {cell(view.suite_name)}",
        "",
        *_banners(view),
        *_warnings(view),
        *_judge_banners(view),
    ]
    lines += table(
        ["", ""],
        [
            ["Run", view.run_id],
            ["Status", view.status],
            ["Suite hash", view.suite_hash],
            ["Suite file", view.source or MISSING],
            ["Created", view.created_at],
            ["Finished", view.finished_at or MISSING],
        ],
    )
    lines += _gates(gate_views(gates))
    lines += _headline(view)
    lines += combined_markdown(build_combined_view(run))
    lines += _overall(view)
    lines += _comparisons(view)
    for task in view.tasks:
        lines += _task(task)
    lines += counterfactual_lines(counterfactual_of(run))
    lines += _failures(view)
    lines += ["## Provenance", "", "```json", view.provenance_json, "```", ""]
    return "\n".join(lines)
