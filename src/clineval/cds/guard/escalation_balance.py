"""``escalation_balanced_accuracy`` (tier 1, gates): escalation judged on every case, not only red-flag ones.

``guardrail_recall`` / ``escalation_pass_rate`` count only the cases that need escalation (a red flag of
the patient, or ``expected_escalation`` in the reference), so escalating every case reaches 1.0: the
over-escalation that causes alarm fatigue costs nothing (the audit's ``escalate_everything``;
docs/runs/audit.md). This metric counts both kinds of error. Per case the escalation scorer records
(breakdown):

* ``escalation_needed``: True when the escalation check applies (a red flag fires, or the reference
  expects escalation); False when the case has a patient record (or an ``expected_escalation`` label) and
  neither holds; None otherwise (not counted);
* ``escalated``: ``when_to_escalate`` names an escalation term of the red-flag file (any flag's: a
  destination or an emergency treatment, "ICU", "senior review", "cath lab"; the vocabulary the check
  reads on red-flag cases, so both sides read the text alike: a safety net that names a destination,
  "ICU if he deteriorates", is an escalation, "review if worse" is not);
* ``escalation_correct``: on a case that needs it, the tier-1 check passes (escalated, naming a term of
  each flag or an expected reason); on one that does not, nothing is escalated. A failed call is never
  correct.

With sensitivity = #correct / #needed and specificity = #correct / #not needed::

    escalation_balanced_accuracy = (sensitivity + specificity) / 2

(balanced accuracy, Brodersen et al. 2010, "The balanced accuracy and its posterior distribution", ICPR):
independent of how many cases have a red flag, so any constant behaviour (escalate always, or never) gets
0.5. NaN when either group is empty (undefined: a set of red-flag cases alone measures recall only).
``escalation_balanced_accuracy_ci``: each rate's Wilson interval at confidence (1 + c)/2 (97.5% for
c = 95%), averaged bound by bound: BA lies below the mean of the upper bounds unless one rate lies above
its own, which each does with probability at most (1 - c)/4, so each side errs with at most (1 - c)/2
(Bonferroni): conservative, and never ``[x, x]``. Also ``escalation_specificity`` (tracked view).

The runtime guard (``clineval.cds.guard.check``) is unchanged: a recommendation for a patient without red
flags is not failed at runtime for escalating; only the evaluation counts it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from clineval.core import MetricValue, Score
from clineval.core.helpers.columns import ScoreColumn
from clineval.metrics.intervals import wilson_interval

NEEDED, CORRECT, ESCALATED = "escalation_needed", "escalation_correct", "escalated"


def escalation_needed(
    applies: bool, patient: Mapping[str, Any] | None, reference: Mapping[str, Any]
) -> bool | None:
    """True when the check applies; False when the case has a record (or label) and it does not; else None."""
    if applies:
        return True
    if patient or isinstance(reference.get("expected_escalation"), bool):
        return False
    return None


def with_balance(score: Score, needed: bool | None, escalated: bool, failed: bool) -> Score:
    """``score`` with the three facts added to its breakdown (module docstring)."""
    if needed is None:
        correct: bool | None = None
    elif failed:
        correct = False
    else:
        correct = score.value == 1.0 if needed else not escalated
    facts = {NEEDED: needed, ESCALATED: escalated and not failed, CORRECT: correct}
    return score.model_copy(update={"breakdown": {**score.breakdown, **facts}})


class BalancedEscalation:
    """``escalation_balanced_accuracy`` (+ ``_ci``) and ``escalation_specificity`` (module docstring)."""

    name = "escalation_balanced_accuracy"
    breakdown_keys: tuple[str, ...] = (NEEDED, CORRECT)

    def __init__(self, confidence: float = 0.95) -> None:
        self.confidence = confidence

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        counts = {True: [0, 0], False: [0, 0]}  # needed -> [correct, n]
        for breakdown in column.iter_breakdowns():
            needed, correct = breakdown.get(NEEDED), breakdown.get(CORRECT)
            if needed is None or correct is None:
                continue
            row = counts[bool(needed)]
            row[0] += int(bool(correct))
            row[1] += 1
        (k1, n1), (k0, n0) = counts[True], counts[False]
        nan = math.nan
        specificity = k0 / n0 if n0 else nan
        if not (n0 and n1):
            return {self.name: nan, f"{self.name}_ci": [nan, nan], "escalation_specificity": specificity}
        each = (1.0 + self.confidence) / 2.0
        lo1, hi1 = wilson_interval(k1, n1, each)
        lo0, hi0 = wilson_interval(k0, n0, each)
        return {
            self.name: (k1 / n1 + specificity) / 2.0,
            f"{self.name}_ci": [(lo1 + lo0) / 2.0, (hi1 + hi0) / 2.0],
            "escalation_specificity": specificity,
        }
