"""An inline SVG line chart of one metric over time, with baseline promotions and gate decisions drawn as
vertical markers. Every string from data goes through ``markupsafe.escape``."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

from clineval.view.queries_trends import Marker, TrendPoint

W, H, LEFT, RIGHT, TOP, BOTTOM = 760, 260, 60, 20, 16, 34


def line_chart(metric: str, points: Sequence[TrendPoint], marks: Sequence[Marker]) -> Markup:
    shown = [p for p in points if p.value is not None]
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
        f'<text class="tick" x="{LEFT - 6}" y="{y(hi) + 4:.1f}" text-anchor="end">{hi:.3g}</text>',
        f'<text class="tick" x="{LEFT - 6}" y="{y(lo) + 4:.1f}" text-anchor="end">{lo:.3g}</text>',
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
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{x(p.timestamp.timestamp()):.1f},{y(float(p.value or 0.0)):.1f}"
        for i, p in enumerate(shown)
    )
    parts.append(f'<path class="line" d="{path}" fill="none"/>')
    for p in shown:
        parts.append(
            f'<circle class="point" cx="{x(p.timestamp.timestamp()):.1f}" '
            f'cy="{y(float(p.value or 0.0)):.1f}" r="3">'
            f"<title>{escape(p.timestamp.isoformat(timespec='seconds'))}: {float(p.value or 0.0):.4g} "
            f"({escape(p.run_type)})</title></circle>"
        )
    first, last = shown[0].timestamp, shown[-1].timestamp
    parts.append(
        f'<text class="tick" x="{LEFT}" y="{H - 10}">{escape(first.date().isoformat())}</text>'
        f'<text class="tick" x="{W - RIGHT}" y="{H - 10}" text-anchor="end">'
        f"{escape(last.date().isoformat())}</text>"
    )
    parts.append("</svg>")
    return Markup("".join(parts))
