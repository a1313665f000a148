"""Degradation: a component that failed on too many of a task's cases makes the run's numbers unreliable.

A run whose judge endpoint was down still "finishes": every judge call fails, the judged metrics are
NaN, and nothing else looks wrong. This module counts, per task and component, the cases on which the
component failed, from the stored per-case results alone (so a resumed or re-reported run gets the same
answer):

- ``system``: the system call failed (``output.error``, kind = ``error.kind``);
- ``selection``: the MCQ selection call failed (``raw["mcq_selection"]["error"]``);
- ``judge``: at least one of the case's judge decisions has an error (``raw["equivalence_judge"]``);
  the kinds are counted per judge call (a call failure ``"<kind>: <message>"`` gives ``<kind>``; a reply
  with no usable answer ``unusable_reply``; a name too long to send ``not_sent``);
- ``scorer NAME``: the scorer raised on the case (label ``scorer_error``, kind = the exception type), or
  could not score it although the system answered: a label of :data:`UNSCORED` (kind = the label), e.g.
  ``no_differential`` (the output has no structured differential: DDx recall 0 on every case, "a silent
  zero"), ``no_reference`` (the case has nothing to score against: ``ddx`` on an MCQ dataset), ``unparsed``
  (no answer could be read). A case whose system call failed is counted under ``system`` only.

A component is *degraded* when it failed on more than ``threshold`` (default 20%) of the cases it ran on
(``failed / total > threshold``). Each degraded component gives one warning line naming the task, the
component, the count and fraction and the most frequent failure kinds, and for a scorer that could not
score, the likely cause (:data:`CAUSES`). A failed system call also keeps the first line of its message
(``messages``: per kind the most frequent one): ``exception 20`` alone does not tell the user what to fix,
``exception: ValueError: model file /models/x.bin not found`` does.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clineval.core import CaseResult

DEFAULT_THRESHOLD = 0.2
MAX_KINDS = 3  # failure kinds named in one line; the rest are summed as "+N other"
MESSAGE_CHARS = 160  # of a failure message's first line, shown beside its kind
MAX_MESSAGES = 8  # distinct messages counted per (task, component, kind); later new ones are not counted
SCORER_ERROR = "scorer_error"
_CALL_KIND = re.compile(r"^([a-z][a-z0-9_]*): ")  # runner.judging records a failed call as "kind: message"
_JUDGE_PROBLEMS = (("a name is longer than", "not_sent"), ("the judge has no prompt", "no_prompt"))

# Labels a scorer gives a case it could not score although the system answered (each scorer's module says
# when). Not listed, because they are legitimate: ``not_applicable`` (e.g. no red flag), ``failed`` (the
# system failed: counted as ``system``), and every label of a scored case.
UNSCORED = (
    "no_differential",
    "no_reference",
    "unparsed",
    "no_patient",
    "no_transcript",
    "no_reasoning",
    "unscorable",
    "no_judge",
    "empty",
)
# (scorer, label) -> the likely cause, shown in the warning; (None, label) for any scorer
CAUSES: dict[tuple[str | None, str], str] = {
    ("ddx", "no_differential"): "outputs carry no structured differential: ask the model for JSON with a "
    "`differential` list (see docs/ddx/ddx_scoring.md)",
    ("ddx", "no_reference"): "the dataset has no expected differential (reference.differential): `ddx` "
    "scores differential-diagnosis datasets (see docs/ddx/ddx_scoring.md)",
    ("mcq", "no_reference"): "the cases have no gold answer among their options: is this an MCQ dataset?",
    (None, "no_reference"): "the cases carry no reference this scorer needs: is it the right scorer for "
    "this dataset?",
    (None, "unparsed"): "no answer could be read from the outputs: ask for the option letter (or a JSON "
    "`answer`) and check the prompt",
    (None, "no_patient"): "the cases have no input.data['patient'] record (see docs/cds/tier3_guidelines.md)",
    (None, "no_transcript"): "outputs carry no multi-agent transcript (see docs/ddx/process_metrics.md)",
    (None, "no_reasoning"): "outputs carry no reasoning text",
    (None, "unscorable"): "the cases have no rubric items with positive points",
    (None, "no_judge"): "the task has no judge: add `judge:` to the task",
    (None, "empty"): "the outputs are empty",
}


def likely_cause(component: str, kind: str) -> str | None:
    """The cause of ``kind`` for a ``scorer NAME`` component (None: not an unscored label)."""
    scorer = component.removeprefix("scorer ")
    return CAUSES.get((scorer, kind)) or CAUSES.get((None, kind))


@dataclass(frozen=True)
class Outcome:
    """One component on one case: ``calls`` made, one failure kind per failed call (empty: it worked)."""

    component: str
    calls: int
    failures: tuple[str, ...] = ()


@dataclass
class ComponentFailures:
    """A component of one task over all its cases: cases failed / cases run, and kinds with counts."""

    task_id: str
    component: str
    failed: int = 0
    total: int = 0
    calls_failed: int = 0
    calls_total: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    messages: dict[str, Counter[str]] = field(default_factory=dict)  # kind -> first lines of its messages

    def add_message(self, kind: str, message: str, times: int = 1) -> None:
        found = self.messages.setdefault(kind, Counter())
        if message in found or len(found) < MAX_MESSAGES:
            found[message] += times

    def top_messages(self) -> dict[str, str]:
        """Per failure kind (most frequent first), its most frequent message."""
        ranked = sorted(self.kinds.items(), key=lambda kv: (-kv[1], kv[0]))
        return {
            kind: sorted(self.messages[kind].items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            for kind, _ in ranked
            if self.messages.get(kind)
        }

    @property
    def fraction(self) -> float:
        return self.failed / self.total if self.total else 0.0

    def degraded(self, threshold: float) -> bool:
        return self.failed > 0 and self.fraction > threshold

    def counts_text(self) -> str:
        """``100/100 cases (100%; 1200/1200 calls)`` (calls only for a component with several per case)."""
        text = f"{self.failed}/{self.total} cases ({self.fraction:.0%}"
        if self.calls_total != self.total:
            text += f"; {self.calls_failed}/{self.calls_total} calls"
        return text + ")"

    def kinds_text(self) -> str:
        """``connection 1200, http_500 3, +2 other``: the most frequent kinds first."""
        ranked = sorted(self.kinds.items(), key=lambda kv: (-kv[1], kv[0]))
        parts = [f"{kind} {n}" for kind, n in ranked[:MAX_KINDS]]
        rest = sum(n for _, n in ranked[MAX_KINDS:])
        return ", ".join(parts + ([f"+{rest} other"] if rest else []))

    @property
    def unscored(self) -> bool:
        """A scorer whose every failure is a case it could not score (not an exception)."""
        return self.component.startswith("scorer ") and bool(self.kinds) and set(self.kinds) <= set(UNSCORED)

    def cause(self) -> str | None:
        """The likely cause of the most frequent unscored label (None for other failures)."""
        if not self.unscored:
            return None
        top = sorted(self.kinds.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        return likely_cause(self.component, top)

    def warning(self) -> str:
        verb = "could not score" if self.unscored else "failed on"
        text = f"task {self.task_id}: {self.component} {verb} {self.counts_text()}: {self.kinds_text()}"
        cause = self.cause()
        return text + (f" — likely cause: {cause}" if cause else "")

    def as_dict(self, threshold: float) -> dict[str, Any]:
        """The stored record; ``unscored`` and ``cause`` only for a scorer that could not score."""
        found = {
            "task": self.task_id,
            "component": self.component,
            "failed": self.failed,
            "total": self.total,
            "fraction": self.fraction,
            "calls_failed": self.calls_failed,
            "calls_total": self.calls_total,
            "kinds": dict(sorted(self.kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
            "degraded": self.degraded(threshold),
        }
        if self.unscored:
            found |= {"unscored": True, "cause": self.cause()}
        if self.messages:
            found["messages"] = self.top_messages()
        return found


def first_line(message: str, limit: int = MESSAGE_CHARS) -> str:
    """The first non-blank line of ``message``, cut to ``limit`` characters (``…`` marks a cut)."""
    line = next((part.strip() for part in message.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def failure_message(result: CaseResult) -> tuple[str, str] | None:
    """``(kind, first line of the message)`` of the case's failed system call (None: it did not fail)."""
    error = result.output.error
    if error is None or not error.message.strip():
        return None
    return error.kind, first_line(error.message)


def judge_error_kind(error: str) -> str:
    """The kind of a judge decision's ``error`` text (see the module docstring)."""
    for prefix, kind in _JUDGE_PROBLEMS:
        if error.startswith(prefix):
            return kind
    found = _CALL_KIND.match(error)
    return found.group(1) if found else "unusable_reply"


def _system(result: CaseResult) -> Iterable[Outcome]:
    error = result.output.error
    yield Outcome("system", 1, (error.kind,) if error is not None else ())


def _selection(result: CaseResult) -> Iterable[Outcome]:
    record = (result.output.raw or {}).get("mcq_selection")
    if isinstance(record, Mapping):
        error = record.get("error")
        kind = str(error.get("kind") or "error") if isinstance(error, Mapping) else None
        yield Outcome("selection", 1, (kind,) if kind else ())


def _judge(result: CaseResult) -> Iterable[Outcome]:
    records = (result.output.raw or {}).get("equivalence_judge")
    if isinstance(records, list) and records:
        errors = [r.get("error") for r in records if isinstance(r, Mapping)]
        kinds = tuple(judge_error_kind(str(e)) for e in errors if e)
        yield Outcome("judge", len(records), kinds)


def _scorers(result: CaseResult) -> Iterable[Outcome]:
    answered = not result.output.failed
    for name, score in result.scores.items():
        if score.label == SCORER_ERROR:
            kinds: tuple[str, ...] = ((score.explanation or "").partition(":")[0].strip() or "exception",)
        elif answered and score.label in UNSCORED:
            kinds = (str(score.label),)
        else:
            kinds = ()
        yield Outcome(f"scorer {name}", 1, kinds)


# Registry of what can fail on a case; a new component adds one probe here.
PROBES: tuple[Callable[[CaseResult], Iterable[Outcome]], ...] = (_system, _selection, _judge, _scorers)


def outcomes(result: CaseResult) -> list[Outcome]:
    """Every component's outcome on one case (the case summary keeps them: ``case_summary``)."""
    return [outcome for probe in PROBES for outcome in probe(result)]


class FailureCounter:
    """Counts failures per (task, component) from outcomes added one case at a time."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, str], ComponentFailures] = {}

    def add(self, task_id: str, case_outcomes: Iterable[Outcome], *, times: int = 1) -> None:
        """One case's outcomes (``times``: as many cases with the same outcomes)."""
        for outcome in case_outcomes:
            key = (task_id, outcome.component)
            entry = self.found.get(key)
            if entry is None:
                entry = self.found[key] = ComponentFailures(task_id, outcome.component)
            entry.total += times
            entry.calls_total += outcome.calls * times
            if outcome.failures:
                entry.failed += times
                entry.calls_failed += len(outcome.failures) * times
                for kind in outcome.failures:
                    entry.kinds[kind] += times

    def add_message(self, task_id: str, kind: str, message: str, *, times: int = 1) -> None:
        """The message of a failed system call (after its case's outcomes were added)."""
        entry = self.found.get((task_id, "system"))
        if entry is not None:
            entry.add_message(kind, message, times)

    def components(self) -> list[ComponentFailures]:
        """Every (task, component) that ran, in first-seen order."""
        return list(self.found.values())


def component_failures(results: Iterable[CaseResult]) -> list[ComponentFailures]:
    """Every (task, component) that ran, in first-seen order, with its failures counted."""
    counter = FailureCounter()
    for result in results:
        counter.add(result.task_id, outcomes(result))
        message = failure_message(result)
        if message is not None:
            counter.add_message(result.task_id, *message)
    return counter.components()


def assess(results: Sequence[CaseResult], threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
    """What a run stores under ``provenance["degradation"]`` (see :func:`assess_components`)."""
    return assess_components(component_failures(results), threshold)


def assess_components(components: Sequence[ComponentFailures], threshold: float) -> dict[str, Any]:
    """The threshold, whether the run is degraded, one warning per degraded component, and every
    component that failed at least once."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"the degradation threshold must be within [0, 1], got {threshold}")
    failing = [c for c in components if c.failed]
    warnings = [c.warning() for c in failing if c.degraded(threshold)]
    return {
        "threshold": threshold,
        "degraded": bool(warnings),
        "warnings": warnings,
        "components": [c.as_dict(threshold) for c in failing],
    }


def is_degraded(provenance: Mapping[str, Any]) -> bool:
    found = provenance.get("degradation")
    return isinstance(found, Mapping) and bool(found.get("degraded"))


def failure_lines(provenance: Mapping[str, Any]) -> list[str]:
    """One compact line per task that had any failure, e.g.
    ``task live: system 3/12 (http_500 1, malformed_response 1, timeout 1)``, each followed by an indented
    line per failure kind with a stored message: ``  http_500: HTTP 500: model overloaded``."""
    found = provenance.get("degradation")
    components = found.get("components", []) if isinstance(found, Mapping) else []
    by_task: dict[str, list[str]] = {}
    said: dict[str, list[str]] = {}
    for c in components:
        messages = c.get("messages")
        if isinstance(messages, Mapping):
            said.setdefault(c["task"], []).extend(f"  {k}: {m}" for k, m in messages.items())
        entry = ComponentFailures(
            c["task"], c["component"], c["failed"], c["total"], c["calls_failed"], c["calls_total"]
        )
        entry.kinds.update(c["kinds"])
        counts = f"{entry.failed}/{entry.total}"
        if entry.calls_total != entry.total:
            counts += f" cases, {entry.calls_failed}/{entry.calls_total} calls"
        by_task.setdefault(entry.task_id, []).append(f"{entry.component} {counts} ({entry.kinds_text()})")
    lines: list[str] = []
    for task, parts in by_task.items():
        lines += [f"task {task}: failures: " + "; ".join(parts), *said.get(task, [])]
    return lines
