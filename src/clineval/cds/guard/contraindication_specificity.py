"""``contraindications_specific_rate`` (tier 1, gates): were the drugs checked against *this* patient?

The tier-1 check (``clineval.cds.guard.checks.contraindications_check``, also the runtime guard) passes when
``contraindications_checked`` is non-empty: a list of categories ("allergies", "renal function",
"hepatic function", "drug interactions", "pregnancy") passes on every case without looking at the drug or
the patient (the audit's ``claim_every_check``: 1.000 against 0; docs/runs/audit.md). Its pass rate is
tracked; this one gates. Per case where the check applies (an action involves a medication):

    specific = every medication action is covered by some claimed entry that names
               (a) one of that action's drugs (``clineval.cds.guard.scope.drugs_named``: a drug, a drug class,
                   or, for an action that is a medication by category only, a content word of the action),
               and (b) a fact of this patient's record:
                   - a lab with its value ("creatinine 110", "K+ 5.9": name and the recorded number),
                   - a vital sign or the ejection fraction with its value ("SBP 96", "EF 35%"),
                   - an allergy of the record by name ("penicillin"; "none known" is no fact: it is true
                     of most patients and a constant answer could state it),
                   - a current medication of the record (an interaction checked: "ramipril").

So "Furosemide: creatinine 110 umol/L, K+ 4.1" is specific, "renal function" is not. A failed call is not
specific (it checked nothing). Breakdown ``specific`` (None where the check does not apply),
``unchecked`` (the actions no entry covers) and ``facts`` (what the covering entries name).

Known limit: whether the named fact is the one that bears on the drug needs drug knowledge (renal function
for a renally cleared drug, an allergy for a penicillin): a list that pairs each drug with a copy of the
whole record passes. That is for tier 4 (the judge) and for review; the check here rejects what a system
that looks at neither the drug nor the patient writes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from clineval.cds.guard.scope import DRUGS, drugs_named
from clineval.cds.guard.terms import TermIndex
from clineval.cds.lab_samples import names_lab_value
from clineval.core.output import StructuredOutput

VITALS: dict[str, tuple[str, ...]] = {
    "sbp": ("sbp", "systolic", "bp", "blood pressure"),
    "dbp": ("dbp", "diastolic", "bp", "blood pressure"),
    "hr": ("hr", "heart rate", "pulse"),
    "rr": ("rr", "respiratory rate"),
    "spo2": ("spo2", "sats", "saturation", "saturations"),
    "temp": ("temp", "temperature"),
}
EF_NAMES = ("ef", "lvef", "ejection fraction")
NOT_A_FACT = frozenset(
    "none known nkda allergy allergies drug drugs reported documented no nil reaction reactions".split()
)
GENERIC = frozenset(
    "start give continue oral dose doses daily therapy treatment mask target via plus with for and the"
    " inhaled nebulised nebulized intravenous".split()
)
_WORD = re.compile(r"[a-z][a-z-]{3,}")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _has_phrase(text: str, phrases: Sequence[str]) -> bool:
    padded = f" {' '.join(re.findall(r'[a-z0-9+]+', text.lower()))} "
    return any(f" {p} " in padded for p in phrases)


def _numbers(text: str) -> list[float]:
    return [float(n) for n in _NUMBER.findall(text)]


def _same(value: Any, numbers: Sequence[float]) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return any(math.isclose(n, float(value), abs_tol=1e-9) for n in numbers)


def patient_fact(entry: str, patient: Mapping[str, Any], about: Sequence[str] = ()) -> str | None:
    """The kind of patient fact ``entry`` names (``lab``, ``vital``, ``ef``, ``allergy``, ``medication``),
    or None (module docstring). A current medication counts when it is not the drug the entry is about
    and not one of the drugs the entry is ``about`` ("furosemide" alone is no check of furosemide for a
    patient already on it)."""
    if names_lab_value(entry, patient):
        return "lab"
    numbers = _numbers(entry)
    vitals = patient.get("vitals") if isinstance(patient.get("vitals"), Mapping) else {}
    for key, names in VITALS.items():
        if _same((vitals or {}).get(key), numbers) and _has_phrase(entry, names):
            return "vital"
    if _same(patient.get("ef"), numbers) and _has_phrase(entry, EF_NAMES):
        return "ef"
    words = _words(entry)
    allergies = _words(" ".join(map(str, patient.get("allergies") or []))) - NOT_A_FACT
    if words & allergies:
        return "allergy"
    current = _words(" ".join(map(str, patient.get("medications") or []))) - _words(" ".join(about))
    if words & current:
        return "medication"
    return None


def _names_drug(entry: str, drugs: Sequence[str], action: str, index: TermIndex) -> bool:
    named = {d.lower() for d in index.find(entry)}
    if named & {d.lower() for d in drugs if not d.startswith("(category")}:
        return True
    if any(d.startswith("(category") for d in drugs):  # a medication by category: its own words
        return bool(_words(entry) & (_words(action) - GENERIC))
    return False


def specificity(
    rec: StructuredOutput, patient: Mapping[str, Any] | None, index: TermIndex = DRUGS
) -> dict[str, Any]:
    """{"specific": bool | None, "unchecked": [...], "facts": [...]} (module docstring)."""
    actions = []
    for action in rec.recommended_actions or ():
        drugs = drugs_named(action.action, action.category, index)
        if drugs:
            actions.append((action.action, drugs))
    if not actions:
        return {"specific": None, "unchecked": [], "facts": []}
    entries = [e for e in rec.contraindications_checked or () if e.strip()]
    facts: list[str] = []
    unchecked: list[str] = []
    for text, drugs in actions:
        found = None
        for entry in entries:
            if not _names_drug(entry, drugs, text, index):
                continue
            fact = patient_fact(entry, patient or {}, drugs)
            if fact is not None:
                found = f"{fact}: {entry[:80]}"
                break
        if found is None:
            unchecked.append(text[:120])
        elif found not in facts:
            facts.append(found)
    return {"specific": not unchecked, "unchecked": unchecked, "facts": facts}
