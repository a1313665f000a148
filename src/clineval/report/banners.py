"""Loud banners: a component (the system, the MCQ selection call, the judge, a scorer) that failed on most
of a task's cases, so a report's numbers for it mean nothing (e.g. a judge endpoint that was down).

Counted from the stored per-case results by ``analysis.degradation`` (the same counts as the run's
degradation warnings, at a higher bar: more than half the cases); a judge error rate metric above one half
(``judge_sample_error_rate``) is flagged as well, for runs whose per-case records are not at hand.
"""

from __future__ import annotations

from clineval.analysis.degradation import component_failures
from clineval.core import RunResult
from clineval.report.formatting import is_number

BANNER_THRESHOLD = 0.5
JUDGE_RATE = "judge_sample_error_rate"


def failure_banners(run: RunResult, threshold: float = BANNER_THRESHOLD) -> list[str]:
    """One line per (task, component) that failed on more than ``threshold`` of the cases it ran on."""
    lines = [
        f"task {c.task_id}: {c.component} failed on {c.counts_text()}: {c.kinds_text()}"
        for c in component_failures(run.results)
        if c.failed and c.fraction > threshold
    ]
    flagged_judge = {line.split(":")[0] for line in lines if ": judge failed" in line}
    for task_id, aggregate in run.aggregates.items():
        rate = aggregate.scores.get(JUDGE_RATE)
        if not isinstance(rate, int | float) or not is_number(rate) or f"task {task_id}" in flagged_judge:
            continue
        if rate > threshold:
            lines.append(f"task {task_id}: the judge failed on {rate:.0%} of its samples ({JUDGE_RATE})")
    return lines
