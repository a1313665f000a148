"""``report.html``: one self-contained file (inline CSS and SVG, nothing fetched), Jinja2 autoescaped."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from clineval.core import GateDecision, RunResult
from clineval.report.context import EMPTY, ReportContext
from clineval.report.sections.charts import stratum_charts
from clineval.report.sections.combined_view import build_combined_view
from clineval.report.sections.comparison_chart import comparison_chart
from clineval.report.sections.counterfactual import counterfactual_html, counterfactual_of
from clineval.report.sections.gate_section import gate_views
from clineval.report.sections.view import build_view

TEMPLATES = Path(__file__).parents[1] / "templates"
MAX_SAMPLES = 50


def environment() -> Environment:
    """Autoescape is on for every template: model outputs and data strings are untrusted."""
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_html(
    run: RunResult,
    gates: Sequence[GateDecision] = (),
    *,
    max_samples: int = MAX_SAMPLES,
    context: ReportContext = EMPTY,
) -> str:
    """``report.html``; ``gates``: the run's stored release-gate decisions (a section only when given)."""
    view = build_view(run, max_samples=max_samples, context=context)
    charts = {task.task_id: {s.key: stratum_charts(s) for s in task.strata} for task in view.tasks}
    template = environment().get_template("report.html.j2")
    return template.render(
        v=view,
        charts=charts,
        comparison_charts=[comparison_chart(c) for c in view.comparisons],
        max_samples=max_samples,
        combined=build_combined_view(run),
        gates=gate_views(gates),
        counterfactual=counterfactual_html(counterfactual_of(run)),
    )
