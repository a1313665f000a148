"""The case page's pieces: the output with the extracted answer highlighted, and every scorer's breakdown
rendered for a human (tables for lists of records, judge votes per sample), pretty JSON otherwise.

Everything from data is escaped here (``markupsafe``) or by the autoescaping templates; the only markup
added is ours (``<mark>``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

from clineval.core import CaseResult, Score, SystemOutput
from clineval.report.formatting import fmt_value, is_number, is_proportion

# breakdown keys that hold a list of records, shown as a table (ddx decisions, tier-3 rule results, ...)
TABLE_KEYS = {
    "decisions": "Decisions (class, ground truth, system name, tier, confidence, explanation, evidence)",
    "rules": "Rule results",
    "injection_hits": "Prompt-injection matches",
}


@dataclass(frozen=True)
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    testid: str


@dataclass(frozen=True)
class ScoreView:
    scorer: str
    value: str
    label: str
    explanation: str
    label_text: str = ""  # the label as a reader says it (DDx: "hit in the top 1")
    tables: list[Table] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)  # short scalar breakdown items
    checks: list[str] = field(default_factory=list)  # tier-1 reasons / violations
    votes: Table | None = None  # judge dimensions: one row per dimension, one column per sample
    rest_json: str = ""  # breakdown items not shown otherwise


def output_text(output: SystemOutput) -> str:
    """The full output: its text, else its structured output as indented JSON, else its error."""
    if output.text:
        return output.text
    if output.structured is not None:
        return json.dumps(
            output.structured.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False
        )
    if output.error is not None:
        return f"{output.error.kind}: {output.error.message}"
    return ""


OUTPUT_LIMIT = 200_000  # characters of an output a case page shows; the whole text is at its raw link


def clipped(text: str, limit: int = OUTPUT_LIMIT) -> tuple[str, bool]:
    """The first ``limit`` characters of ``text``, and whether it was cut. A 30 MB output rendered in full
    took Chromium 1 min 45 s; the case page shows this much and links the full text
    (``/run/case/output``, plain text)."""
    return (text[:limit], True) if len(text) > limit else (text, False)


def pretty(text: str) -> str:
    """Indented JSON when ``text`` is a JSON object or list, else ``text`` unchanged."""
    stripped = text.strip()
    if stripped[:1] in "{[":
        try:
            return json.dumps(json.loads(stripped), indent=2, ensure_ascii=False)
        except ValueError:
            return text
    return text


def highlighted(text: str, span: str | None) -> tuple[Markup, bool]:
    """``text`` escaped, with the last occurrence of ``span`` wrapped in ``<mark>``; whether it was found."""
    if span:
        at = text.rfind(span)
        if at >= 0:
            mark = Markup('<mark id="answer-span" data-testid="answer-span">{}</mark>').format(span)
            return escape(text[:at]) + mark + escape(text[at + len(span) :]), True
    return escape(text), False


def answer_span(result: CaseResult) -> str | None:
    """The text the MCQ scorer read its answer from, when it reports one."""
    for score in result.scores.values():
        span = score.breakdown.get("span")
        if isinstance(span, str) and span:
            return span
    return None


def _quote(item: Mapping[str, Any]) -> str:
    """``"text" (source, round 2, agent a)``: one evidence record as a line of text."""
    where = [str(item["source"])] if item.get("source") not in (None, "") else []
    where += [f"{k} {item[k]}" for k in ("round", "agent") if item.get(k) not in (None, "")]
    rest = [f"{k} {_cell(v)}" for k, v in item.items() if k not in ("text", "source", "round", "agent")]
    where += [r for r in rest if r.split(" ", 1)[1]]
    return f"“{item.get('text', '')}”" + (f" ({', '.join(where)})" if where else "")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list) and value and all(isinstance(v, Mapping) and "text" in v for v in value):
        return "; ".join(_quote(v) for v in value)
    if isinstance(value, str | int | float | bool):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _fact(name: str, value: Any) -> str:
    """A scalar of a breakdown as text: yes / no, proportions as percentages, other floats to 4 digits."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and is_number(value):
        return fmt_value(name, value) if is_proportion(name) else f"{value:.4g}"
    return _cell(value)


def records_table(title: str, records: list[Any], testid: str) -> Table:
    columns: list[str] = []
    for record in records:
        if isinstance(record, Mapping):
            columns += [str(k) for k in record if str(k) not in columns]
    rows = [[_cell(r.get(c)) for c in columns] if isinstance(r, Mapping) else [_cell(r)] for r in records]
    return Table(title, columns or ["value"], rows, testid)


def _votes(dimensions: Mapping[str, Any]) -> Table:
    width = max(
        (len(d.get("samples") or []) for d in dimensions.values() if isinstance(d, Mapping)), default=0
    )
    rows = []
    for name, dim in dimensions.items():
        if not isinstance(dim, Mapping):
            continue
        samples = list(dim.get("samples") or [])
        reasons = list(dim.get("reasons") or [])
        errors = list(dim.get("sample_errors") or [])
        cells = []
        for i in range(width):
            grade = samples[i] if i < len(samples) else None
            why = errors[i] if i < len(errors) and errors[i] else (reasons[i] if i < len(reasons) else None)
            cells.append(f"{'error' if grade is None else grade}" + (f" ({why})" if why else ""))
        rows.append(
            [str(name), _cell(dim.get("grade")), *cells, _cell(dim.get("flips")), _cell(dim.get("errors"))]
        )
    columns = ["dimension", "majority grade", *[f"sample {i + 1}" for i in range(width)], "flips", "errors"]
    return Table("Judge votes per sample", columns, rows, "judge-votes")


def score_view(name: str, score: Score) -> ScoreView:
    breakdown = dict(score.breakdown)
    tables = []
    for key, title in TABLE_KEYS.items():
        found = breakdown.get(key)
        if isinstance(found, list) and found:
            tables.append(records_table(title, breakdown.pop(key), f"breakdown-{key}"))
    votes = None
    dims = breakdown.get("dimensions")
    if isinstance(dims, Mapping) and dims and all(isinstance(d, Mapping) for d in dims.values()):
        votes = _votes(breakdown.pop("dimensions"))
    checks = []
    reasons = breakdown.get("reasons")
    if isinstance(reasons, list):
        checks = [_cell(r) for r in breakdown.pop("reasons")]
    facts = [
        (str(k), _fact(str(k), v))
        for k, v in list(breakdown.items())
        if v is None or isinstance(v, str | int | float | bool)
    ]
    for key, _ in facts:
        breakdown.pop(key, None)
    value = "not scorable" if not score.scorable else f"value {score.value:.4g}"
    label_text = score.label or ""
    if "first_hit_rank" in score.breakdown or "n_ground_truth" in score.breakdown:
        label_text, value = _ddx_header(score)
    return ScoreView(
        scorer=name,
        value=value,
        label=score.label or "",
        label_text=label_text,
        explanation=score.explanation or "",
        tables=tables,
        facts=facts,
        checks=checks,
        votes=votes,
        rest_json=json.dumps(breakdown, indent=2, ensure_ascii=False, default=str) if breakdown else "",
    )


def _ddx_header(score: Score) -> tuple[str, str]:
    """The DDx scorer's label and value in words: ``("hit in the top 3", "recall 67% (2 of 3), ...")``."""
    label = score.label or ""
    bd = score.breakdown
    if label.startswith("top") and label[3:].isdigit():
        label = f"hit in the top {label[3:]}"
    elif label == "found":
        label = "found, below the top ranks"
    if not score.scorable:
        return label, "not scorable"
    parts = [f"recall {score.value * 100:.0f}%"]
    tp, n = bd.get("TP"), bd.get("n_ground_truth")
    if isinstance(tp, int) and isinstance(n, int):
        parts[0] += f" ({tp} of {n} diagnoses found)"
    rank = bd.get("first_hit_rank")
    if isinstance(rank, int) and not isinstance(rank, bool):
        parts.append(f"first hit at rank {rank}")
    return label, ", ".join(parts)


def score_views(result: CaseResult) -> list[ScoreView]:
    return [score_view(name, score) for name, score in result.scores.items()]
