"""Inline SVG bar charts of one metric per stratum, with the interval drawn as a whisker.

Every string from data (stratum values, keys, metric names) goes through ``markupsafe.escape``; the
numbers are formatted by us. The result is ``Markup``, safe to place in an autoescaped template.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from clineval.report.formatting import fmt_interval, fmt_value, is_proportion
from clineval.report.sections.view import StratumRow, StratumTable

LABEL_W, BAR_W, VALUE_W, ROW_H, BAR_H, TOP, BOTTOM = 220, 320, 190, 26, 14, 8, 26
LABEL_CHARS = 28


Point = tuple[float | None, tuple[float, float] | None]


def domain(metric: str, found: list[Point]) -> tuple[float, float]:
    points = [value for value, _ in found if value is not None]
    points += [p for _, ci in found for p in (ci or ())]
    lo, hi = min([0.0, *points]), max([0.0, *points])
    if is_proportion(metric) and lo >= 0.0 and hi <= 1.0:
        return 0.0, 1.0
    return lo, hi if hi > lo else lo + 1.0


def _point(row: StratumRow, metric: str, default: str | None) -> Point:
    if metric in row.points:
        return row.points[metric]
    return (row.bar, row.ci) if metric == default else (None, None)


def ticks(lo: float, hi: float, proportion: bool) -> list[tuple[float, str]]:
    steps = [lo + (hi - lo) * i / 4 for i in range(5)]
    return [(v, f"{v * 100:.0f}%" if proportion else f"{v:.3g}") for v in steps]


def _label(value: str, n: str) -> str:
    """``value (n=N)``, the value shortened so the whole label fits its column."""
    suffix = f" (n={n})"
    room = max(LABEL_CHARS - len(suffix), 4)
    return (value if len(value) <= room else value[: room - 1] + "…") + suffix


def stratum_charts(table: StratumTable) -> list[Markup]:
    """One chart per headline metric of the table (the chart metric first)."""
    metrics = table.chart_metrics or ([table.chart_metric] if table.chart_metric else [])
    return [stratum_chart(table, m) for m in metrics]


def stratum_chart(table: StratumTable, metric: str | None = None) -> Markup:
    """One horizontal bar per stratum value (``class="bar"``) with its interval whisker."""
    metric = metric or table.chart_metric
    if metric is None or not table.rows:
        return Markup("")
    points = [_point(row, metric, table.chart_metric) for row in table.rows]
    lo, hi = domain(metric, points)
    width, height = LABEL_W + BAR_W + VALUE_W, TOP + ROW_H * len(table.rows) + BOTTOM

    def x(value: float) -> float:
        return LABEL_W + (value - lo) / (hi - lo) * BAR_W

    title = escape(f"{metric} by {table.key}")
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{title}"><title>{title}</title>'
    ]
    for value, text in ticks(lo, hi, is_proportion(metric)):
        parts.append(
            f'<line class="grid" x1="{x(value):.1f}" x2="{x(value):.1f}" y1="{TOP - 4}" '
            f'y2="{height - BOTTOM + 4}"/><text class="tick" x="{x(value):.1f}" '
            f'y="{height - 8}" text-anchor="middle">{escape(text)}</text>'
        )
    for i, (row, (bar, ci)) in enumerate(zip(table.rows, points, strict=True)):
        y = TOP + i * ROW_H
        mid = y + ROW_H / 2
        label = escape(_label(row.value, row.n))
        parts.append(
            f'<g class="row"><title>{escape(row.value)}: {escape(fmt_value(metric, bar))} '
            f"{escape(fmt_interval(metric, ci))} n={escape(row.n)}</title>"
            f'<text class="label" x="{LABEL_W - 8}" y="{mid + 4:.1f}" text-anchor="end">'
            f"{label}</text>"
        )
        if bar is not None:
            left, right = sorted((x(0.0), x(bar)))
            parts.append(
                f'<rect class="bar" x="{left:.1f}" y="{mid - BAR_H / 2:.1f}" '
                f'width="{right - left:.1f}" height="{BAR_H}"/>'
            )
        if ci is not None:
            x1, x2, top, bottom = x(ci[0]), x(ci[1]), mid - 6, mid + 6
            parts.append(
                f'<path class="whisker" d="M{x1:.1f},{mid:.1f}H{x2:.1f}M{x1:.1f},{top:.1f}'
                f'V{bottom:.1f}M{x2:.1f},{top:.1f}V{bottom:.1f}"/>'
            )
        shown = fmt_value(metric, bar) if bar is not None else "n/a"
        parts.append(
            f'<text class="value" x="{LABEL_W + BAR_W + 8}" y="{mid + 4:.1f}">{escape(shown)} '
            f"{escape(fmt_interval(metric, ci))}</text></g>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))
