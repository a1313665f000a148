"""Feedback for tuning: a stored run's cases and failure counts, never its held-out cases.

Prompt iteration, threshold fitting and error analysis read from here (``clineval feedback RUN_ID``). Held-out
cases (metadata ``split: heldout``, :mod:`clineval.releases.heldout`) are withheld before anything is
counted or exported; only how many were withheld is reported, so a tuning loop cannot see, and therefore
cannot fit, the cases a release gate judges on.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from clineval.core import CaseResult
from clineval.releases.heldout import tuning_only
from clineval.store import ResultStore


@dataclass(frozen=True)
class Feedback:
    run_id: str
    results: list[CaseResult]  # tuning-visible cases (failing ones only, unless asked for all)
    withheld: int  # held-out cases left out
    labels: dict[str, dict[str, int]] = field(default_factory=dict)  # scorer -> label -> count

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "n": len(self.results),
            "withheld_heldout": self.withheld,
            "labels": self.labels,
        }


def _is_failing(result: CaseResult) -> bool:
    """The system failed, or some score is below 1 (NaN = not scorable is not a failure)."""
    return result.failed or any(not math.isnan(s.value) and s.value < 1.0 for s in result.scores.values())


def feedback_from_results(run_id: str, results: list[CaseResult], *, failing_only: bool = True) -> Feedback:
    visible, withheld = tuning_only(results)
    chosen = [r for r in visible if _is_failing(r)] if failing_only else visible
    labels: dict[str, Counter[str]] = {}
    for result in visible:
        for name, score in result.scores.items():
            labels.setdefault(name, Counter())[score.label or "unlabelled"] += 1
    counts = {name: dict(sorted(c.items())) for name, c in sorted(labels.items())}
    return Feedback(run_id, chosen, withheld, counts)


def feedback(store_url: str, run_id: str, *, failing_only: bool = True) -> Feedback:
    """The tuning-visible feedback of a stored run."""
    with ResultStore(store_url, read_only=True) as store:
        full_id = store.resolve_run_id(run_id)
        return feedback_from_results(full_id, store.load_results(full_id), failing_only=failing_only)
