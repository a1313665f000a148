"""The judge qualification of a run's judged tasks, as the run recorded it when it was planned
(``provenance["judge_qualification"][task][prompt]``, ``clineval.runs.judge_status``): a banner for every
judge that is not qualified (none on record, a failed one, a stale one), one line for every qualified one.
Rendering only: the figures are the stored qualification's. An unqualified judge is a banner, never a gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clineval.core import RunResult

KEY = "judge_qualification"


def entries(run: RunResult) -> dict[str, dict[str, Mapping[str, Any]]]:
    """``{task: {prompt: entry}}`` as stored (absent or malformed parts left out)."""
    stored = run.info.provenance.get(KEY)
    found: dict[str, dict[str, Mapping[str, Any]]] = {}
    for task, per in stored.items() if isinstance(stored, Mapping) else ():
        if isinstance(per, Mapping):
            found[str(task)] = {str(p): e for p, e in per.items() if isinstance(e, Mapping)}
    return found


def _kappas(entry: Mapping[str, Any]) -> str:
    parts = []
    for group, fig in (entry.get("groups") or {}).items():
        kappa, interval = fig.get("kappa"), fig.get("interval")
        shown = "undefined" if not isinstance(kappa, int | float) else f"{kappa:.2f}"
        if isinstance(interval, list) and len(interval) == 2:
            shown += f" [{interval[0]:.2f}, {interval[1]:.2f}]"
        parts.append(f"{group} {shown}")
    return ", ".join(parts)


def line(task: str, prompt: str, entry: Mapping[str, Any]) -> str:
    """One judge prompt's qualification in words."""
    status = entry.get("status")
    judge = entry.get("judge", prompt)
    if status == "unqualified":
        return (
            f"task {task}: unqualified judge for {prompt}: no qualification for {judge}; tier-4 grades are"
            " reported unvalidated (clineval judge qualify)"
        )
    ref = f"{entry.get('qualification_id')} of {entry.get('date')}"
    if status == "not qualified":
        reasons = [r for r in entry.get("reasons") or [] if not str(r).startswith("note:")]
        why = "; ".join(str(r) for r in reasons[:3]) or "see the record"
        return (
            f"task {task}: the judge is not qualified for {prompt} ({ref}: {why}); tier-4 grades unvalidated"
        )
    kappa = _kappas(entry)
    labels = f"{entry.get('labelled')} items, {entry.get('reviewers')} clinician(s)"
    if status == "stale":
        return (
            f"task {task}: stale judge qualification for {prompt} ({ref}, {entry.get('age_days')} days old;"
            f" kappa {kappa}): re-qualify before trusting tier-4 grades"
        )
    return f"task {task}: judge qualified for {prompt} ({ref}): kappa {kappa}; labels {labels}"


def qualification_banners(run: RunResult) -> list[str]:
    """A banner per judge prompt that is not ``qualified``."""
    return [
        line(task, prompt, e)
        for task, per in entries(run).items()
        for prompt, e in per.items()
        if e.get("status") != "qualified"
    ]


def qualification_lines(run: RunResult) -> dict[str, list[str]]:
    """Per task, every judge prompt's line (qualified or not)."""
    return {task: [line(task, p, e) for p, e in per.items()] for task, per in entries(run).items()}


def qualified_json(run: RunResult) -> dict[str, bool | None]:
    """Per judged task: True when every reported prompt is qualified, False otherwise (report.json)."""
    return {
        task: all(e.get("status") == "qualified" for e in per.values()) if per else None
        for task, per in entries(run).items()
    }
