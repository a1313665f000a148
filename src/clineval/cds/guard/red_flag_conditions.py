"""The condition kinds of a red-flag file, compiled to closures over a patient's ``Facts``.

A condition returns the evidence (a short text) when it holds, else None. Kinds (see
``data/red_flags.yaml``): ``lab``, ``vital``, ``score``, ``age``, ``mention``, ``any``, ``all``, ``not``.
A numeric comparison takes ``op`` + ``value`` or ``threshold: NAME`` (``clineval.cds.clinical_thresholds``,
the definitions tier 3 shares).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clineval.cds.clinical_thresholds import threshold
from clineval.core.errors import DataFileError

OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


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


@dataclass(frozen=True, slots=True)
class LabRow:
    """The latest sample of one lab concept: value in the concept's unit (None if not convertible)."""

    name: str
    value: float | None
    unit: str
    flag: str
    haemolysed: bool


@dataclass(frozen=True, slots=True)
class Facts:
    labs: Mapping[str, LabRow]  # concept -> its latest blood sample
    vitals: Mapping[str, float]
    scores: Mapping[str, float]
    age: float | None
    mentions: frozenset[str]


Condition = Callable[[Facts], str | None]


def comparison(spec: Mapping[str, Any], origin: str) -> tuple[Callable[[float, float], bool], str, float]:
    """(compare, op, limit) from ``threshold: NAME`` or ``op`` + ``value``."""
    if "threshold" in spec:
        found = threshold(str(spec["threshold"]), source=origin)
        op, limit = str(spec.get("op", found.op)), found.value
    else:
        op, number = str(spec.get("op", ">")), as_number(spec.get("value"))
        if number is None:
            problem = f"red-flag condition {dict(spec)!r} needs a value or a threshold"
            raise DataFileError(problem, path=origin)
        limit = number
    if op not in OPS:
        raise DataFileError(f"red-flag condition {dict(spec)!r}: unknown op {op!r}", path=origin)
    return OPS[op], op, limit


def lab_condition(spec: Mapping[str, Any], origin: str) -> Condition:
    concept = str(spec["concept"])
    flags = frozenset(str(f).lower() for f in spec.get("flags") or ())
    numeric = "threshold" in spec or "value" in spec or not flags  # flags only: no numeric limit
    compare, op, limit = comparison(spec, origin) if numeric else (OPS[">"], ">", math.inf)

    def holds(facts: Facts) -> str | None:
        row = facts.labs.get(concept)
        if row is None:
            return None
        note = " (haemolysed)" if row.haemolysed else ""
        if numeric and row.value is not None and compare(row.value, limit):
            return f"{row.name} {row.value:g} {row.unit}".rstrip() + f" ({op} {limit:g}){note}"
        if row.flag and row.flag in flags:
            return f"{row.name} flagged {row.flag}{note}"
        return None

    return holds


def number_condition(kind: str, spec: Mapping[str, Any], origin: str) -> Condition:
    name = str(spec.get("name", kind))
    compare, op, limit = comparison(spec, origin)

    def holds(facts: Facts) -> str | None:
        table = facts.vitals if kind == "vital" else facts.scores
        value = facts.age if kind == "age" else table.get(name)
        if value is not None and compare(value, limit):
            return f"{name} {value:g} ({op} {limit:g})"
        return None

    return holds


def mention_condition(terms: Sequence[str]) -> Condition:
    wanted = frozenset(terms)

    def holds(facts: Facts) -> str | None:
        found = wanted & facts.mentions
        return f"mentions {', '.join(sorted(found))}" if found else None

    return holds


def any_condition(parts: list[Condition]) -> Condition:
    def holds(facts: Facts) -> str | None:
        for part in parts:
            evidence = part(facts)
            if evidence is not None:
                return evidence
        return None

    return holds


def all_condition(parts: list[Condition]) -> Condition:
    def holds(facts: Facts) -> str | None:
        evidence: list[str] = []
        for part in parts:
            found = part(facts)
            if found is None:
                return None
            evidence.append(found)
        return "; ".join(evidence)

    return holds


def not_condition(part: Condition, text: str) -> Condition:
    def holds(facts: Facts) -> str | None:
        return None if part(facts) is not None else f"not {text}"

    return holds
