"""An inline SVG line chart of one metric over time: one series per task (a run's tasks are separate rows
of ``eval_results``), with baseline promotions and gate decisions drawn as vertical markers. Every string
from data goes through ``markupsafe.escape``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from markupsafe import Markup, escape

from clineval.report.formatting import fmt_value
from clineval.view.queries_trends import Marker, TrendPoint

W, H, LEFT, RIGHT, TOP, BOTTOM = 760, 260, 60, 20, 16, 48
N_COLOURS = 6  # series-0 .. series-5 in static/view.css (no inline style: the CSP allows none)
MAX_TICKS = 6


def series(points: Sequence[TrendPoint]) -> dict[str, list[TrendPoint]]:
    """``task -> its points`` (oldest first), tasks in order of first appearance."""
    found: dict[str, list[TrendPoint]] = {}
    for p in points:
        if p.value is not None:
            found.setdefault(p.task, []).append(p)
    return found


def _millis(at: datetime) -> str:
    return at.strftime("%H:%M:%S.") + f"{at.microsecond // 1000:03d}"


def tick_labels(ticks: Sequence[datetime]) -> list[str]:
    """The coarsest labels that tell the ticks apart: the time alone when all are on one day (the date is
    written once below the axis), else date and time."""
    if not ticks:
        return []
    one_day = ticks[0].date() == ticks[-1].date()
    formats = (
        [lambda t: t.strftime("%H:%M"), lambda t: t.strftime("%H:%M:%S"), _millis]
        if one_day
        else [lambda t: t.strftime("%Y-%m-%d"), lambda t: t.strftime("%Y-%m-%d %H:%M")]
    )
    for fmt in formats:
        labels = [fmt(t) for t in ticks]
        if len(set(labels)) == len(labels):
            return labels
    return [formats[-1](t) for t in ticks]


def _ticks(times: Sequence[datetime]) -> list[datetime]:
    distinct = sorted(set(times))
    distinct = [t for i, t in enumerate(distinct) if i == 0 or _millis(t) != _millis(distinct[i - 1])]
    if len(distinct) <= MAX_TICKS:
        return distinct
    step = (len(distinct) - 1) / (MAX_TICKS - 1)
    return [distinct[round(i * step)] for i in range(MAX_TICKS)]


def line_chart(metric: str, points: Sequence[TrendPoint], marks: Sequence[Marker]) -> Markup:
    lines = series(points)
    shown = [p for found in lines.values() for p in found]
    if not shown:
        return Markup("")
    times = [p.timestamp.timestamp() for p in shown] + [m.at.timestamp() for m in marks]
    t0, t1 = min(times), max(times)
    values = [float(p.value) for p in shown if p.value is not None]
    lo, hi = min(values), max(values)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5

    def x(t: float) -> float:
        return LEFT + (t - t0) / ((t1 - t0) or 1.0) * (W - LEFT - RIGHT)

    def y(v: float) -> float:
        return TOP + (hi - v) / (hi - lo) * (H - TOP - BOTTOM)

    title = escape(f"{metric} over time")
    parts = [
        f'<svg class="chart trend" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" role="img" aria-label="{title}"><title>{title}</title>',
        *(
            f'<text class="tick" x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">'
            f"{escape(fmt_value(metric, v))}</text>"
            for v in (hi, lo)
        ),
        f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{H - BOTTOM}" y2="{H - BOTTOM}"/>',
    ]
    for mark in marks:
        mx = x(mark.at.timestamp())
        css = (
            "marker-baseline"
            if mark.kind == "baseline"
            else ("marker-pass" if mark.passed else "marker-fail")
        )
        parts.append(
            f'<line class="{css}" x1="{mx:.1f}" x2="{mx:.1f}" y1="{TOP}" y2="{H - BOTTOM}">'
            f"<title>{escape(mark.text)} ({escape(mark.at.isoformat(timespec='seconds'))})</title></line>"
        )
    for i, (task, found) in enumerate(lines.items()):
        path = " ".join(
            f"{'M' if j == 0 else 'L'}{x(p.timestamp.timestamp()):.1f},{y(float(p.value or 0.0)):.1f}"
            for j, p in enumerate(found)
        )
        parts.append(
            f'<g class="series series-{i % N_COLOURS}" data-task="{escape(task)}">'
            f'<path class="line" d="{path}" fill="none"/>'
        )
        for p in found:
            parts.append(
                f'<circle class="point" cx="{x(p.timestamp.timestamp()):.1f}" '
                f'cy="{y(float(p.value or 0.0)):.1f}" r="3">'
                f"<title>{escape(task or 'task')} · {escape(p.timestamp.isoformat(timespec='seconds'))}: "
                f"{escape(fmt_value(metric, p.value))} "
                f"(run {escape(p.short_run_id)}, {escape(p.run_type)})</title></circle>"
            )
        parts.append("</g>")
    first, last = min(p.timestamp for p in shown), max(p.timestamp for p in shown)
    ticks = _ticks([p.timestamp for p in shown])
    for at, text in zip(ticks, tick_labels(ticks), strict=True):
        tx = x(at.timestamp())
        anchor = "start" if tx < LEFT + 40 else ("end" if tx > W - RIGHT - 40 else "middle")
        parts.append(
            f'<line class="grid" x1="{tx:.1f}" x2="{tx:.1f}" y1="{H - BOTTOM}" y2="{H - BOTTOM + 4}"/>'
            f'<text class="tick" x="{tx:.1f}" y="{H - BOTTOM + 16}" text-anchor="{anchor}">'
            f"{escape(text)}</text>"
        )
    if first.date() == last.date():
        parts.append(
            f'<text class="tick" x="{LEFT}" y="{H - 8}">{escape(first.date().isoformat())} (UTC)</text>'
        )
    lx = LEFT + 150
    for i, task in enumerate(lines):
        parts.append(
            f'<rect class="swatch series-{i % N_COLOURS}" x="{lx}" y="{H - 17}" width="10" height="10"/>'
            f'<text class="tick" x="{lx + 14}" y="{H - 8}">{escape(task or "(no task)")}</text>'
        )
        lx += 24 + 7 * len(task or "(no task)")
    parts.append("</svg>")
    return Markup("".join(parts))
