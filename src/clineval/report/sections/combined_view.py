"""The combined score as shown in reports: its value, the weights it used, each task's parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clineval.core import RunResult
from clineval.core.system_identity import overall_rule
from clineval.report.formatting import fmt_interval, fmt_value, interval
from clineval.report.md_text import md_inline


@dataclass(frozen=True)
class CombinedView:
    name: str
    overall: str
    weights: list[tuple[str, float]]
    renormalize: bool
    tasks: list[tuple[str, str, str, list[tuple[str, str]]]]  # task, value, interval, [(category, value)]
    # a weighted category with no metric in a task, a mapped metric left out
    # (clineval.metrics.combine.WARNINGS_KEY)
    warnings: list[str] = field(default_factory=list)
    across_systems: int = 0  # > 1: the tasks ran that many systems, so no mean over tasks (report.systems)


def combined_args(run: RunResult) -> dict[str, Any] | None:
    """The weights in force: recomputed ones (provenance) first, else the suite's."""
    recorded = run.info.provenance.get("combined_score")
    if isinstance(recorded, dict):
        return recorded
    return dict(run.info.suite.combined.args) if run.info.suite.combined is not None else None


def build_combined_view(run: RunResult) -> CombinedView | None:
    args = combined_args(run)
    if args is None:
        return None
    name = str(args.get("name") or "combined_score")
    tasks = []
    for task_id, agg in run.aggregates.items():
        if name not in agg.scores:
            continue
        parts = [
            (k[len(name) + 1 : -1], fmt_value("rate", v))
            for k, v in agg.scores.items()
            if k.startswith(f"{name}[") and k.endswith("]")
        ]
        tasks.append(
            (
                task_id,
                fmt_value("rate", agg.scores[name]),
                fmt_interval("rate", interval(agg.scores, name)),
                parts,
            )
        )
    weights = [(str(k), float(v)) for k, v in dict(args.get("weights") or {}).items()]
    rule = overall_rule(run, [t[0] for t in tasks])
    return CombinedView(
        name=name,
        overall=fmt_value("rate", run.overall.get(name)) if rule.one_system else "",
        weights=weights,
        renormalize=bool(args.get("renormalize", True)),
        tasks=tasks,
        warnings=[str(w) for w in run.info.provenance.get("combined_score_warnings") or []],
        across_systems=0 if rule.one_system else len(rule.groups),
    )


def combined_markdown(view: CombinedView | None) -> list[str]:
    if view is None:
        return []
    weights = ", ".join(f"{md_inline(k)} {w:g}" for k, w in view.weights)
    norm = "renormalised over the categories present" if view.renormalize else "not renormalised"
    lines = [
        f"## {md_inline(view.name)}",
        "",
        f"**{md_inline(view.name)} = {view.overall}** (mean over tasks; weights: {weights}; {norm})"
        if not view.across_systems
        else f"**{md_inline(view.name)}**: no mean over tasks, they ran {view.across_systems} different "
        f"systems (weights: {weights}; {norm})",
        "",
        *(f"> **Warning:** {md_inline(w)}" for w in view.warnings),
        *([""] if view.warnings else []),
        f"| Task | {md_inline(view.name)} | 95% CI | parts |",
        "|---|---|---|---|",
    ]
    for task_id, value, ci, parts in view.tasks:
        shown = "; ".join(f"{md_inline(c)} {v}" for c, v in parts)
        lines.append(f"| {md_inline(task_id)} | **{value}** | {ci} | {shown} |")
    return [*lines, ""]
