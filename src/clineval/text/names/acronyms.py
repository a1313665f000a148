"""Ambiguous abbreviations resolved by context: "MS" is multiple sclerosis in one differential and mitral
stenosis in another.

An abbreviation the packaged inventory and the curated vocabulary leave unresolved (PE, RA, TTP, MI, PID,
CAD are settled there to their disease sense) is read by the names around it: the other names of the
differential and the ground truth. It resolves to a name only when that name is the *only* one in the
context whose initials spell it ("multiple sclerosis" -> MS; "pelvic inflammatory disease" -> PID, with or
without its generic last word). Two such names, or none, leave it unresolved, and the explanation says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from clineval.text.names.diagnosis_vocab import name_forms, name_key

_ACRONYM = re.compile(r"^[A-Z][A-Z0-9]{1,4}$")  # as written: "MS", "PID", "AS"
_SKIP = frozenset({"of", "the", "and", "with", "in", "to", "a", "an", "due", "or"})
_GENERIC_LAST = frozenset({"disease", "diseases", "disorder", "syndrome", "infection"})


@dataclass(frozen=True, slots=True)
class Resolution:
    """What the context says an acronym stands for: one name, or why not."""

    sense: str | None
    why: str


def is_acronym(name: str) -> bool:
    return bool(_ACRONYM.match(name.strip()))


def _initials(name: str) -> set[str]:
    words = [w for w in name_forms(name)[0].split() if w not in _SKIP]
    spelled = {"".join(w[0] for w in words)}
    if len(words) > 2 and words[-1] in _GENERIC_LAST:
        spelled.add("".join(w[0] for w in words[:-1]))
    return spelled


def resolve(acronym: str, context: Iterable[str]) -> Resolution:
    """The one context name whose initials spell ``acronym`` (see the module docstring)."""
    key = acronym.strip().lower()
    senses: dict[str, str] = {}
    for name in context:
        if name.strip() and not is_acronym(name) and key in _initials(name):
            senses.setdefault(name_key(name), name)
    if len(senses) == 1:
        sense = next(iter(senses.values()))
        return Resolution(
            sense, f"{acronym!r} read as {sense!r}: the only name in the context it abbreviates"
        )
    if senses:
        shown = ", ".join(repr(s) for s in senses.values())
        return Resolution(None, f"ambiguous abbreviation {acronym!r}: {shown} in the context")
    return Resolution(None, f"abbreviation {acronym!r}: no name in the context it abbreviates")
