"""Inline SVG grouped bar chart of a model comparison: per group ("all", then each stratum) one bar per
task, with its interval whisker; a legend names the tasks. Strings from data are escaped; ``Markup``."""

from __future__ import annotations

from markupsafe import Markup, escape

from clineval.report.formatting import is_proportion
from clineval.report.sections.charts import domain, ticks
from clineval.report.sections.model_comparison import Comparison

LABEL_W, BAR_W, VALUE_W, BAR_H, GAP, TOP, BOTTOM, LEGEND_H = 220, 320, 190, 14, 12, 8, 26, 22
LABEL_CHARS, LEGEND_CHARS = 28, 40
COLOURS = ("#4f86c6", "#e39b3f", "#5aa469", "#b05fa8", "#c94c4c", "#7f7f7f")


def _short(text: str, room: int) -> str:
    return text if len(text) <= room else text[: room - 1] + "…"


def comparison_chart(comparison: Comparison) -> Markup:
    """``class="chart comparison"``; one ``rect class="bar"`` per (group, task) with a value."""
    metric, k = comparison.metric, len(comparison.tasks)
    points = [(bar.value, bar.ci) for group in comparison.groups for bar in group.bars]
    if not comparison.groups or all(value is None for value, _ in points):
        return Markup("")
    lo, hi = domain(metric, points)
    group_h = k * (BAR_H + 2) + GAP
    legend_rows = (k + 1) // 2
    top = TOP + legend_rows * LEGEND_H
    width, height = LABEL_W + BAR_W + VALUE_W, top + group_h * len(comparison.groups) + BOTTOM

    def x(value: float) -> float:
        return LABEL_W + (value - lo) / (hi - lo) * BAR_W

    title = escape(f"{metric}: " + " vs ".join(comparison.tasks))
    parts = [
        f'<svg class="chart comparison" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{title}">'
        f"<title>{title}</title>"
    ]
    for i, task_id in enumerate(comparison.tasks):
        lx, ly = 10 + (i % 2) * (width // 2), TOP + (i // 2) * LEGEND_H
        parts.append(
            f'<g class="legend"><rect x="{lx}" y="{ly + 3}" width="12" height="12" '
            f'fill="{COLOURS[i % len(COLOURS)]}"/><text x="{lx + 18}" y="{ly + 13}">'
            f"{escape(_short(task_id, LEGEND_CHARS))}</text></g>"
        )
    for value, text in ticks(lo, hi, is_proportion(metric)):
        parts.append(
            f'<line class="grid" x1="{x(value):.1f}" x2="{x(value):.1f}" y1="{top - 4}" '
            f'y2="{height - BOTTOM + 4}"/><text class="tick" x="{x(value):.1f}" '
            f'y="{height - 8}" text-anchor="middle">{escape(text)}</text>'
        )
    for g, group in enumerate(comparison.groups):
        y0 = top + g * group_h
        suffix = f" (n={group.n})" if group.n else ""
        label = _short(group.label, max(LABEL_CHARS - len(suffix), 4)) + suffix
        parts.append(
            f'<text class="label" x="{LABEL_W - 8}" y="{y0 + (k * (BAR_H + 2)) / 2 + 4:.1f}" '
            f'text-anchor="end">{escape(label)}</text>'
        )
        for i, bar in enumerate(group.bars):
            colour = COLOURS[i % len(COLOURS)]
            mid = y0 + i * (BAR_H + 2) + BAR_H / 2
            parts.append(
                f'<g class="row"><title>{escape(group.label)}, {escape(bar.task_id)}: '
                f"{escape(bar.text)}</title>"
            )
            if bar.value is not None:
                left, right = sorted((x(0.0), x(bar.value)))
                parts.append(
                    f'<rect class="bar" x="{left:.1f}" y="{mid - BAR_H / 2:.1f}" width="{right - left:.1f}" '
                    f'height="{BAR_H}" style="fill:{colour}"/>'
                )
            if bar.ci is not None:
                x1, x2 = x(bar.ci[0]), x(bar.ci[1])
                parts.append(
                    f'<path class="whisker" d="M{x1:.1f},{mid:.1f}H{x2:.1f}M{x1:.1f},{mid - 5:.1f}'
                    f'V{mid + 5:.1f}M{x2:.1f},{mid - 5:.1f}V{mid + 5:.1f}"/>'
                )
            parts.append(
                f'<text class="value" x="{LABEL_W + BAR_W + 8}" y="{mid + 4:.1f}">'
                f"{escape(bar.text)}</text></g>"
            )
    parts.append("</svg>")
    return Markup("".join(parts))
