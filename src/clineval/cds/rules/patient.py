"""Reading a patient record for the rule engine: clause matching, labs with unit conversion, findings,
CURB-65, context items.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from clineval.cds.guard.terms import TermIndex
from clineval.cds.lab_samples import NON_BLOOD_SPECIMENS, latest, specimen_text
from clineval.cds.rules.model import (
    _CLAUSE,
    CONFUSION,
    CUT,
    NEGATION,
    PATIENT_NEGATION,
    ContextItem,
    RuleSet,
    load_rules,
)
from clineval.text.matching import PreparedText, explain_match, prepare

# ---------------------------------------------------------------- matching


def _forward(cand: PreparedText, term: PreparedText) -> bool:
    return any(t in c for t in term.forms for c in cand.forms)


@lru_cache(maxsize=1 << 16)  # pure; a clause meets the same terms in every rule sharing a condition list
def names(candidate: str, term: str, threshold: float = 1.0) -> bool:
    """True if ``candidate`` names ``term`` (forward containment, or target-token recall >= threshold)."""
    cand, target = prepare(candidate), prepare(term)
    result = explain_match(cand, target, threshold)
    if not result.matched:
        return False
    return result.rule != "containment" or _forward(cand, target) or result.recall >= threshold


def clauses(text: str, negation: Any = NEGATION) -> list[str]:
    """The clauses of a line that carry no negation cue, each cut before "without", "instead of"..."""
    cut = (CUT.sub("", c) for c in _CLAUSE.split(text))
    return [c for c in cut if c.strip() and not negation.search(c)]


def _names_any(
    texts: Sequence[str], terms: Sequence[str], threshold: float, negation: Any = NEGATION
) -> tuple[str, str] | None:
    for text in texts:
        for clause in clauses(text, negation):
            for term in terms:
                if names(clause, term, threshold):
                    return text, term
    return None


# ---------------------------------------------------------------- patient data


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _key(text: str) -> str:
    return " ".join(str(text).lower().replace("_", " ").split())


_NON_BLOOD = TermIndex(NON_BLOOD_SPECIMENS)  # tier 1's list and matching ("pleural fluid pH")


@lru_cache(maxsize=8)
def _alias_index(aliases: frozenset[str]) -> TermIndex:
    return TermIndex(sorted(aliases))


def _lab_key(entry: Mapping[str, Any], known: frozenset[str]) -> str:
    """The alias a lab row is keyed by: the first alias its ``assay`` names ("Roche Elecsys hs-cTnT"), as
    tier 1 reads it, else its name."""
    found = _alias_index(known).find(str(entry.get("assay") or ""))
    return _key(found[0]) if found else _key(entry.get("name", ""))


def latest_lab(patient: Mapping[str, Any], lab: str, ruleset: RuleSet) -> Mapping[str, Any] | None:
    """The latest blood-sample ``labs`` row named by an alias of ``lab`` (None: no such row). Rows from a
    non-blood specimen are skipped; "latest" is by ``time``/``collected``, else list order (as tier 1)."""
    aliases = {_key(a) for a in [lab, *ruleset.labs[lab].aliases]}
    known = frozenset(_key(a) for name, spec in ruleset.labs.items() for a in [name, *spec.aliases])
    rows = [
        e
        for e in patient.get("labs") or []
        if isinstance(e, Mapping) and _lab_key(e, known) in aliases and not _NON_BLOOD.find(specimen_text(e))
    ]
    return latest(rows) if rows else None


def lab_value(patient: Mapping[str, Any], lab: str, ruleset: RuleSet) -> tuple[float | None, str]:
    """The latest blood ``labs`` row of ``lab`` (``latest_lab``), in the lab's canonical unit, and a note."""
    spec = ruleset.labs[lab]
    entry = latest_lab(patient, lab, ruleset)
    if entry is None:
        return None, f"{lab}: no result"
    value = _number(entry.get("value"))
    if value is None:
        return None, f"{lab}: value {entry.get('value')!r} is not a number"
    unit = str(entry.get("unit") or "")
    factors = {_key(u): f for u, f in {spec.unit: 1.0, **spec.conversions}.items()}
    if _key(unit) not in factors:
        return None, f"{lab}: unit {unit!r} cannot be converted to {spec.unit}"
    converted = value * factors[_key(unit)]
    return converted, f"{lab} = {converted:g} {spec.unit}" + (
        f" (from {value:g} {unit})" if _key(unit) != _key(spec.unit) else ""
    )


def lab_flagged(item: ContextItem, patient: Mapping[str, Any], ruleset: RuleSet) -> tuple[bool | None, str]:
    """Whether the latest row's own flag is one of ``item.flags``: None when there is no row or no flag
    (nothing to judge by), False for any other flag ("N")."""
    entry = latest_lab(patient, item.name, ruleset)
    if entry is None:
        return None, f"{item.name}: no result"
    flag = str(entry.get("flag") or "").strip().lower()
    if not flag:
        return None, f"{item.name}: no flag (no numeric limit for this assay)"
    return flag in {f.lower() for f in item.flags}, f"{item.name} flagged {flag!r}"


def _texts(patient: Mapping[str, Any], *keys: str) -> list[str]:
    out: list[str] = []
    for key in keys:
        value = patient.get(key)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out.extend(str(v) for v in value if isinstance(v, str))
    return out


FACT_FIELDS = ("conditions", "cxr", "findings", "note")


def has_finding(
    patient: Mapping[str, Any], terms: Sequence[str], fields: Sequence[str] = FACT_FIELDS
) -> str | None:
    """The first condition / CXR label / finding / note clause naming one of ``terms`` (threshold 1.0) in a
    clause that is not negated or about someone else ("no consolidation", "family history of ..."),
    or None."""
    hit = _names_any(_texts(patient, *fields), terms, 1.0, PATIENT_NEGATION)
    return hit[0] if hit else None


_AGO = re.compile(
    r"\b(\d+(?:\.\d+)?)\s*(day|week|month)s?\s+(?:ago|earlier|before|previously|prior)\b"
    r"|\b(?:post-?op(?:erative)?\s+day|pod)\s*(\d+)\b",
    re.IGNORECASE,
)
_DAYS = {"day": 1.0, "week": 7.0, "month": 30.0}


def _days_in(clause: str) -> float | None:
    match = _AGO.search(clause)
    if match is None:
        return None
    if match.group(3):
        return float(match.group(3))
    return float(match.group(1)) * _DAYS[match.group(2).lower()]


def event_days(patient: Mapping[str, Any], terms: Sequence[str]) -> float | None:
    """Fewest days since an event naming one of ``terms``: ``days_ago`` of the ``events`` entries
    ([{name, days_ago}]), or "N days/weeks/months ago" / "post-operative day N" in a fact clause (condition,
    finding, note) that names the event ("hip replacement 2 weeks ago" -> 14)."""
    days = [
        _number(e.get("days_ago"))
        for e in patient.get("events") or []
        if isinstance(e, Mapping) and any(names(str(e.get("name", "")), t) for t in terms)
    ]
    for text in _texts(patient, "conditions", "findings", "note"):
        for clause in clauses(text, PATIENT_NEGATION):
            if any(names(clause, t) for t in terms):
                days.append(_days_in(clause))
    known = [d for d in days if d is not None]
    return min(known) if known else None


def curb65(patient: Mapping[str, Any], ruleset: RuleSet | None = None) -> int | None:
    """CURB-65 (Lim et al., Thorax 2003;58:377-382), one point each: Confusion (a condition/finding naming
    confusion, altered mental status, delirium or disorientation); Urea > 7 mmol/L (or BUN > 19 mg/dL when
    no urea is given); Respiratory rate >= 30/min; Blood pressure SBP < 90 or DBP <= 60 mmHg; age >= 65.
    None when a component cannot be evaluated (no urea/BUN, no RR, no blood pressure, no age)."""
    rules = ruleset or load_rules()
    vitals = patient.get("vitals") or {}
    age = _number(patient.get("age"))
    urea, _ = lab_value(patient, "urea", rules)
    bun, _ = lab_value(patient, "bun", rules)
    rr, sbp, dbp = (_number(vitals.get(k)) for k in ("rr", "sbp", "dbp"))
    low_bp = (sbp is not None and sbp < 90) or (dbp is not None and dbp <= 60)
    if age is None or rr is None or (urea is None and bun is None) or (not low_bp and None in (sbp, dbp)):
        return None
    raised_urea = urea > 7.0 if urea is not None else (bun is not None and bun > 19.0)
    confusion = has_finding(patient, CONFUSION, ("conditions", "cxr", "findings")) is not None
    return int(confusion) + int(raised_urea) + int(rr >= 30) + int(low_bp) + int(age >= 65)


def _observe(item: ContextItem, patient: Mapping[str, Any], ruleset: RuleSet) -> tuple[float | None, str]:
    kind, name = item.kind, item.name
    if kind == "lab":
        return lab_value(patient, name, ruleset)
    if kind == "vital":
        value = _number((patient.get("vitals") or {}).get(name))
    elif kind == "ef":
        value = _number(patient.get("ef"))
    elif kind == "measurement":
        value = _number((patient.get("measurements") or {}).get(name))
    elif kind == "age":
        value = _number(patient.get("age"))
    elif kind == "event":
        value = event_days(patient, [name, *item.synonyms])
        if value is None:  # no such event recorded: it did not happen recently
            return None, f"{name}: no recorded event"
    else:  # score
        value = _number((patient.get("scores") or {}).get(name))
        if value is None and name == "curb65":
            computed = curb65(patient, ruleset)
            value = None if computed is None else float(computed)
            if value is not None:
                return value, f"curb65 = {computed} (computed from patient data)"
    return value, f"{name}: not recorded" if value is None else f"{name} = {value:g}"


def check_item(item: ContextItem, patient: Mapping[str, Any], ruleset: RuleSet) -> tuple[bool | None, str]:
    """Whether one context item holds (None: cannot be evaluated) and what was observed."""
    if item.kind == "event" and event_days(patient, [item.name, *item.synonyms]) is None:
        return False, f"{item.name}: no recorded event"
    if item.kind in ("finding", "allergy"):
        fields = ("allergies",) if item.kind == "allergy" else FACT_FIELDS
        hit = has_finding(patient, [item.name, *item.synonyms], fields)
        present = hit is not None
        note = f"{item.name}: {'found in ' + repr(hit) if hit else 'not found'}"
        return (present if item.op == "present" else not present), note
    if item.op == "flagged":
        return lab_flagged(item, patient, ruleset)
    value, note = _observe(item, patient, ruleset)
    if value is None or item.value is None:
        return None, note
    v, t = value, item.value
    ok = {">": v > t, ">=": v >= t, "<": v < t, "<=": v <= t, "==": v == t}[item.op]
    return ok, note
