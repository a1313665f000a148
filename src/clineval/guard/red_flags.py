"""Red flags: patient states that demand escalation (troponin rise + chest pain, STEMI, high-risk PE...).

The flags, their conditions, guideline sources and escalation terms live in ``data/red_flags.yaml``
(loaded once at import, or from a path with ``RedFlagSet.load``). ``RedFlagSet.detect(patient)`` reads
the patient record of CONTRACTS.md (``labs: [{name, value, unit, flag}]``, ``vitals``, ``scores``,
``conditions``, ``note``, ``cxr``; also ``ecg`` and ``complaint`` when present) and returns the flags
that fire, each with the evidence that fired it. Pure: no I/O after loading.

Mentions are negation-aware: a term preceded within 3 tokens by "no", "not", "denies", "without",
"negative", "absent" in the same clause, or followed by "ruled out" / "excluded" / "unlikely", does not
count ("no chest pain", "PE ruled out").
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from clineval.core.safe_yaml import safe_load
from clineval.guard.terms import TermIndex, stemmed_tokens

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_NEGATORS = frozenset(stemmed_tokens("no not denies denied without negative absent"))
_AFTER_NEGATORS = (stemmed_tokens("ruled out"), stemmed_tokens("excluded"), stemmed_tokens("unlikely"))
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_CLAUSE = re.compile(r"[;,:!?\n]|\.(?!\d)")  # negation does not cross a clause boundary
_TEXT_KEYS = ("note", "ecg", "cxr", "complaint", "chief_complaint", "symptoms", "history")


def as_number(value: Any) -> float | None:
    """A float from a number or a string like "6.8", ">6.5", "6.8 mmol/L"; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        found = _NUMBER.search(value)
        return float(found.group()) if found else None
    return None


def _unit(unit: Any) -> str:
    text = str(unit or "").lower().replace(" ", "").replace("µ", "u").replace("μ", "u")
    return text.replace("meq/l", "mmol/l")


@dataclass(frozen=True, slots=True)
class RedFlagHit:
    """A flag that fired: its id, label, guideline source and the patient facts that fired it."""

    id: str
    label: str
    source: str
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Facts:
    labs: Mapping[str, list[tuple[str, float | None, str, str]]]  # concept -> (name, value, unit, flag)
    vitals: Mapping[str, float]
    scores: Mapping[str, float]
    mentions: frozenset[str]


Condition = Callable[[_Facts], str | None]  # the evidence when it holds, else None


def _lab_condition(spec: Mapping[str, Any]) -> Condition:
    concept = str(spec["concept"])
    compare = _OPS[str(spec.get("op", ">"))]
    default = as_number(spec.get("value"))
    per_unit = {_unit(u): float(v) for u, v in (spec.get("per_unit") or {}).items()}
    flags = frozenset(str(f).lower() for f in spec.get("flags") or ())

    def holds(facts: _Facts) -> str | None:
        for name, value, unit, flag in facts.labs.get(concept, ()):
            limit = per_unit.get(unit, default) if per_unit else default
            if value is not None and limit is not None and compare(value, limit):
                return f"{name} {value:g} {unit}".rstrip()
            if flag and flag in flags:
                return f"{name} flagged {flag}"
        return None

    return holds


def _number_condition(kind: str, spec: Mapping[str, Any]) -> Condition:
    name = str(spec["name"])
    compare = _OPS[str(spec.get("op", ">"))]
    limit = float(spec["value"])

    def holds(facts: _Facts) -> str | None:
        value = (facts.vitals if kind == "vital" else facts.scores).get(name)
        if value is not None and compare(value, limit):
            return f"{name} {value:g}"
        return None

    return holds


def _mention_condition(terms: Sequence[str]) -> Condition:
    wanted = frozenset(terms)

    def holds(facts: _Facts) -> str | None:
        found = wanted & facts.mentions
        return f"mentions {', '.join(sorted(found))}" if found else None

    return holds


def _any_condition(parts: list[Condition]) -> Condition:
    def holds(facts: _Facts) -> str | None:
        for part in parts:
            evidence = part(facts)
            if evidence is not None:
                return evidence
        return None

    return holds


@dataclass(frozen=True, slots=True)
class RedFlag:
    id: str
    label: str
    source: str
    conditions: tuple[Condition, ...]
    escalate_terms: tuple[str, ...]

    def fires(self, facts: _Facts) -> RedFlagHit | None:
        evidence: list[str] = []
        for condition in self.conditions:
            found = condition(facts)
            if found is None:
                return None
            evidence.append(found)
        return RedFlagHit(self.id, self.label, self.source, tuple(evidence))


class RedFlagSet:
    """The flags of one red-flag file, with their term indexes built once."""

    def __init__(self, data: Mapping[str, Any], *, origin: str = "<data>") -> None:
        self.origin = origin
        concepts: Mapping[str, list[str]] = data.get("lab_concepts") or {}
        self._lab_concept = {alias: concept for concept, aliases in concepts.items() for alias in aliases}
        self._lab_index = TermIndex(self._lab_concept)
        self._vital_alias = {
            a: k for k, aliases in (data.get("vital_aliases") or {}).items() for a in aliases
        }
        self._score_alias = {
            a: k for k, aliases in (data.get("score_aliases") or {}).items() for a in aliases
        }
        mention_terms: list[str] = []
        flags: list[RedFlag] = []
        for raw in data.get("flags") or ():
            conditions = tuple(self._condition(c, mention_terms) for c in raw["all"])
            flags.append(
                RedFlag(
                    id=str(raw["id"]),
                    label=str(raw["label"]),
                    source=str(raw["source"]),
                    conditions=conditions,
                    escalate_terms=tuple(str(t) for t in raw["escalate_terms"]),
                )
            )
        if not flags:
            raise ValueError(f"{origin}: no red flags defined")
        self.flags: tuple[RedFlag, ...] = tuple(flags)
        self._mention_index = TermIndex(mention_terms)
        self._escalate_index = TermIndex(t for f in flags for t in f.escalate_terms)
        self._lab_cache: dict[str, str | None] = {}

    @classmethod
    def load(cls, path: str | Path | None = None) -> RedFlagSet:
        """The packaged flags (``path`` None) or those of a YAML file."""
        if path is None:
            text = resources.files("clineval.guard").joinpath("data", "red_flags.yaml").read_text("utf-8")
            return cls(safe_load(text, path="red_flags.yaml"), origin="clineval/guard/data/red_flags.yaml")
        return cls(safe_load(Path(path).read_bytes(), path=path), origin=str(path))

    def _condition(self, spec: Mapping[str, Any], mention_terms: list[str]) -> Condition:
        if "lab" in spec:
            return _lab_condition(spec["lab"])
        if "vital" in spec:
            return _number_condition("vital", spec["vital"])
        if "score" in spec:
            return _number_condition("score", spec["score"])
        if "mention" in spec:
            terms = [str(t) for t in spec["mention"]]
            mention_terms.extend(terms)
            return _mention_condition(terms)
        if "any" in spec:
            return _any_condition([self._condition(c, mention_terms) for c in spec["any"]])
        raise ValueError(f"{self.origin}: unknown red-flag condition {dict(spec)!r}")

    # --- patient facts -------------------------------------------------------------------------
    def _concept_of(self, lab_name: str) -> str | None:
        found = self._lab_cache.get(lab_name, "")
        if found == "":
            terms = self._lab_index.find(lab_name)
            found = self._lab_concept[terms[0]] if terms else None
            if len(self._lab_cache) < 10_000:
                self._lab_cache[lab_name] = found
        return found

    def _mentions(self, texts: Iterable[str]) -> frozenset[str]:
        found: set[str] = set()
        for clause in (c for text in texts for c in _CLAUSE.split(text)):
            stems, spans = self._mention_index.scan(clause)
            for term, start, end in spans:
                if not _negated(stems, start, end):
                    found.add(term)
        return frozenset(found)

    def facts(self, patient: Mapping[str, Any]) -> _Facts:
        labs: dict[str, list[tuple[str, float | None, str, str]]] = {}
        for lab in patient.get("labs") or ():
            if isinstance(lab, Mapping) and isinstance(lab.get("name"), str):
                concept = self._concept_of(lab["name"])
                if concept is not None:
                    flag = str(lab.get("flag") or "").strip().lower()
                    row = (lab["name"], as_number(lab.get("value")), _unit(lab.get("unit")), flag)
                    labs.setdefault(concept, []).append(row)
        vitals = _numbers(patient.get("vitals"), self._vital_alias)
        scores = _numbers(patient.get("scores"), self._score_alias)
        texts: list[str] = []
        for key in ("conditions", "problems", *_TEXT_KEYS):
            value = patient.get(key)
            if isinstance(value, str):
                texts.append(value)
            elif isinstance(value, list | tuple):
                texts.extend(v for v in value if isinstance(v, str))
        return _Facts(labs, vitals, scores, self._mentions(texts))

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
