"""Which cases a report shows: failures counted by error kind, and a sample of cases that went wrong.

Classification (display only): ``failed`` = the system call failed; ``unparsed`` = a scorer labelled the
output ``unparsed``; ``unscored`` = no scorer could score it (all NaN); ``incorrect`` = a scorer labelled
it ``incorrect`` / ``wrong`` or gave it 0.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from clineval.core import CaseInput, CaseResult

T = TypeVar("T")
KINDS = ("failed", "unparsed", "unscored", "incorrect")
_WRONG_LABELS = {"incorrect", "wrong"}
EXCERPT_CHARS = 400
QUESTION_CHARS = 300


@dataclass(frozen=True)
class SampleCase:
    task_id: str
    case_id: str
    kind: str
    reference: str
    verdict: str
    excerpt: str
    label: str = ""  # the first scorer label (``incorrect``, ``unparsed``...), else the kind
    extracted: str = ""  # what the scorer read as the answer (MCQ: the letter, with its option text)
    gold: str = ""  # the gold answer (MCQ: the letter, with its option text), else the reference
    question: str = ""  # the start of the case's question / vignette, when the dataset could be read


def failures_by_kind(results: Iterable[CaseResult]) -> dict[str, dict[str, int]]:
    """``task_id -> error kind -> number of failed cases``, most frequent kind first."""
    counters: dict[str, Counter[str]] = {}
    for result in results:
        if result.output.error is not None:
            counters.setdefault(result.task_id, Counter())[result.output.error.kind] += 1
    return {task: dict(counter.most_common()) for task, counter in counters.items()}


def classify(result: CaseResult) -> str | None:
    """``failed`` / ``unparsed`` / ``unscored`` / ``incorrect``, or None for a case that went right."""
    if result.failed:
        return "failed"
    scores = list(result.scores.values())
    if any((s.label or "").lower() == "unparsed" for s in scores):
        return "unparsed"
    if scores and all(math.isnan(s.value) for s in scores):
        return "unscored"
    if any((s.label or "").lower() in _WRONG_LABELS or s.value == 0.0 for s in scores):
        return "incorrect"
    return None


def excerpt(result: CaseResult, limit: int = EXCERPT_CHARS) -> str:
    """The start of what the system said (text, else its structured output, else its error)."""
    output = result.output
    if output.text:
        text = output.text
    elif output.structured is not None:
        text = json.dumps(output.structured.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
    elif output.error is not None:
        text = f"{output.error.kind}: {output.error.message}"
    else:
        text = ""
    return shorten(text, limit)


def verdict(result: CaseResult) -> str:
    parts = [f"{name}={s.label}" if s.label else f"{name}={s.value:.3g}" for name, s in result.scores.items()]
    return ", ".join(parts)


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_BAD_LABELS = ("failed", "scorer_error", "unparsed", "incorrect", "wrong", "fail")


def first_label(result: CaseResult) -> str:
    """The label that made the case go wrong (``failed``, ``unparsed``, ``incorrect``, ``fail``...), else
    the first label; "" when no scorer labelled it."""
    labels = [s.label for s in result.scores.values() if s.label]
    return next((bad for bad in _BAD_LABELS if bad in labels), labels[0] if labels else "")


def _breakdown_text(result: CaseResult, key: str) -> str:
    """The first scorer breakdown's ``key`` (MCQ ``extracted`` / ``gold``), as text; "" when none has it."""
    for score in result.scores.values():
        value = score.breakdown.get(key)
        if value not in (None, "", [], {}):
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return ""


def _with_option(letter: str, options: Mapping[str, str]) -> str:
    text = options.get(letter)
    return f"{letter}. {shorten(text, 120)}" if text else letter


def case_fields(result: CaseResult, inputs: Mapping[tuple[str, str], CaseInput]) -> dict[str, str]:
    """label / extracted / gold / question of one case (``inputs``: the cases' inputs where known)."""
    given = inputs.get((result.task_id, result.case_id))
    options = given.options if given is not None else {}
    question = ""
    if given is not None:
        question = given.question or given.stem or given.vignette or ""
    extracted = _breakdown_text(result, "extracted")
    gold = _breakdown_text(result, "gold") or (result.reference or "")
    return {
        "label": first_label(result),
        "extracted": _with_option(extracted, options) if extracted else "",
        "gold": _with_option(gold, options) if gold else "",
        "question": shorten(question, QUESTION_CHARS),
    }


def pick_cases(results: Sequence[CaseResult], limit: int = 50) -> list[tuple[str, CaseResult]]:
    """Up to ``limit`` (kind, case) pairs that went wrong, taking kinds in turn so each is represented."""
    by_kind: dict[str, list[CaseResult]] = {kind: [] for kind in KINDS}
    for result in results:
        kind = classify(result)
        if kind is not None and len(by_kind[kind]) < limit:
            by_kind[kind].append(result)
    return in_turn(by_kind, limit)


def in_turn(by_kind: Mapping[str, Sequence[T]], limit: int) -> list[tuple[str, T]]:
    """Up to ``limit`` (kind, item) pairs: the first item of each kind, then the second of each..."""
    picked: list[tuple[str, T]] = []
    for index in range(limit):
        picked += [(kind, found[index]) for kind, found in by_kind.items() if index < len(found)]
        if len(picked) >= limit:
            break
    return picked[:limit]


def sample_cases(
    results: Sequence[CaseResult],
    limit: int = 50,
    inputs: Mapping[tuple[str, str], CaseInput] | None = None,
    *,
    picked: Sequence[tuple[str, CaseResult]] | None = None,
) -> list[SampleCase]:
    """Up to ``limit`` cases that went wrong (see :func:`pick_cases`; ``picked``: already picked), with
    their question excerpt, extracted and gold answers where known."""
    known = inputs or {}
    return [
        SampleCase(
            task_id=r.task_id,
            case_id=r.case_id,
            kind=kind,
            reference=r.reference or "",
            verdict=verdict(r),
            excerpt=excerpt(r),
            **case_fields(r, known),
        )
        for kind, r in (pick_cases(results, limit) if picked is None else picked[:limit])
    ]
