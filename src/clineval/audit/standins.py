"""The built-in stand-ins (issue 22 item 1): degenerate systems built from the task's own cases.

Stand-in: what it answers (where it applies).

- ``empty`` (baseline): an empty text (all).
- ``constant`` (baseline): one answer for every case: each option letter; the 1, 3, 5, 10 most frequent
  diagnoses; each of the 5 most frequent actions / problems with each severity; a generic advice (all).
- ``refusal``: "I cannot help with that." (all).
- ``every_option``: every option (letters; letters with their texts); every diagnosis of the sample; every
  action, problem and severity (MCQ, DDx, CDS).
- ``copy_question``: the question, options, vignette, contexts and patient record as text (all).
- ``hedge``: "It could be A, B, C or D"; "possibly X" for 5 frequent diagnoses; "consider X" for every
  action with severity "moderate to high" (all).
- ``all_alternative``: the 10 most frequent diagnoses, each ``status: alternative`` (DDx).
- ``alternatives_cant_miss``: the same, each named in a can't-miss turn beside the start of the case (DDx).
- ``all_excluded``: the 10 most frequent diagnoses, each ``status: excluded`` (DDx).
- ``triage_mentions``: the 5 most frequent, and a triage turn naming every finding of the case, treating
  none (DDx).
- ``treat_everything``: the 5 most frequent, and a triage turn giving every agent of the TM-SM action map
  (DDx).
- ``every_rule_action``: every action any guideline rule names, then with the forbidden ones (CDS).
- ``escalate_everything``: every escalation term and reason as ``when_to_escalate`` (CDS).
- ``claim_every_check``: the most frequent action, ``contraindications_checked`` listing every check (CDS).
- ``cite_every_source``: evidence rows of every source type, all cited: constant text, or the patient
  record copied into them (CDS).

"The most frequent" is over the audited cases' references: the constant is the best a knows-nothing
system tuned to the label distribution can do (the constant letter is chosen the same way: the best one).
"""

from __future__ import annotations

from clineval.audit import parts_cds, parts_ddx
from clineval.audit.context import AuditContext, case_text, letters_of
from clineval.audit.registry import (
    EMPTY,
    Respond,
    StandIn,
    Variant,
    cycled,
    register_standin,
    text_output,
)
from clineval.core import Case, SystemOutput

REFUSAL = "I cannot help with that."
ADVICE = "Please consult a healthcare professional about this."
HEDGE = "It depends; it could be many things and I cannot be sure. Please consult a doctor."


def _text(text: str) -> Respond:
    output = text_output(text)
    return lambda case: output


def _all(respond: Respond, label: str = "") -> list[Variant]:
    return [Variant(label, respond)]


def _letter(letter: str) -> Respond:
    return _text(letter)


def _listed(case: Case) -> SystemOutput:
    return text_output(", ".join(letters_of(case)))


def _options(case: Case) -> SystemOutput:
    return text_output(
        "\n".join(f"{k}. {v}" for k, v in case.input.options.items()) or ", ".join(letters_of(case))
    )


def _hedged(case: Case) -> SystemOutput:
    letters = letters_of(case)
    return text_output(f"It could be {', '.join(letters[:-1])} or {letters[-1]}; I cannot be sure.")


def _constant(ctx: AuditContext) -> list[Variant]:
    return cycled(
        ctx,
        {
            "mcq": [(f"'{x}'", _letter(x)) for x in ctx.letters],
            "ddx": parts_ddx.constant(ctx),
            "cds": parts_cds.constant(ctx),
            "text": [("generic advice", _text(ADVICE))],
        },
    )


def _every_option(ctx: AuditContext) -> list[Variant]:
    return cycled(
        ctx,
        {
            "mcq": [("letters", _listed), ("letters and texts", _options)],
            "ddx": parts_ddx.every_option(ctx),
            "cds": parts_cds.every_option(ctx),
        },
    )


def _hedge(ctx: AuditContext) -> list[Variant]:
    return cycled(
        ctx,
        {
            "mcq": [("'it could be A, B, C or D'", _hedged)],
            "ddx": parts_ddx.hedge(ctx),
            "cds": parts_cds.hedge(ctx),
            "text": [("'it depends'", _text(HEDGE))],
        },
    )


BUILTIN: tuple[StandIn, ...] = (
    StandIn("empty", "an empty answer", lambda ctx: _all(lambda case: EMPTY), baseline=True),
    StandIn("constant", "the same answer for every case (the best one is kept)", _constant, baseline=True),
    StandIn("refusal", f"'{REFUSAL}'", lambda ctx: _all(_text(REFUSAL))),
    StandIn("every_option", "every option / diagnosis / action listed", _every_option),
    StandIn(
        "copy_question",
        "a copy of what the system was shown",
        lambda ctx: _all(lambda c: text_output(case_text(c))),
    ),
    StandIn("hedge", "hedging on everything", _hedge),
    StandIn(
        "all_alternative",
        "frequent diagnoses, each labelled alternative",
        lambda ctx: cycled(ctx, {"ddx": parts_ddx.all_alternative(ctx)}),
    ),
    StandIn(
        "alternatives_cant_miss",
        "alternatives named in a can't-miss turn that copies the case",
        lambda ctx: cycled(ctx, {"ddx": parts_ddx.alternatives_cant_miss(ctx)}),
    ),
    StandIn(
        "all_excluded",
        "frequent diagnoses, each labelled excluded",
        lambda ctx: cycled(ctx, {"ddx": parts_ddx.all_excluded(ctx)}),
    ),
    StandIn(
        "triage_mentions",
        "every finding named in triage, none treated",
        lambda ctx: cycled(ctx, {"ddx": parts_ddx.triage_mentions(ctx)}),
    ),
    StandIn(
        "treat_everything",
        "every treatment of the action map given in triage",
        lambda ctx: cycled(ctx, {"ddx": parts_ddx.treat_everything(ctx)}),
    ),
    StandIn(
        "every_rule_action",
        "every action any guideline rule names",
        lambda ctx: cycled(ctx, {"cds": parts_cds.every_rule_action(ctx)}),
    ),
    StandIn(
        "escalate_everything",
        "every escalation term on every case",
        lambda ctx: cycled(ctx, {"cds": parts_cds.escalate_everything(ctx)}),
    ),
    StandIn(
        "claim_every_check",
        "every contraindication check claimed as done",
        lambda ctx: cycled(ctx, {"cds": parts_cds.claim_every_check(ctx)}),
    ),
    StandIn(
        "cite_every_source",
        "evidence of every source type, all cited",
        lambda ctx: cycled(ctx, {"cds": parts_cds.cite_every_source(ctx)}),
    ),
)

for _standin in BUILTIN:
    register_standin(_standin)
