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


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str | int | float | bool):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, default=str)


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
        (str(k), _cell(v))
        for k, v in list(breakdown.items())
        if v is None or isinstance(v, str | int | float | bool)
    ]
    for key, _ in facts:
        breakdown.pop(key, None)
    value = "not scorable" if not score.scorable else f"{score.value:.4g}"
    return ScoreView(
        scorer=name,
        value=value,
        label=score.label or "",
        explanation=score.explanation or "",
        tables=tables,
        facts=facts,
        checks=checks,
        votes=votes,
        rest_json=json.dumps(breakdown, indent=2, ensure_ascii=False, default=str) if breakdown else "",
    )


def score_views(result: CaseResult) -> list[ScoreView]:
    return [score_view(name, score) for name, score in result.scores.items()]
