"""``results.jsonl``: one line per case and task, with scores, output, error and latency (NaN as null)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from clineval.core import CaseResult
from clineval.report.formatting import jsonable_dict


def case_record(result: CaseResult) -> dict[str, Any]:
    """The JSON object of one result line."""
    return jsonable_dict(_record(result))


def _record(result: CaseResult) -> dict[str, Any]:
    output = result.output
    structured = output.structured.model_dump(mode="json", exclude_none=True) if output.structured else None
    return {
        "task_id": result.task_id,
        "case_id": result.case_id,
        "reference": result.reference,
        "scores": {
            name: {
                "value": s.value,
                "label": s.label,
                "explanation": s.explanation,
                "breakdown": s.breakdown,
            }
            for name, s in result.scores.items()
        },
        "output": output.text,
        "structured": structured,
        "error": output.error.model_dump(mode="json") if output.error else None,
        "latency_s": output.latency_s,
        "stage_latency_s": output.stage_latency_s,
        "attempts": output.attempts,
        "cached": output.cached,
        "usage": output.usage.model_dump(mode="json") if output.usage else None,
        "metadata": result.metadata,
    }


def case_line(result: CaseResult) -> str:
    """One line of results.jsonl: :func:`case_record` as JSON. Most records hold no NaN or infinity, so
    they are encoded as they are (strict JSON refuses the others, which then take the walk that writes
    them as null): a million-case file in half the time."""
    record = _record(result)
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False, default=str)
    except ValueError:
        return json.dumps(jsonable_dict(record), ensure_ascii=False, allow_nan=False, default=str)


def write_results_jsonl(results: Iterable[CaseResult], path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for result in results:
            out.write(case_line(result))
            out.write("\n")
    return path
