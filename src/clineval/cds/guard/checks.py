"""The Tier 1 checks of a CDS recommendation and the runtime guard ``check()`` that runs them.

Each check returns a ``CheckResult`` (passed True / False / None = not applicable, with every reason):

- ``schema``: the recommendation parses as ``StructuredOutput`` (every pydantic violation listed, with
  its location), its ``required_fields`` are non-empty, action texts are non-empty, evidence ids are
  unique, and (optionally) it has no keys outside the schema;
- ``citation_grounding``: every recommended action has >= 1 evidence ref and every ref is the ``id`` of
  an evidence-table row (N/A without actions);
- ``scope``: no action names an out-of-scope term without an in-scope one (``Scope``; N/A without actions);
- ``contraindications``: when an action involves a medication (category ``medication`` or it names a
  drug), ``contraindications_checked`` is non-empty (N/A when no action involves a medication);
- ``escalation``: when the patient has red flags (``RedFlagSet.detect``), ``when_to_escalate`` is present
  and names an escalation term of *each* flag (N/A without red flags or without a patient);
- ``latency``: each stage with a budget (and ``total``) is within it (N/A without timings or budgets).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from clineval.cds.guard.config import CHECK_NAMES, DEFAULT_CONFIG, TOTAL, CheckResult, GuardConfig, Verdict
from clineval.cds.guard.scope import drugs_named
from clineval.core.output import StructuredOutput

Timings = tuple[Mapping[str, float] | None, float | None]  # (stage_latency_s, latency_s)
Check = Callable[[StructuredOutput, Mapping[str, Any] | None, GuardConfig, Timings], CheckResult]
_KNOWN_FIELDS = frozenset(StructuredOutput.model_fields)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse(recommendation: Any) -> tuple[StructuredOutput | None, list[str]]:
    """The recommendation as a StructuredOutput (a model, a mapping or JSON text), or None and why not."""
    if isinstance(recommendation, StructuredOutput):
        return recommendation, []
    if isinstance(recommendation, str | bytes):
        try:
            recommendation = json.loads(recommendation)
        except ValueError as exc:
            return None, [f"not valid JSON: {exc}"]
    if not isinstance(recommendation, Mapping):
        return None, [f"expected an object (mapping), got {type(recommendation).__name__}"]
    try:
        return StructuredOutput.model_validate(recommendation), []
    except ValidationError as exc:
        return None, [
            f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors(include_url=False)
        ]


def schema_check(parsed: StructuredOutput | None, problems: list[str], config: GuardConfig) -> CheckResult:
    if parsed is None:
        return CheckResult("schema", False, problems, error=True)
    reasons: list[str] = []
    for name in config.required_fields:
        if not getattr(parsed, name, None):
            reasons.append(f"{name}: required and missing or empty")
    if not config.allow_extra_fields and parsed.model_extra:
        reasons.extend(f"{key}: not a field of the schema" for key in sorted(parsed.model_extra))
    for i, action in enumerate(parsed.recommended_actions or (), start=1):
        if not action.action.strip():
            reasons.append(f"recommended_actions.{i}.action: empty text")
    seen: set[str] = set()
    for i, row in enumerate(parsed.evidence_table or (), start=1):
        if not row.id.strip():
            reasons.append(f"evidence_table.{i}.id: empty")
        elif row.id in seen:
            reasons.append(f"evidence_table.{i}.id: duplicate id {row.id!r}")
        seen.add(row.id)
    return CheckResult("schema", not reasons, reasons)


def citation_check(
    rec: StructuredOutput, _p: Mapping[str, Any] | None, _c: GuardConfig, _t: Timings
) -> CheckResult:
    actions = rec.recommended_actions or []
    if not actions:
        return CheckResult("citation_grounding", None, ["no recommended actions"])
    ids = {row.id.strip() for row in rec.evidence_table or ()}
    reasons: list[str] = []
    for i, action in enumerate(actions, start=1):
        refs = [r for r in action.evidence_refs if r.strip()]
        if not refs:
            reasons.append(f"action {i} {_short(action.action)!r} cites no evidence")
        reasons.extend(
            f"action {i} cites {ref!r}, which is not in the evidence table"
            for ref in refs
            if ref.strip() not in ids
        )
    return CheckResult("citation_grounding", not reasons, reasons)


def scope_check(
    rec: StructuredOutput, _p: Mapping[str, Any] | None, config: GuardConfig, _t: Timings
) -> CheckResult:
    actions = rec.recommended_actions or []
    if not actions:
        return CheckResult("scope", None, ["no recommended actions"])
    reasons: list[str] = []
    offending: list[str] = []
    for i, action in enumerate(actions, start=1):
        terms = config.scope.offending_terms(action.action)
        if terms:
            offending.extend(terms)
            reasons.append(
                f"action {i} {_short(action.action)!r} is outside the {config.scope.name} scope "
                f"(names {', '.join(terms)})"
            )
    return CheckResult(
        "scope", not reasons, reasons, data={"offending_terms": list(dict.fromkeys(offending))}
    )


def contraindications_check(
    rec: StructuredOutput, _p: Mapping[str, Any] | None, config: GuardConfig, _t: Timings
) -> CheckResult:
    medications: list[str] = []
    for action in rec.recommended_actions or ():
        medications.extend(drugs_named(action.action, action.category, config.drugs))
    medications = list(dict.fromkeys(medications))
    if not medications:
        return CheckResult("contraindications", None, ["no action involves a medication"])
    if any(c.strip() for c in rec.contraindications_checked or ()):
        return CheckResult("contraindications", True, [], data={"medications": medications})
    return CheckResult(
        "contraindications",
        False,
        [f"medications recommended ({', '.join(medications)}) but contraindications_checked is empty"],
        data={"medications": medications},
    )


def escalation_text(rec: StructuredOutput) -> str:
    value = rec.when_to_escalate
    if isinstance(value, list):
        return "; ".join(v for v in value if v.strip())
    return (value or "").strip()


def escalation_check(
    rec: StructuredOutput, patient: Mapping[str, Any] | None, config: GuardConfig, _t: Timings
) -> CheckResult:
    if patient is None:
        return CheckResult("escalation", None, ["no patient record"])
    hits = config.red_flags.detect(patient)
    if not hits:
        return CheckResult("escalation", None, ["no red flags"])
    flags = [{"id": h.id, "label": h.label, "evidence": list(h.evidence), "source": h.source} for h in hits]
    text = escalation_text(rec)
    if not text:
        reasons = [
            f"red flag {h.label} ({'; '.join(h.evidence)}) but when_to_escalate is missing" for h in hits
        ]
        return CheckResult("escalation", False, reasons, data={"red_flags": flags, "escalated": False})
    named = config.red_flags.escalation_terms_named(text)
    reasons = []
    for hit in hits:
        expected = config.red_flags.flag(hit.id).escalate_terms
        if named.isdisjoint(expected):
            reasons.append(
                f"when_to_escalate does not address red flag {hit.label} "
                f"(expected a mention of e.g. {', '.join(expected[:5])})"
            )
    return CheckResult("escalation", not reasons, reasons, data={"red_flags": flags, "escalated": True})


def latency_check(
    _r: StructuredOutput | None, _p: Mapping[str, Any] | None, config: GuardConfig, timings: Timings
) -> CheckResult:
    stages, total = timings
    budget = config.latency_budget_s
    measured = dict(stages or {})
    if total is not None:
        measured[TOTAL] = total
    checked = [s for s in measured if s in budget]
    if not checked:
        why = "no latency budget" if not budget else "no timings for a budgeted stage"
        return CheckResult("latency", None, [why], data={"latency_s": measured})
    reasons = [
        f"{stage} took {measured[stage]:.3f} s, over its budget of {budget[stage]:.3f} s"
        for stage in checked
        if measured[stage] > budget[stage]
    ]
    return CheckResult("latency", not reasons, reasons, data={"latency_s": measured})


CHECKS: dict[str, Check] = {
    "citation_grounding": citation_check,
    "scope": scope_check,
    "contraindications": contraindications_check,
    "escalation": escalation_check,
    "latency": latency_check,
}
assert set(CHECKS) | {"schema"} == set(CHECK_NAMES)


def _error(name: str, reason: str, config: GuardConfig) -> CheckResult:
    return CheckResult(name, False if getattr(config, "fail_closed", True) else None, [reason], error=True)


def _run(
    recommendation: Any, patient: Mapping[str, Any] | None, config: GuardConfig, timings: Timings
) -> list[CheckResult]:
    parsed, problems = parse(recommendation)
    results: list[CheckResult] = []
    for name in CHECK_NAMES:
        if name not in config.checks:
            continue
        if name == "schema":
            results.append(schema_check(parsed, problems, config))
        elif parsed is None and name != "latency":
            results.append(_error(name, "not evaluated: the recommendation could not be parsed", config))
        else:
            try:
                results.append(CHECKS[name](parsed or StructuredOutput(), patient, config, timings))
            except Exception as exc:
                results.append(_error(name, f"check raised {type(exc).__name__}: {exc}", config))
    return results


def check(
    recommendation: StructuredOutput | Mapping[str, Any] | str,
    *,
    patient: Mapping[str, Any] | None = None,
    config: GuardConfig | None = None,
    stage_latency_s: Mapping[str, float] | None = None,
    latency_s: float | None = None,
) -> Verdict:
    """Run the enabled checks on one recommendation; never raises, does no I/O.

    ``passed`` is False when a check fails; a check that errors (or an unparseable recommendation)
    fails it only when ``config.fail_closed`` (the default)."""
    cfg = config or DEFAULT_CONFIG
    closed = getattr(cfg, "fail_closed", True)
    try:
        results = _run(recommendation, patient, cfg, (stage_latency_s, latency_s))
    except Exception as exc:  # the guard itself must never raise into production code
        results = [_error("guard", f"guard raised {type(exc).__name__}: {exc}", cfg)]
    failures = [r for r in results if r.passed is False and (closed or not r.error)]
    return Verdict(passed=not failures, failures=failures, results=results)
