"""The counterfactual section of the reports (issue 27): ``report.json["counterfactual"]`` as text.

The numbers are computed when the run is finalized (``clineval.counterfactual.task.analyse_task``) and kept
in the run's provenance under ``counterfactual``; this module only formats them: Markdown tables, an inline
SVG chart per pair (HTML, every data string escaped with ``markupsafe.escape``), and a console line per task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from clineval.core import RunResult
from clineval.report.md_text import md_inline

KEY = "counterfactual"
W, LABEL_W, ROW_H = 760, 150, 24
PLOT_W = W - LABEL_W - 220  # room on the right for the value and its interval


def counterfactual_of(run: RunResult) -> dict[str, Any]:
    """``task -> analysis`` as stored at finalize (empty when no task has the option)."""
    found = run.info.provenance.get(KEY)
    return dict(found) if isinstance(found, Mapping) else {}


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{float(value):.{digits}f}"


def _p(value: Any) -> str:
    if value is None:
        return "—"
    return f"{float(value):.3g}" if float(value) >= 1e-4 else f"{float(value):.1e}"


def _ci(ci: Any, digits: int = 3) -> str:
    if not ci or ci[0] is None:
        return "—"
    return f"[{float(ci[0]):.{digits}f}, {float(ci[1]):.{digits}f}]"


def _signed_ci(ci: Any) -> str:
    if not ci or ci[0] is None:
        return "—"
    return f"[{float(ci[0]):+.3f}, {float(ci[1]):+.3f}]"


def _signed(value: Any) -> str:
    return "—" if value is None else f"{float(value):+.3f}"


def pair_cells(key: str, row: Mapping[str, Any]) -> list[str]:
    """One pair's row: the keys of issue 27 in reading order."""
    test = row.get("test")
    p_raw = row.get("p_mcnemar_exact") if test == "mcnemar_exact" else row.get("p_wilcoxon")
    return [
        key,
        _num(row.get("n_pairs")),
        _num(row.get("both_right")),
        _num(row.get("a_only")),
        _num(row.get("b_only")),
        _num(row.get("both_wrong")),
        f"{_num(row.get('accuracy_a'))} {_ci(row.get('accuracy_a_ci'))}",
        f"{_num(row.get('accuracy_b'))} {_ci(row.get('accuracy_b_ci'))}",
        f"{_signed(row.get('delta'))} {_signed_ci(row.get('delta_ci'))}",
        f"{_p(p_raw)} ({test or '—'})",
        _p(row.get("p_holm")),
        _num(row.get("flip_rate")),
    ]


PAIR_HEAD = ["pair a|b", "n pairs", "both right", "a only", "b only", "both wrong", "accuracy a (95% CI)",
             "accuracy b (95% CI)", "delta b−a (95% CI)", "p", "p Holm", "flip rate"]  # fmt: skip
VARIANT_HEAD = ["variant", "n", "accuracy (95% CI)", "flip rate vs reference", "delta vs reference (95% CI)"]


def variant_cells(name: str, row: Mapping[str, Any]) -> list[str]:
    return [
        name,
        _num(row.get("n")),
        f"{_num(row.get('accuracy'))} {_ci(row.get('accuracy_ci'))}",
        _num(row.get("flip_rate_vs_reference")),
        _delta(row.get("delta_vs_reference"), row.get("delta_vs_reference_ci")),
    ]


def _delta(value: Any, ci: Any) -> str:
    return "—" if value is None else f"{_signed(value)} {_signed_ci(ci)}"


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(md_inline(c) for c in cells) + " |"


def _notes(analysis: Mapping[str, Any]) -> list[str]:
    notes = [f"{k}: {r['note']}" for k, r in analysis.get("pairs", {}).items() if r.get("note")]
    if analysis.get("gate_note"):
        notes.append(str(analysis["gate_note"]))
    if analysis.get("n_unscored"):
        notes.append(f"{analysis['n_unscored']} case(s) not scored (failed call or unscorable): in no pair")
    return notes


def markdown_lines(data: Mapping[str, Any]) -> list[str]:
    """``## Counterfactual fairness`` with a variant table and a pair table per task (empty: no lines)."""
    if not data:
        return []
    lines = ["## Counterfactual fairness", ""]
    for task, analysis in data.items():
        ref = analysis.get("reference")
        lines += [
            f"### {md_inline(task)}",
            "",
            f"Scorer {md_inline(analysis.get('scorer'))}; reference variant: {md_inline(ref or '(none)')}.",
            "",
        ]
        lines += [_md_row(VARIANT_HEAD), "|" + "---|" * len(VARIANT_HEAD)]
        lines += [_md_row(variant_cells(n, r)) for n, r in analysis.get("variants", {}).items()]
        lines += ["", _md_row(PAIR_HEAD), "|" + "---|" * len(PAIR_HEAD)]
        lines += [_md_row(pair_cells(k, r)) for k, r in analysis.get("pairs", {}).items()]
        lines += [""] + [f"- {md_inline(n)}" for n in _notes(analysis)] + ([""] if _notes(analysis) else [])
    return lines


def console_lines(data: Mapping[str, Any]) -> list[str]:
    """One line per pair: ``counterfactual race white|black: n=21 delta -0.190 [..] p=0.0312 flips 0.19``."""
    out = []
    for task, analysis in data.items():
        for key, row in analysis.get("pairs", {}).items():
            p = row.get("p_mcnemar_exact") if row.get("test") == "mcnemar_exact" else row.get("p_wilcoxon")
            out.append(
                f"counterfactual {task} {key}: n={_num(row.get('n_pairs'))} "
                f"delta {_signed(row.get('delta'))} {_signed_ci(row.get('delta_ci'))} p={_p(p)} "
                f"p_holm={_p(row.get('p_holm'))} "
                f"flip rate {_num(row.get('flip_rate'))}"
            )
    return out


def _x(value: float, lo: float, hi: float) -> float:
    return LABEL_W + (value - lo) / (hi - lo) * PLOT_W


def pair_chart(key: str, row: Mapping[str, Any]) -> Markup:
    """Accuracy of a and of b with their intervals, then the paired difference b − a with its interval on
    [-1, 1] (a line at 0), then the 2x2 table as one stacked bar. Every label is escaped."""
    if not row.get("n_pairs"):
        return Markup(f'<p class="meta">{escape(key)}: no scored pairs.</p>')
    a, b = (escape(x) for x in key.split("|", 1))
    bars = [
        (a, row.get("accuracy_a"), row.get("accuracy_a_ci")),
        (b, row.get("accuracy_b"), row.get("accuracy_b_ci")),
    ]
    parts: list[str] = []
    y = 8
    for label, value, ci in bars:
        parts.append(f'<text x="{LABEL_W - 6}" y="{y + 14}" text-anchor="end">{label}</text>')
        parts.append(
            f'<rect class="bar" x="{LABEL_W}" y="{y + 3}" '
            f'width="{_x(float(value or 0.0), 0, 1) - LABEL_W:.1f}" height="14"/>'
        )
        if ci and ci[0] is not None:
            x0, x1 = _x(float(ci[0]), 0, 1), _x(float(ci[1]), 0, 1)
            parts.append(
                f'<line class="ci" x1="{x0:.1f}" x2="{x1:.1f}" y1="{y + 10}" y2="{y + 10}" stroke="#000"/>'
            )
        parts.append(f'<text x="{LABEL_W + PLOT_W + 6}" y="{y + 14}">{_num(value)} {_ci(ci)}</text>')
        y += ROW_H
    delta, dci = row.get("delta"), row.get("delta_ci")
    zero = _x(0.0, -1, 1)
    parts.append(f'<text x="{LABEL_W - 6}" y="{y + 14}" text-anchor="end">{b} − {a}</text>')
    parts.append(f'<line x1="{zero:.1f}" x2="{zero:.1f}" y1="{y}" y2="{y + 20}" stroke="#888"/>')
    if delta is not None:
        if dci and dci[0] is not None:
            x0, x1 = _x(float(dci[0]), -1, 1), _x(float(dci[1]), -1, 1)
            parts.append(
                f'<line class="ci" x1="{x0:.1f}" x2="{x1:.1f}" y1="{y + 10}" y2="{y + 10}" stroke="#000"/>'
            )
        parts.append(f'<circle class="delta" cx="{_x(float(delta), -1, 1):.1f}" cy="{y + 10}" r="4"/>')
    parts.append(f'<text x="{LABEL_W + PLOT_W + 6}" y="{y + 14}">{_signed(delta)} {_signed_ci(dci)}</text>')
    y += ROW_H
    cells = [
        ("both right", row.get("both_right"), "#4a8"),
        ("a only", row.get("a_only"), "#e94"),
        ("b only", row.get("b_only"), "#49e"),
        ("both wrong", row.get("both_wrong"), "#bbb"),
    ]
    if all(isinstance(c, int) for _, c, _ in cells):
        x, n = float(LABEL_W), float(row["n_pairs"])
        parts.append(f'<text x="{LABEL_W - 6}" y="{y + 14}" text-anchor="end">pairs</text>')
        for name, count, colour in cells:
            width = PLOT_W * int(count or 0) / n
            title = f"{name}: {count}"
            parts.append(
                f'<rect x="{x:.1f}" y="{y + 3}" width="{width:.1f}" height="14" fill="{colour}">'
                f"<title>{title}</title></rect>"
            )
            x += width
        summary = " / ".join(f"{c}" for _, c, _ in cells)
        parts.append(f'<text x="{LABEL_W + PLOT_W + 6}" y="{y + 14}">{summary}</text>')
        y += ROW_H
    head = f"{escape(key)}: accuracy of each variant, paired difference b − a, and the 2x2 table"
    return Markup(
        f'<svg class="chart counterfactual" role="img" aria-label="{head}" width="{W}" height="{y + 6}" '
        f'xmlns="http://www.w3.org/2000/svg" font-size="12">' + "".join(parts) + "</svg>"
    )


def _html_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<div class="scroll"><table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>'


def counterfactual_html(data: Mapping[str, Any]) -> Markup:
    """The HTML section (empty Markup when no task has the option)."""
    if not data:
        return Markup("")
    out = ['<section class="card counterfactual" id="counterfactual"><h2>Counterfactual fairness</h2>']
    for task, analysis in data.items():
        ref = analysis.get("reference") or "(none)"
        scorer = escape(analysis.get("scorer"))
        out.append(
            f'<h3>{escape(task)}</h3><p class="meta">scorer {scorer}; reference variant {escape(ref)}; '
            "whiskers: 95% intervals (Wilson; Newcombe for the difference)</p>"
        )
        variants = analysis.get("variants", {})
        out.append(_html_table(VARIANT_HEAD, [variant_cells(n, r) for n, r in variants.items()]))
        pairs = analysis.get("pairs", {})
        out.append(_html_table(PAIR_HEAD, [pair_cells(k, r) for k, r in pairs.items()]))
        out.extend(str(pair_chart(k, r)) for k, r in pairs.items())
        notes = _notes(analysis)
        if notes:
            out.append("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    out.append("</section>")
    return Markup("".join(out))
