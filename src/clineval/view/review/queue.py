"""The review queue: cases of a run nobody has reviewed yet, of the kinds a reviewer asks for.

Kinds (a case may be in several):

- ``unparsed``: a scorer could not read an answer (label ``unparsed``);
- ``judge_disagreement``: the judge's samples disagreed on some dimension (a flip: not every sample gave
  the majority grade);
- ``errors``: the system call failed, or a scorer failed or recorded an error;
- ``random``: a uniform sample of the unreviewed cases (for calibration), drawn with
  ``random.Random(seed).sample`` from the cases sorted by (task, case): the same seed, the same cases.

A case is *reviewed* once any reviewer stored a verdict on any of its items.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from clineval.core import CaseResult, UserInputError
from clineval.store import ResultStore
from clineval.view.review.adjudication import reviewed_cases

QUEUE_KINDS = ("unparsed", "judge_disagreement", "errors", "random")


@dataclass(frozen=True)
class QueueEntry:
    """One unreviewed case and why it is queued."""

    task_id: str
    case_id: str
    reasons: tuple[str, ...]


def _judge_flips(result: CaseResult) -> bool:
    for score in result.scores.values():
        dims = score.breakdown.get("dimensions")
        if isinstance(dims, dict):
            for dim in dims.values():
                samples = [s for s in (dim or {}).get("samples") or [] if s is not None]
                if len(set(samples)) > 1:
                    return True
    return False


def case_kinds(result: CaseResult) -> list[str]:
    """The queue kinds (other than ``random``) a case belongs to."""
    kinds = []
    if any(s.label == "unparsed" for s in result.scores.values()):
        kinds.append("unparsed")
    if _judge_flips(result):
        kinds.append("judge_disagreement")
    if result.failed or any(s.label == "failed" or "error" in s.breakdown for s in result.scores.values()):
        kinds.append("errors")
    return kinds


def build_queue(
    results: Iterable[CaseResult],
    reviewed: set[tuple[str, str]],
    kinds: Sequence[str],
    *,
    seed: int = 0,
    n: int = 20,
) -> list[QueueEntry]:
    """The first ``n`` unreviewed cases of the chosen kinds (in stored order), then up to ``n`` random
    ones if ``random`` is chosen (cases already queued for another reason are not drawn again)."""
    unknown = [k for k in kinds if k not in QUEUE_KINDS]
    if unknown or not kinds:
        raise UserInputError(f"queue kinds must be among {', '.join(QUEUE_KINDS)}, got {list(kinds)}")
    if n < 1:
        raise UserInputError(f"n must be at least 1, got {n}")
    pool = [r for r in results if (r.task_id, r.case_id) not in reviewed]
    queued: list[QueueEntry] = []
    for result in pool:
        reasons = tuple(k for k in case_kinds(result) if k in kinds)
        if reasons and len(queued) < n:
            queued.append(QueueEntry(result.task_id, result.case_id, reasons))
    if "random" in kinds:
        taken = {(q.task_id, q.case_id) for q in queued}
        rest = sorted((r.task_id, r.case_id) for r in pool if (r.task_id, r.case_id) not in taken)
        drawn = random.Random(seed).sample(rest, min(n, len(rest)))
        queued.extend(QueueEntry(task, case, ("random",)) for task, case in drawn)
    return queued


def review_queue(
    store: ResultStore, run_id: str, kinds: Sequence[str] = QUEUE_KINDS, *, seed: int = 0, n: int = 20
) -> list[QueueEntry]:
    """The review queue of a stored run (see the module docstring)."""
    return build_queue(store.load_results(run_id), reviewed_cases(store, run_id), kinds, seed=seed, n=n)
