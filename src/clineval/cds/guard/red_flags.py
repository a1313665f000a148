"""Red flags: patient states that demand escalation (troponin rise + chest pain, STEMI, high-risk PE...).

The flags, their conditions, guideline sources and escalation terms live in ``data/red_flags.yaml``
(loaded once at import, or from a path with ``RedFlagSet.load``). ``RedFlagSet.detect(patient)`` reads
the patient record (``labs: [{name, value, unit, flag}]``, ``vitals``, ``scores``, ``age``,
``conditions``, ``note``, ``cxr``; also ``ecg`` and ``complaint`` when present) and returns the flags
that fire, each with the evidence that fired it. Pure: no I/O after loading.

Labs (v2): a lab row may also carry ``specimen`` (or ``sample``/``sample_type``), ``assay``, ``time`` (or
``collected``) and ``haemolysed`` (or ``hemolyzed``), all optional. A row whose name or specimen names a
non-blood specimen (pleural fluid, urine, CSF...: ``clineval.cds.lab_samples.NON_BLOOD_SPECIMENS``,
shared with tier 3, unless the file gives ``non_blood_specimens``) or a concept's own exclusion (ScvO2
for SpO2) is not that concept. Per concept only the **latest** sample counts (``lab_samples.latest``: by
``time`` when every sample has one, else the last in the list), so a normal repeat supersedes an
earlier haemolysed or abnormal one. Values are converted to the concept's unit with the file's ``units``
factors; a unit the file does not list makes the value unreadable (only the lab's own flag can then fire).

Mentions are negation-aware: a term preceded within 3 tokens by "no", "not", "denies", "without",
"negative", "absent" in the same clause, or followed by "ruled out" / "excluded" / "unlikely", does not
count ("no chest pain", "PE ruled out"). A term inside a longer ``lookalikes`` phrase does not count
("ST elevation" in "non-ST elevation MI"), and a ``headers`` word followed by ":" is a section header
("PE:" = physical examination).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from clineval.cds.guard.red_flag_conditions import (
    Condition,
    Facts,
    LabRow,
    all_condition,
    any_condition,
    as_number,
    lab_condition,
    mention_condition,
    not_condition,
    number_condition,
)
from clineval.cds.guard.terms import TermIndex, stemmed_tokens
from clineval.cds.lab_samples import NON_BLOOD_SPECIMENS, latest
from clineval.core.errors import DataFileError
from clineval.core.helpers.safe_yaml import safe_load

__all__ = ["DEFAULT_RED_FLAGS", "RedFlag", "RedFlagHit", "RedFlagSet", "as_number"]

_NEGATORS = frozenset(stemmed_tokens("no not denies denied without negative absent"))
_AFTER_NEGATORS = (stemmed_tokens("ruled out"), stemmed_tokens("excluded"), stemmed_tokens("unlikely"))
_CLAUSE = re.compile(r"[;,:!?\n]|\.(?!\d)")  # negation does not cross a clause boundary
_TEXT_KEYS = ("note", "ecg", "cxr", "complaint", "chief_complaint", "symptoms", "history")
_ALL = "*"  # exclusion of every concept (a non-blood specimen)


@lru_cache(maxsize=1024)
def _unit_text(unit: str) -> str:
    text = unit.lower().replace(" ", "").replace("µ", "u").replace("μ", "u")
    return text.replace("meq/l", "mmol/l")


def _unit(unit: Any) -> str:
    return _unit_text(str(unit or ""))


@dataclass(frozen=True, slots=True)
class RedFlagHit:
    """A flag that fired: its id, label, guideline source and the patient facts that fired it."""

    id: str
    label: str
    source: str
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RedFlag:
    id: str
    label: str
    source: str
    conditions: tuple[Condition, ...]
    escalate_terms: tuple[str, ...]

    def fires(self, facts: Facts) -> RedFlagHit | None:
        evidence: list[str] = []
        for condition in self.conditions:
            found = condition(facts)
            if found is None:
                return None
            evidence.append(found)
        return RedFlagHit(self.id, self.label, self.source, tuple(evidence))


@dataclass(frozen=True, slots=True)
class _Concept:
    units: Mapping[str, float]  # unit -> factor to the concept's unit; empty = value used as is


class RedFlagSet:
    """The flags of one red-flag file, with their term indexes built once."""

    def __init__(self, data: Mapping[str, Any], *, origin: str = "<data>") -> None:
        self.origin = origin
        self.version = str(data.get("version", "1"))
        try:
            self._build(data)
        except (KeyError, TypeError, AttributeError, ValueError) as err:
            if isinstance(err, DataFileError):
                raise
            raise DataFileError(f"invalid red-flag file: {type(err).__name__}: {err}", path=origin) from None

    def _build(self, data: Mapping[str, Any]) -> None:
        self._lab_concept: dict[str, str] = {}
        self._concepts: dict[str, _Concept] = {}
        non_blood = data.get("non_blood_specimens", NON_BLOOD_SPECIMENS) or ()  # shared with tier 3
        excluded: dict[str, set[str]] = {t: {_ALL} for t in non_blood}
        for concept, spec in (data.get("lab_concepts") or {}).items():
            spec = {"aliases": spec} if isinstance(spec, list) else spec
            self._lab_concept.update({str(a): concept for a in spec["aliases"]})
            units = {_unit(u): float(f) for u, f in (spec.get("units") or {}).items()}
            self._concepts[concept] = _Concept(units)
            for term in spec.get("exclude") or ():
                excluded.setdefault(str(term), set()).add(concept)
        self._lab_index = TermIndex(self._lab_concept)
        self._excluded = excluded
        self._exclude_index = TermIndex(excluded)
        self._vital_alias = {a: k for k, al in (data.get("vital_aliases") or {}).items() for a in al}
        self._score_alias = {a: k for k, al in (data.get("score_aliases") or {}).items() for a in al}
        headers = [re.escape(str(h)) for h in data.get("headers") or ()]
        self._headers = re.compile(rf"\b(?:{'|'.join(headers)})\s*:", re.I) if headers else None
        mention_terms: list[str] = []
        self._derived = {
            str(name): [self._condition(c, mention_terms) for c in spec["count"]]
            for name, spec in (data.get("derived_scores") or {}).items()
        }
        flags: list[RedFlag] = []
        for raw in data.get("flags") or ():
            flags.append(
                RedFlag(
                    id=str(raw["id"]),
                    label=str(raw["label"]),
                    source=str(raw["source"]),
                    conditions=tuple(self._condition(c, mention_terms) for c in raw["all"]),
                    escalate_terms=tuple(str(t) for t in raw["escalate_terms"]),
                )
            )
        if not flags:
            raise DataFileError("no red flags defined", path=self.origin)
        self.flags: tuple[RedFlag, ...] = tuple(flags)
        self._lookalikes = frozenset(str(t) for t in data.get("lookalikes") or ())
        self._mention_index = TermIndex([*mention_terms, *self._lookalikes])
        self._escalate_index = TermIndex(t for f in flags for t in f.escalate_terms)
        self._lab_cache: dict[str, str | None] = {}

    @classmethod
    def load(cls, path: str | Path | None = None) -> RedFlagSet:
        """The packaged flags (``path`` None) or those of a YAML file."""
        if path is None:
            text = resources.files("clineval.cds.guard").joinpath("data", "red_flags.yaml").read_text("utf-8")
            return cls(
                safe_load(text, path="red_flags.yaml"), origin="clineval/cds/guard/data/red_flags.yaml"
            )
        return cls(safe_load(Path(path).read_bytes(), path=path), origin=str(path))

    def _condition(self, spec: Mapping[str, Any], mention_terms: list[str]) -> Condition:
        if not isinstance(spec, Mapping) or len(spec) != 1:
            raise DataFileError(f"a red-flag condition has exactly one kind: {spec!r}", path=self.origin)
        kind, body = next(iter(spec.items()))
        if kind == "lab":
            return lab_condition(body, self.origin)
        if kind in ("vital", "score", "age"):
            return number_condition(kind, body, self.origin)
        if kind == "mention":
            terms = [str(t) for t in body]
            mention_terms.extend(terms)
            return mention_condition(terms)
        if kind in ("any", "all"):
            parts = [self._condition(c, mention_terms) for c in body]
            return any_condition(parts) if kind == "any" else all_condition(parts)
        if kind == "not":
            return not_condition(self._condition(body, mention_terms), str(body))
        raise DataFileError(f"unknown red-flag condition {dict(spec)!r}", path=self.origin)

    # --- patient facts -------------------------------------------------------------------------
    def _concept_of(self, lab: Mapping[str, Any]) -> str | None:
        name = str(lab["name"])
        assay = lab.get("assay")
        specimen = lab.get("specimen") or lab.get("sample") or lab.get("sample_type") or ""
        key = name if assay is None and not specimen else f"{assay or ''}|{name}|{specimen}"
        found = self._lab_cache.get(key, "")
        if found == "":
            terms = self._lab_index.find(str(assay or "")) or self._lab_index.find(name)
            found = self._lab_concept[terms[0]] if terms else None
            blocked = {c for t in self._exclude_index.find(f"{name} {specimen}") for c in self._excluded[t]}
            if found is not None and (found in blocked or _ALL in blocked):
                found = None
            if len(self._lab_cache) < 10_000:
                self._lab_cache[key] = found
        return found

    def _labs(self, patient: Mapping[str, Any]) -> dict[str, LabRow]:
        by_concept: dict[str, list[Mapping[str, Any]]] = {}
        for lab in patient.get("labs") or ():
            if isinstance(lab, Mapping) and isinstance(lab.get("name"), str):
                concept = self._concept_of(lab)
                if concept is not None:
                    by_concept.setdefault(concept, []).append(lab)
        return {concept: self._row(concept, latest(rows)) for concept, rows in by_concept.items()}

    def _row(self, concept: str, lab: Mapping[str, Any]) -> LabRow:
        unit = _unit(lab.get("unit"))
        value = as_number(lab.get("value"))
        units = self._concepts[concept].units
        if value is not None and unit and units:
            factor = units.get(unit)
            value = value * factor if factor is not None else None
        haemolysed = any(lab.get(k) is True for k in ("haemolysed", "hemolyzed", "hemolysed"))
        return LabRow(lab["name"], value, unit, str(lab.get("flag") or "").strip().lower(), haemolysed)

    def _mentions(self, texts: Iterable[str]) -> frozenset[str]:
        found: set[str] = set()
        for text in texts:
            if self._headers is not None:
                text = self._headers.sub(":", text)
            for clause in _CLAUSE.split(text):
                stems, spans = self._mention_index.scan(clause)
                shadows = [(s, e) for t, s, e in spans if t in self._lookalikes]
                for term, start, end in spans:
                    if term in self._lookalikes or _negated(stems, start, end):
                        continue
                    if not any(s <= start and end <= e for s, e in shadows):
                        found.add(term)
        return frozenset(found)

    def facts(self, patient: Mapping[str, Any]) -> Facts:
        texts: list[str] = []
        for key in ("conditions", "problems", *_TEXT_KEYS):
            value = patient.get(key)
            if isinstance(value, str):
                texts.append(value)
            elif isinstance(value, list | tuple):
                texts.extend(v for v in value if isinstance(v, str))
        scores = _numbers(patient.get("scores"), self._score_alias)
        base = Facts(
            self._labs(patient),
            _numbers(patient.get("vitals"), self._vital_alias),
            scores,
            as_number(patient.get("age")),
            self._mentions(texts),
        )
        missing = {n: parts for n, parts in self._derived.items() if n not in scores}
        if not missing:
            return base
        derived = {n: float(sum(p(base) is not None for p in parts)) for n, parts in missing.items()}
        return Facts(base.labs, base.vitals, {**scores, **derived}, base.age, base.mentions)

    def detect(self, patient: Mapping[str, Any] | None) -> list[RedFlagHit]:
        """The flags that fire for ``patient`` (none for None or an empty record)."""
        if not patient:
            return []
        facts = self.facts(patient)
        return [hit for flag in self.flags if (hit := flag.fires(facts)) is not None]

    def escalation_terms_named(self, text: str) -> frozenset[str]:
        """The escalation terms (of any flag) that ``text`` names."""
        return frozenset(self._escalate_index.find(text))

    def flag(self, flag_id: str) -> RedFlag:
        for flag in self.flags:
            if flag.id == flag_id:
                return flag
        raise KeyError(flag_id)


def _numbers(record: Any, aliases: Mapping[str, str]) -> dict[str, float]:
    out: dict[str, float] = {}
    if isinstance(record, Mapping):
        for key, value in record.items():
            name = aliases.get(str(key), str(key).lower())
            number = as_number(value)
            if number is not None:
                out.setdefault(name, number)
    return out


def _negated(stems: tuple[str, ...], start: int, end: int) -> bool:
    if any(s in _NEGATORS for s in stems[max(0, start - 3) : start]):
        return True
    return any(stems[end : end + len(after)] == after for after in _AFTER_NEGATORS)


DEFAULT_RED_FLAGS = RedFlagSet.load()
