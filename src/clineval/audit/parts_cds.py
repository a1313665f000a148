"""The clinical decision-support answers of the stand-ins (cases with a patient record).

A CDS answer is the structured output of ARCHITECTURE.md: recommended actions, each citing rows of an
evidence table, problems, a severity, when to escalate. The constants are the task's most frequent expected
actions and problems (``AuditContext``) and each severity level, each action citing one generic guideline
row, so that tier-1 structure holds and only the content is degenerate.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from clineval.audit.context import SEVERITIES, AuditContext, patient_of
from clineval.audit.registry import Respond, structured_output
from clineval.core import Case, EvidenceRow, RecommendedAction, StructuredOutput, SystemOutput

CONSTANT_CHOICES = 5  # the constant: each of the 5 most frequent actions / problems, each severity
GUIDELINE = EvidenceRow(
    id="g1", source_type="guideline", doc_id="guideline", text="Clinical practice guideline"
)


def report(
    actions: Sequence[str],
    *,
    problems: Sequence[str] = (),
    severity: str | None = None,
    escalate: Sequence[str] = (),
    evidence: Sequence[EvidenceRow] = (GUIDELINE,),
) -> StructuredOutput:
    """A structured recommendation: every action cites every evidence row."""
    refs = [row.id for row in evidence]
    return StructuredOutput(
        recommended_actions=[RecommendedAction(action=a, evidence_refs=refs) for a in actions],
        evidence_table=list(evidence),
        problems=list(problems) or None,
        severity=severity,
        when_to_escalate=list(escalate) or None,
    )


def _fixed(structured: StructuredOutput) -> Respond:
    output = structured_output(structured)
    return lambda case: output


def _generic_action(ctx: AuditContext) -> str:
    return ctx.actions[0] if ctx.actions else "Review in clinic"


def constant(ctx: AuditContext) -> list[tuple[str, Respond]]:
    actions = ctx.actions[:CONSTANT_CHOICES] or ("Review in clinic",)
    problems = ctx.problems[:CONSTANT_CHOICES] or ("",)
    count = max(len(actions), len(problems), len(SEVERITIES))
    choices = []
    for i in range(count):
        action, problem, severity = actions[i % len(actions)], problems[i % len(problems)], SEVERITIES[i % 4]
        structured = report([action], problems=[problem] if problem else [], severity=severity)
        choices.append((f"{action}; {problem or '-'}; {severity}", _fixed(structured)))
    return choices


def every_option(ctx: AuditContext) -> list[tuple[str, Respond]]:
    structured = report(
        ctx.actions or ["Review in clinic"], problems=ctx.problems, severity="low, moderate, high or critical"
    )
    return [(f"all {len(ctx.actions)} actions and {len(ctx.problems)} problems", _fixed(structured))]


def hedge(ctx: AuditContext) -> list[tuple[str, Respond]]:
    structured = report(
        [f"Consider {a} if appropriate" for a in ctx.actions or ["further review"]],
        problems=[f"possible {p}" for p in ctx.problems],
        severity="moderate to high",
        escalate=["Escalate if the patient deteriorates"],
    )
    return [("'consider X' for every action", _fixed(structured))]


def every_rule_action(ctx: AuditContext) -> list[tuple[str, Respond]]:
    """Every action any guideline rule of the task names: the expected ones, then with the forbidden ones."""
    if not ctx.rule_actions:
        return []
    choices = [(f"all {len(ctx.rule_actions)} expected rule actions", _fixed(report(ctx.rule_actions)))]
    if ctx.forbidden_actions:
        both = [*ctx.rule_actions, *ctx.forbidden_actions]
        choices.append((f"+ {len(ctx.forbidden_actions)} forbidden", _fixed(report(both))))
    return choices


def escalate_everything(ctx: AuditContext) -> list[tuple[str, Respond]]:
    """The most frequent action, and every escalation term and reason as when_to_escalate, on every case."""
    if not ctx.escalation_terms:
        return []
    structured = report([_generic_action(ctx)], escalate=ctx.escalation_terms)
    return [(f"{len(ctx.escalation_terms)} escalation terms", _fixed(structured))]


CHECKS = ("allergies", "renal function", "hepatic function", "drug interactions", "pregnancy")


def claim_every_check(ctx: AuditContext) -> list[tuple[str, Respond]]:
    """The most frequent action, with every contraindication check claimed as done."""
    structured = report([_generic_action(ctx)]).model_copy(update={"contraindications_checked": list(CHECKS)})
    return [(f"{len(CHECKS)} checks claimed", _fixed(structured))]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def record_rows(patient: Mapping[str, Any]) -> list[EvidenceRow]:
    """The patient record copied into evidence rows: the note, each lab with its value, imaging, each drug."""
    rows = [GUIDELINE, EvidenceRow(id="g2", source_type="guideline", doc_id="guideline-2", text="Guideline")]
    if patient.get("note"):
        rows.append(EvidenceRow(id="n1", source_type="note", text=_text(patient["note"])))
    for i, lab in enumerate(patient.get("labs") or (), start=1):
        if isinstance(lab, Mapping):
            text = f"{lab.get('name')} {lab.get('value')} {lab.get('unit') or ''}".strip()
            rows.append(EvidenceRow(id=f"l{i}", source_type="lab", text=text))
    imaging = [_text(x) for key in ("cxr", "measurements", "imaging") for x in _list(patient.get(key))]
    rows += [EvidenceRow(id=f"i{i}", source_type="imaging", text=t) for i, t in enumerate(imaging, start=1)]
    drugs = [_text(x) for x in _list(patient.get("medications"))]
    rows += [EvidenceRow(id=f"d{i}", source_type="drug", text=t) for i, t in enumerate(drugs, start=1)]
    return rows


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def cite_every_source(ctx: AuditContext) -> list[tuple[str, Respond]]:
    """Rows of every source type cited by the most frequent action: constant text, or the record copied."""
    constant_rows = [
        GUIDELINE,
        EvidenceRow(id="g2", source_type="guideline", doc_id="guideline-2", text="Guideline"),
        *(
            EvidenceRow(id=t[0] + "1", source_type=t, text=f"{t} evidence")
            for t in ("note", "lab", "imaging", "drug")
        ),  # type: ignore[arg-type]
    ]
    action = _generic_action(ctx)

    def copied(case: Case) -> SystemOutput:
        patient = patient_of(case) or {}
        return structured_output(report([action], evidence=record_rows(patient)))

    return [
        ("one row of each type, constant text", _fixed(report([action], evidence=constant_rows))),
        ("the patient record copied into rows", copied),
    ]
