"""The stand-in registry: name -> :class:`StandIn`, whose ``variants(context)`` answer every case.

A stand-in is a degenerate system: it answers each case from what the case shows and what a knows-nothing
system could be tuned to (``clineval.audit.context``), never from the case's reference. One stand-in may
come in several *variants* (the constant answer "A", "B", "C", "D"; a differential of the 1, 3, 5 or 10 most
frequent diagnoses); the audit reports, per metric, the best variant. A stand-in with no variant for a task
(``[]``: e.g. a DDx stand-in on a multiple-choice task) is not applicable there.

Add your own with :func:`register_standin`::

    from clineval.audit import StandIn, Variant, register_standin, text_output

    register_standin(StandIn(
        "always_yes", "answers 'yes' to everything",
        lambda ctx: [Variant("yes", lambda case: text_output("yes"))],
    ))

``baseline=True`` marks the stand-ins whose best value is a metric's trivial baseline (``empty`` and
``constant``; ``clineval.audit.model``); every other stand-in is a probe compared with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from clineval.audit.context import AuditContext, kind_of
from clineval.core import Case, Registry, StructuredOutput, SystemOutput

Respond = Callable[[Case], SystemOutput]


@dataclass(frozen=True)
class Variant:
    """One way a stand-in answers: ``respond(case)`` for every case of the task."""

    label: str
    respond: Respond


@dataclass(frozen=True)
class StandIn:
    name: str
    description: str
    variants: Callable[[AuditContext], Sequence[Variant]]
    baseline: bool = False


STANDINS: Registry[StandIn] = Registry("stand-in")


def register_standin(standin: StandIn) -> StandIn:
    """Add ``standin`` to :data:`STANDINS` under its name (a name registered twice is a ValueError)."""
    STANDINS.add(standin.name, standin)
    return standin


def text_output(text: str) -> SystemOutput:
    """A plain-text answer, answered instantly (no timings: latency checks stay not applicable)."""
    return SystemOutput(text=text)


def structured_output(structured: StructuredOutput, text: str | None = None) -> SystemOutput:
    return SystemOutput(text=text, structured=structured)


EMPTY = SystemOutput(text="")
# kind -> the (label, respond) choices of a stand-in for cases of that kind
KindParts = Mapping[str, Sequence[tuple[str, Respond]]]


def cycled(context: AuditContext, parts: KindParts) -> list[Variant]:
    """Variants that answer each case by its kind (``context.kind_of``): variant ``i`` uses choice ``i`` of
    every kind present (cycling when a kind has fewer), so a metric that reads one kind's answer meets each
    of its choices once. A case of a kind with no choice gets the empty output. ``[]`` when no case is of a
    kind the parts cover (the stand-in does not apply)."""
    present = [k for k, choices in parts.items() if choices and context.has(k)]
    if not present:
        return []
    count = max(len(parts[k]) for k in present)
    variants = []
    for i in range(count):
        chosen = {k: parts[k][i % len(parts[k])] for k in present}
        label = "; ".join(dict.fromkeys(label for label, _ in chosen.values() if label))
        variants.append(Variant(label, _dispatch({k: r for k, (_, r) in chosen.items()})))
    return variants


def _dispatch(by_kind: Mapping[str, Respond]) -> Respond:
    def respond(case: Case) -> SystemOutput:
        answer = by_kind.get(kind_of(case))
        return EMPTY if answer is None else answer(case)

    return respond


# The built-in stand-ins register themselves on import (they need the names above).
from clineval.audit import standins as _builtins  # noqa: E402,F401
