"""Loud banners: a component (the system, the MCQ selection call, the judge, a scorer) that failed on most
of a task's cases, so a report's numbers for it mean nothing (e.g. a judge endpoint that was down).

Read from what the run stored: ``provenance["degradation"]["components"]`` (every component that failed at
least once, counted per task from the per-case results when the run finished, see
``analysis.degradation``), at a higher bar than the degradation warnings: more than half the cases. A judge
error rate metric above one half (``judge_sample_error_rate``) is flagged too, for a task whose components
were not stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from clineval.report.formatting import is_number

if TYPE_CHECKING:
    from clineval.core import RunResult

BANNER_THRESHOLD = 0.5
JUDGE_RATE = "judge_sample_error_rate"
MAX_KINDS = 3


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and is_number(value) else 0


def component_line(c: Mapping[str, Any]) -> str:
    """``task T: judge failed on 10/10 cases (100%; 120/120 calls): connection 119, circuit_open 1``."""
    failed, total = _count(c.get("failed")), _count(c.get("total"))
    calls_failed, calls_total = _count(c.get("calls_failed")), _count(c.get("calls_total"))
    text = f"{failed}/{total} cases ({failed / total if total else 0.0:.0%}"
    if calls_total != total:
        text += f"; {calls_failed}/{calls_total} calls"
    found = c.get("kinds")
    kinds: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    ranked = sorted(((str(k), _count(n)) for k, n in kinds.items()), key=lambda kv: (-kv[1], kv[0]))
    parts = [f"{kind} {n}" for kind, n in ranked[:MAX_KINDS]]
    rest = sum(n for _, n in ranked[MAX_KINDS:])
    shown = ", ".join(parts + ([f"+{rest} other"] if rest else []))
    verb = "could not score" if c.get("unscored") else "failed on"  # a scorer's unscored cases
    cause = f" — likely cause: {c['cause']}" if c.get("cause") else ""
    return f"task {c.get('task')}: {c.get('component')} {verb} {text}): {shown}{cause}"


def failure_banners(run: RunResult, threshold: float = BANNER_THRESHOLD) -> list[str]:
    """One line per (task, component) that failed on more than ``threshold`` of the cases it ran on."""
    stored = run.info.provenance.get("degradation")
    components = stored.get("components") if isinstance(stored, Mapping) else None
    lines, judged = [], set()
    for c in components if isinstance(components, list) else []:
        if not isinstance(c, Mapping):
            continue
        failed, total = _count(c.get("failed")), _count(c.get("total"))
        if total and failed / total > threshold:
            lines.append(component_line(c))
            if c.get("component") == "judge":
                judged.add(str(c.get("task")))
    for task_id, aggregate in run.aggregates.items():
        rate = aggregate.scores.get(JUDGE_RATE)
        if task_id in judged or not isinstance(rate, int | float) or not is_number(rate):
            continue
        if rate > threshold:
            lines.append(f"task {task_id}: the judge failed on {rate:.0%} of its samples ({JUDGE_RATE})")
    return lines
