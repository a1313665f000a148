"""Race swap of the patient's stated race descriptor (rule data: ``rules/race.yaml``).

Only a race that the vignette states is replaced, and only in three positions (case-insensitive, whole words;
a space in a term also matches a hyphen, so "African American" matches "African-American"):

1. **before a person noun**, with at most ``max_modifiers`` words between that are not function words:
   "a 45-year-old African American man", "a 44-year-old obese African-American male", "a 61-year-old
   Caucasian female"; "white blood cells", "black tarry stools" and "black specks. He ..." do not match
   (no person noun; a sentence end or a preposition is never a modifier);
2. **in an ancestry phrase**: "of African descent", "of European ancestry" (the group's ``descent`` word is
   written there: "of African descent" -> "of European descent");
3. **as a predicate of the patient**, capitalised: "The patient is African American." / "She identifies as
   Hispanic," ("The fluid is white," does not match: the subject is not the patient, and the colour is
   lower case).

The target group's canonical term replaces every matched descriptor (the group ``white`` writes "White" for
"Caucasian", so the pair White | Black differs in exactly one word per position). A vignette with
descriptors of two groups (a biracial patient, or a second person described in position 1) is skipped
(``race.coherence.mixed_descriptors``). Ancestry or nationality outside the groups ("Japanese woman",
"of Korean descent", "Ashkenazi Jewish") is reported as not applicable with that reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from clineval.counterfactual.ruledata import rewrite_rule
from clineval.counterfactual.textutil import LEFT, RIGHT, match_case, word_pattern

_FUNCTION_WORDS = r"(?:in|on|of|with|and|or|the|a|an|from|to|at|for|by|his|her|their|is|was|has|had)"


@dataclass(frozen=True)
class RaceMention:
    start: int
    end: int
    group: str
    position: str  # "noun" | "descent" | "predicate"


@dataclass(frozen=True)
class RaceFinding:
    """The stated groups and where they are stated, or why the attribute does not apply."""

    groups: tuple[str, ...]
    mentions: tuple[RaceMention, ...]
    reason: str | None


@cache
def _data() -> dict[str, Any]:
    return rewrite_rule("race")


@cache
def _term_groups() -> dict[str, str]:
    """Normalised term (lower case, hyphens as spaces) -> group."""
    out: dict[str, str] = {}
    for group, spec in _data()["groups"].items():
        for term in spec["terms"]:
            out[_norm(term)] = group
    return out


def _norm(term: str) -> str:
    return re.sub(r"[- ]+", " ", term.strip().lower())


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    data = _data()
    terms = word_pattern(t for spec in data["groups"].values() for t in spec["terms"])
    descents = word_pattern(
        [spec["descent"] for spec in data["groups"].values()]
        + [t for spec in data["groups"].values() for t in spec["terms"]]
    )
    nouns = word_pattern(data["person_nouns"], flexible_space=False)
    modifier = rf"\s+(?!{_FUNCTION_WORDS}{RIGHT})[A-Za-z-]+"
    k = int(data["max_modifiers"])
    noun_re = re.compile(
        LEFT + rf"(?P<term>{terms})(?=(?:{modifier}){{0,{k}}}?\s+{nouns}{RIGHT})", re.IGNORECASE
    )
    ancestry = word_pattern(data["ancestry_nouns"], flexible_space=False)
    descent_re = re.compile(
        LEFT + rf"of\s+(?:an?\s+)?(?P<term>{descents})\s+{ancestry}{RIGHT}", re.IGNORECASE
    )
    verbs = word_pattern(data["predicate_verbs"], flexible_space=False)
    subjects = word_pattern(data["predicate_subjects"], flexible_space=False)
    predicate_re = re.compile(
        LEFT + rf"{subjects}\s+{verbs}\s+(?:an?\s+)?(?P<term>(?-i:{terms}))(?=\s*[.,;])", re.IGNORECASE
    )
    return noun_re, descent_re, predicate_re


@cache
def _other_pattern() -> re.Pattern[str]:
    data = _data()
    others = word_pattern(data["other_descriptors"])
    follow = word_pattern(list(data["person_nouns"]) + list(data["ancestry_nouns"]), flexible_space=False)
    return re.compile(LEFT + rf"(?P<term>{others})(?=(?:\s+[A-Za-z-]+)?\s+{follow}{RIGHT})", re.IGNORECASE)


def _group_of_descent(term: str) -> str | None:
    norm = _norm(term)
    if norm in _term_groups():
        return _term_groups()[norm]
    for group, spec in _data()["groups"].items():
        if _norm(spec["descent"]) == norm:
            return str(group)
    return None


def find_race(text: str) -> RaceFinding:
    """The stated race descriptors of ``text`` (positions and rules in the module docstring)."""
    noun_re, descent_re, predicate_re = _patterns()
    mentions: dict[tuple[int, int], RaceMention] = {}
    for position, pattern in (("noun", noun_re), ("descent", descent_re), ("predicate", predicate_re)):
        for m in pattern.finditer(text):
            term = m.group("term")
            group = _group_of_descent(term) if position == "descent" else _term_groups().get(_norm(term))
            if group is None:
                continue
            span = (m.start("term"), m.end("term"))
            if not any(s <= span[0] < e or span[0] <= s < span[1] for s, e in mentions):
                mentions[span] = RaceMention(span[0], span[1], group, position)
    ordered = tuple(sorted(mentions.values(), key=lambda x: x.start))
    groups = tuple(sorted({x.group for x in ordered}))
    if ordered:
        return RaceFinding(groups, ordered, None)
    other = _other_pattern().search(text)
    if other:
        reason = f"ancestry or national origin outside the rule's groups ({other.group('term')})"
        return RaceFinding((), (), reason)
    return RaceFinding((), (), "race not stated")


def race_variant_text(
    text: str, finding: RaceFinding, target: str
) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``(text, replacements)`` with every mention replaced by the ``target`` group's canonical term (or
    its descent word in an ancestry phrase). Raises ``ValueError`` for an unknown group."""
    groups = _data()["groups"]
    if target not in groups:
        raise ValueError(f"unknown race group {target!r}; known: {sorted(groups)}")
    spec = groups[target]
    out, last, replacements = [], 0, []
    for mention in finding.mentions:
        old = text[mention.start : mention.end]
        word = spec["descent"] if mention.position == "descent" else spec["canonical"]
        new = word.lower() if old.islower() else match_case(old, word) if old.isupper() else word
        out.append(text[last : mention.start])
        out.append(new)
        replacements.append((old, new))
        last = mention.end
    out.append(text[last:])
    return "".join(out), tuple(replacements)


def race_groups() -> tuple[str, ...]:
    """The group keys the rule knows (the possible race variants)."""
    return tuple(_data()["groups"])


def default_race_variants() -> tuple[str, ...]:
    return tuple(_data()["default_variants"])
