"""The differential-diagnosis answers of the stand-ins (cases with a ground-truth differential).

Every list is a constant of the task (``AuditContext.diagnoses``: its ground truths, most frequent first),
never the case's own ground truth. Only the two transcript stand-ins read the case: ``triage_mentions``
restates the case's findings in a triage turn (what the system was shown: the reference's findings are
quoted from the vignette) and ``alternatives_cant_miss`` copies the start of the vignette into a can't-miss
turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from clineval.audit.context import AuditContext, case_text
from clineval.audit.registry import Respond, structured_output
from clineval.core import Case, DifferentialItem, StructuredOutput, SystemOutput, TranscriptTurn

CONSTANT_SIZES = (1, 3, 5, 10)
PROBE_SIZE = 10  # the list the label and transcript probes reuse (the constant of 10)
Status = str


def differential(
    names: Sequence[str], status: Status = "proposed", reasoning: str | None = None, prefix: str = ""
) -> StructuredOutput:
    items = [
        DifferentialItem(diagnosis=f"{prefix}{name}", status=status, reasoning=reasoning)  # type: ignore[arg-type]
        for name in names
    ]
    return StructuredOutput(differential=items)


def _fixed(structured: StructuredOutput, text: str | None = None) -> Respond:
    output = structured_output(structured, text)
    return lambda case: output


def constant(ctx: AuditContext) -> list[tuple[str, Respond]]:
    sizes = [k for k in CONSTANT_SIZES if k <= len(ctx.diagnoses)] or (
        [len(ctx.diagnoses)] if ctx.diagnoses else []
    )
    return [(f"{k} most frequent diagnoses", _fixed(differential(ctx.diagnoses[:k]))) for k in sizes]


def every_option(ctx: AuditContext) -> list[tuple[str, Respond]]:
    names = ctx.diagnoses
    return [(f"all {len(names)} diagnoses of the sample", _fixed(differential(names)))] if names else []


def hedge(ctx: AuditContext) -> list[tuple[str, Respond]]:
    top = ctx.diagnoses[:5]
    if not top:
        return []
    text = "It could be " + ", ".join(top[:-1]) + (f" or {top[-1]}" if len(top) > 1 else top[0]) + "."
    return [("'possibly X' for 5 frequent", _fixed(differential(top, prefix="possibly "), text))]


def _probe_list(ctx: AuditContext) -> tuple[str, ...]:
    return ctx.diagnoses[:PROBE_SIZE]


def all_alternative(ctx: AuditContext) -> list[tuple[str, Respond]]:
    names = _probe_list(ctx)
    if not names:
        return []
    plain = differential(names, "alternative", "cannot be excluded")
    return [(f"{len(names)} frequent as alternative", _fixed(plain))]


def _first_sentences(case: Case, limit: int = 300) -> str:
    text = " ".join(case_text(case).split())
    return text[:limit].rsplit(" ", 1)[0] if len(text) > limit else text


def alternatives_cant_miss(ctx: AuditContext) -> list[tuple[str, Respond]]:
    """The frequent list as alternatives, each named in a can't-miss turn beside the start of the vignette."""
    names = _probe_list(ctx)
    if not names:
        return []
    items = differential(names, "alternative", "cannot be excluded").differential

    def respond(case: Case) -> SystemOutput:
        excerpt = _first_sentences(case)
        text = " ".join(f"Consider {name} given {excerpt}." for name in names)
        turn = TranscriptTurn(round=1, agent="critic", phase="cant_miss", text=text)
        return structured_output(StructuredOutput(differential=items, transcript=[turn]))

    return [(f"{len(names)} alternatives + can't-miss turn copying the case", respond)]


def all_excluded(ctx: AuditContext) -> list[tuple[str, Respond]]:
    """The frequent list as ``excluded``; then the same with a discussion turn ruling each one out in a
    sentence of its own (the transcript route to AE); then with a turn putting each forward first."""
    names = _probe_list(ctx)
    if not names:
        return []
    items = differential(names, "excluded", "ruled out")
    text = " ".join(f"{name} is ruled out." for name in names)
    turn = TranscriptTurn(round=2, agent="critic", phase="debate", text=text)
    with_turn = StructuredOutput(differential=items.differential, transcript=[turn])
    put = " ".join(f"{name} is a possible diagnosis." for name in names)
    first = TranscriptTurn(round=1, agent="critic", phase="differential", text=put)
    with_both = StructuredOutput(differential=items.differential, transcript=[first, turn])
    return [
        (f"{len(names)} frequent as excluded", _fixed(items)),
        (f"{len(names)} frequent excluded + a turn ruling each out", _fixed(with_turn)),
        (
            f"{len(names)} frequent excluded + turns putting each forward, then ruling it out",
            _fixed(with_both),
        ),
    ]


def _findings(case: Case, limit: int = 12) -> list[str]:
    """The case's findings: the reference's (quoted from the vignette), else the vignette's first clauses."""
    found = [f for values in case.reference.findings.values() for f in values]
    if not found:
        found = [p.strip() for p in re.split(r"[.\n;]", case_text(case)) if len(p.split()) >= 2]
    return list(dict.fromkeys(f.strip() for f in found if f.strip()))[:limit]


def _with_turn(
    ctx: AuditContext, label: str, text_of: Respond | None, turn_text: str | None
) -> list[tuple[str, Respond]]:
    names = ctx.diagnoses[:5]
    if not names:
        return []
    items = differential(names).differential

    def respond(case: Case) -> SystemOutput:
        text = turn_text if turn_text is not None else (text_of(case).text if text_of else "") or ""
        turn = TranscriptTurn(round=1, agent="triage", phase="triage", text=text)
        return structured_output(StructuredOutput(differential=items, transcript=[turn]))

    return [(label, respond)]


def triage_mentions(ctx: AuditContext) -> list[tuple[str, Respond]]:
    """The constant of 5 plus a triage turn naming every finding of the case, and treating none."""

    def noted(case: Case) -> SystemOutput:
        return SystemOutput(text="Noted " + "; ".join(_findings(case)) + ".")

    return _with_turn(ctx, "5 frequent + triage naming every finding", noted, None)


def treat_everything(ctx: AuditContext) -> list[tuple[str, Respond]]:
    """The constant of 5 plus a triage turn giving every agent of the DDx action map."""
    if not ctx.treatments:
        return []
    text = " ".join(f"Give {agent}." for agent in ctx.treatments)
    return _with_turn(ctx, f"5 frequent + triage giving all {len(ctx.treatments)} treatments", None, text)
