"""Rendering a run-to-run comparison: rich console tables and Markdown (no metric is computed here)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from clineval.core.comparison import MetricDelta, PairedTest, RunComparison, TaskComparison
from clineval.report.formatting import is_proportion
from clineval.report.layout import Col, print_records
from clineval.report.md_text import md_inline

_SHOWN_META = ("question_type", "meta_info", "subject_name")


def _fmt(metric: str, value: float) -> str:
    return f"{value * 100:.1f}%" if is_proportion(metric) else f"{value:.4f}"


def _fmt_delta(metric: str, delta: float) -> str:
    return f"{delta * 100:+.1f} pt" if is_proportion(metric) else f"{delta:+.4f}"


def _rows(deltas: list[MetricDelta]) -> list[tuple[str, str, str, str]]:
    return [
        (d.metric, _fmt(d.metric, d.a), _fmt(d.metric, d.b), _fmt_delta(d.metric, d.delta))
        for d in deltas
        if d.a == d.a and d.b == d.b
    ]  # NaN: metric not applicable


def _meta(change_meta: dict[str, object]) -> str:
    return ", ".join(f"{k}={change_meta[k]}" for k in _SHOWN_META if k in change_meta)


def _headline(deltas: list[MetricDelta]) -> list[MetricDelta]:
    """In strata, the rates and accuracies only (the full set is in the overall table)."""
    return [d for d in deltas if is_proportion(d.metric)]


_PAIRED_HEADERS = ("scorer", "stratum", "n", "A", "B", "delta", "CI", "test", "p", "p (Holm)", "win/tie/loss")
_TEST_NAMES = {"mcnemar_exact": "exact McNemar", "permutation": "permutation"}


def _paired_row(t: PairedTest) -> tuple[str, ...]:
    stratum = "all" if t.stratum_key is None else f"{t.stratum_key}={t.stratum_value}"
    return (
        t.scorer,
        stratum,
        str(t.n),
        f"{t.mean_a:.4f}",
        f"{t.mean_b:.4f}",
        f"{t.delta:+.4f}",
        f"{t.confidence * 100:.0f}% [{t.ci[0]:+.4f}, {t.ci[1]:+.4f}]",
        _TEST_NAMES.get(t.test, t.test),
        f"{t.p:.4g}",
        f"{t.p_holm:.4g}",
        f"{t.wins}/{t.ties}/{t.losses}",
    )


def print_comparison(cmp: RunComparison, console: Console, *, max_cases: int = 30) -> None:
    scope = "cases both runs scored" if cmp.restricted_to_common else "same cases"
    console.print(
        Text.assemble(
            ("compare ", "dim"),
            (cmp.run_a[:12], "bold"),
            (" -> ", "dim"),
            (cmp.run_b[:12], "bold"),
            (f"  ({scope})", "dim"),
        )
    )
    for task in cmp.tasks:
        _print_task(task, console, max_cases)


def _print_task(task: TaskComparison, console: Console, max_cases: int) -> None:
    """Every table as ``layout.print_records``: metric, stratum, scorer and case labels are never cut."""
    values = [Col("A"), Col("B"), Col("delta")]
    print_records(
        console,
        [Col("metric", label=True), *values],
        [list(row) for row in _rows(task.overall)],
        title=Text(f"task {task.task_id} (n={task.n})"),
    )
    for key, by_value in task.strata.items():
        rows = [[value, *row] for value, deltas in by_value.items() for row in _rows(_headline(deltas))]
        cols = [Col(key, label=True, dedupe=True), Col("metric", label=True), *values]
        print_records(console, cols, rows, title=Text(f"by {key}"))
    if task.paired:
        print_records(
            console,
            [
                Col(h, label=h in ("scorer", "stratum"), justify="left" if h == "test" else None)
                for h in _PAIRED_HEADERS
            ],
            [list(_paired_row(t)) for t in task.paired],
            title=Text("paired tests (B - A; CI paired bootstrap; p Holm-adjusted across the task)"),
        )
    for test in task.tests:
        console.print(
            f"exact McNemar ({test.scorer}): right only in A {test.a_only}, right only in B "
            f"{test.b_only}, p = {test.p_value:.4g}",
            highlight=False,
        )
    if task.changes:
        print_records(
            console,
            [
                Col("case", label=True),
                Col("scorer", label=True),
                Col("A", justify="left"),
                Col("B", justify="left"),
                Col("metadata", shrink=True, justify="left"),
            ],
            [
                [c.case_id, c.scorer, str(c.a_label), str(c.b_label), _meta(c.metadata)]
                for c in task.changes[:max_cases]
            ],
            title=Text(f"changed cases ({len(task.changes)})"),
        )


def _md_escape(text: str) -> str:
    return md_inline(text)  # ids and metadata are untrusted: no link, image or HTML in the .md


def render_comparison_markdown(cmp: RunComparison) -> str:
    lines = [f"# Comparison {cmp.run_a} -> {cmp.run_b}", ""]
    for task in cmp.tasks:
        lines += [
            f"## Task {_md_escape(task.task_id)} (n = {task.n})",
            "",
            "| metric | A | B | delta |",
            "|---|---:|---:|---:|",
        ]
        lines += [f"| {m} | {a} | {b} | {d} |" for m, a, b, d in _rows(task.overall)]
        for key, values in task.strata.items():
            lines += [
                "",
                f"### By {_md_escape(key)}",
                "",
                f"| {_md_escape(key)} | metric | A | B | delta |",
                "|---|---|---:|---:|---:|",
            ]
            for value, deltas in values.items():
                lines += [
                    f"| {_md_escape(value)} | {m} | {a} | {b} | {d} |"
                    for m, a, b, d in _rows(_headline(deltas))
                ]
        if task.paired:
            lines += [
                "",
                "### Paired tests",
                "",
                "B - A per case; CI: paired bootstrap; p (Holm): Holm-adjusted across the task's tests.",
                "",
                "| " + " | ".join(_PAIRED_HEADERS) + " |",
                "|---|---|" + "---:|" * 5 + "---|" + "---:|" * 3,
            ]
            lines += ["| " + " | ".join(map(_md_escape, _paired_row(t))) + " |" for t in task.paired]
        for test in task.tests:
            lines += [
                "",
                f"Exact McNemar ({test.scorer}): right only in A {test.a_only}, right only in B "
                f"{test.b_only}, p = {test.p_value:.4g}",
            ]
        if task.changes:
            lines += ["", "| case | scorer | A | B | metadata |", "|---|---|---|---|---|"]
            lines += [
                f"| {_md_escape(c.case_id)} | {c.scorer} | {c.a_label} | {c.b_label} | "
                f"{_md_escape(_meta(c.metadata))} |"
                for c in task.changes
            ]
        lines.append("")
    return "\n".join(lines)
