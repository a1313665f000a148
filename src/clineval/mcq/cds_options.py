"""Which MCQ options a CDS report names, and which one it names first: the ``ambiguous`` rule of
``cds_report``.

A report that lists every option wherever the answer is looked for has not chosen, as an MCQ answer
with several letters has not (it is ``unparsed`` there). So ``cds_report`` reads the sections where the
question type says the answer belongs (its *location*: the type's sections in order, each a ranked list)
as one ranked list and asks which option the report names **first**:

- an item *names* the options it fuzzy-matches (``clineval.text.matching``) best: first those whose whole
  phrase it contains, then the highest target-token recall, then the option with more content words (an
  item "Ceftriaxone and doxycycline" names that option, not the option "Ceftriaxone"; an item "Acute
  myeloid leukemia" names AML, not "Acute lymphoblastic leukemia", which it also fuzzy-matches with recall
  2/3; "Decreased PTH, increased calcium" names that option, not "Increased PTH, decreased calcium", which
  has the same words). Options still tied are all named by the item;
- the report's choice is the first item (in location order) that names any option; the correct option
  is *chosen* when that item names it and no other option. Items that name no option (a filler such as
  "Observation only") are skipped: the choice is among the options.

``cds_report`` then locates the correct option by the items that name it (not by a looser fuzzy match to
another option's text) and labels a case whose correct option is in the location but not chosen
``ambiguous``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clineval.core import Case
from clineval.text.matching import PreparedText, check_match, names_phrase, prepare


@dataclass(frozen=True, slots=True)
class Named:
    """An item of the location that names options: its section, 1-based rank there, and the options."""

    section: str
    rank: int
    letters: tuple[str, ...]


def correct_letter(case: Case, target: str) -> str | None:
    """The correct option's key: the reference letter, else the option whose text is the target."""
    options = case.input.options
    answer = (case.reference.answer or "").strip()
    if answer in options:
        return answer
    return next((k for k, text in options.items() if text.strip() == target.strip()), None)


@dataclass(frozen=True, slots=True)
class Option:
    """An option prepared for matching: its key, text, content stems (all forms) and size."""

    letter: str
    text: PreparedText
    stems: frozenset[str]
    size: int

    @classmethod
    def of(cls, letter: str, text: str) -> Option:
        prepared = prepare(text)
        stems = frozenset().union(*prepared.content)
        return cls(letter, prepared, stems, max((len(s) for s in prepared.content), default=0))


def options_named(item: str, options: Sequence[Option], threshold: float) -> tuple[str, ...]:
    """The options ``item`` names (sorted keys; several only when their match is tied; empty if none)."""
    candidate = prepare(item)
    best: tuple[bool, float, int] | None = None
    found: list[str] = []
    for option in options:
        # no content stem in common: neither containment nor any recall is possible (a fast "no")
        if option.stems.isdisjoint(candidate.stems):
            continue
        result = check_match(candidate, option.text, threshold)
        if not result.matched:
            continue
        key = (names_phrase(candidate, option.text), result.recall, option.size)
        if best is None or key > best:
            best, found = key, [option.letter]
        elif key == best:
            found.append(option.letter)
    return tuple(sorted(found))


def named_in(
    sections: Mapping[str, Sequence[str]],
    location: Sequence[str],
    options: Mapping[str, str],
    threshold: float,
    until: str | None = None,
) -> list[Named]:
    """Every item of the location (sections in order, items by rank) that names an option, in order;
    with ``until``, the scan ends with the first section holding an item that names option ``until``."""
    prepared = [Option.of(k, v) for k, v in options.items() if v and v.strip()]
    found: list[Named] = []
    for section in location:
        for rank, text in enumerate(sections.get(section, []), start=1):
            letters = options_named(text, prepared, threshold)
            if letters:
                found.append(Named(section, rank, letters))
        if until is not None and any(until in n.letters for n in found):
            break
    return found


def chosen(named: Sequence[Named], letter: str) -> bool:
    """Is ``letter`` the report's choice: the first naming item names it and no other option?"""
    return bool(named) and named[0].letters == (letter,)


def others(named: Sequence[Named], letter: str) -> list[dict[str, object]]:
    """The other options named in the location, each where it is first named (for the breakdown)."""
    seen: dict[str, dict[str, object]] = {}
    for item in named:
        for other in item.letters:
            if other != letter and other not in seen:
                seen[other] = {"option": other, "section": item.section, "rank": item.rank}
    return list(seen.values())
