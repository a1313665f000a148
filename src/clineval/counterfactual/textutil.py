"""Text helpers shared by the rewrite and exclusion rules (pure functions, no I/O).

* Whole-word matching: a word matches only where the characters on both sides are not letters or digits
  (``(?<![A-Za-z0-9])`` ... ``(?![A-Za-z0-9])``), so ``man`` never matches inside ``woman``, ``human``,
  ``chairman`` or ``manage``, while ``37-year-old-woman`` and ``woman's`` still match.
* Case: a replacement takes the case pattern of the word it replaces (``match_case``).
* The patient anchor: the first age phrase (``45-year-old``, ``3-month-old``, ``2 day old``) or, without one,
  a leading ``newborn`` / ``neonate`` / ``infant``. Vignettes without an anchor (research designs, basic
  science, ethics items about clinicians) have no patient whose attributes could be swapped.
* Sentences: split after ``.``, ``!`` or ``?`` followed by white space and an upper-case letter, except after
  common abbreviations (``Dr.``, ``Mr.``, ``vs.``, ``e.g.``) and single capitals (initials).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

LEFT = r"(?<![A-Za-z0-9])"
RIGHT = r"(?![A-Za-z0-9])"

_NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|eighteen|twenty"
AGE_RE = re.compile(
    LEFT + rf"(?P<num>\d+(?:\.\d+)?|{_NUMBER_WORDS})[- ](?:and[- ]a[- ]half[- ])?"
    r"(?P<unit>year|yr|month|week|day|hour)s?[- ]old" + RIGHT,
    re.IGNORECASE,
)
NEWBORN_RE = re.compile(LEFT + r"(?:newborn|neonate|infant)" + RIGHT, re.IGNORECASE)
_NUMBER_VALUES = {w: i for i, w in enumerate(_NUMBER_WORDS.split("|"), start=1)}
_NUMBER_VALUES.update({"fifteen": 15, "eighteen": 18, "twenty": 20})

_ABBREVIATIONS = ("dr", "mr", "mrs", "ms", "vs", "e.g", "i.e", "etc", "approx", "no", "st", "fig")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)]?\s+(?=[A-Z\"“(])")


def word_pattern(words: Iterable[str], *, flexible_space: bool = True) -> str:
    """An alternation of ``words`` (longest first), each a literal; a space may also be a hyphen."""
    parts = []
    for word in sorted(set(words), key=lambda w: (-len(w), w)):
        literal = re.escape(word)
        if flexible_space:
            literal = literal.replace(r"\ ", r"[- ]").replace(r"\-", r"[- ]")
        parts.append(literal)
    return "(?:" + "|".join(parts) + ")"


def whole_words(alternation: str, *, ignore_case: bool = True) -> re.Pattern[str]:
    """Compile ``alternation`` (regex) to match whole words only (see the module docstring)."""
    flags = re.IGNORECASE if ignore_case else 0
    return re.compile(LEFT + "(?:" + alternation + ")" + RIGHT, flags)


def match_case(source: str, replacement: str) -> str:
    """``replacement`` in the case pattern of ``source``: all lower -> lower; all upper (2+ letters) ->
    upper; first letter upper -> first letter upper (the rest as written in ``replacement``)."""
    if not source or not replacement:
        return replacement
    if source.islower():
        return replacement.lower()
    letters = [c for c in source if c.isalpha()]
    if len(letters) > 1 and source.isupper():
        return replacement.upper()
    if source[0].isupper():
        return replacement[0].upper() + replacement[1:]
    return replacement


def is_all_caps(token: str) -> bool:
    """Two or more letters, all upper case (``HE``, ``HER``: read as abbreviations, never rewritten)."""
    letters = [c for c in token if c.isalpha()]
    return len(letters) > 1 and all(c.isupper() for c in letters)


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character spans of the sentences of ``text`` (see the module docstring)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        before = text[start : m.start()].rstrip("\"'”’)")
        last = before.rsplit(None, 1)[-1].rstrip(".!?").lower() if before.split() else ""
        if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()):
            continue
        spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


@dataclass(frozen=True)
class Anchor:
    """Where the patient is introduced: the age phrase (or newborn word), and the age in years if known."""

    start: int
    end: int
    age_years: float | None


def find_anchor(text: str) -> Anchor | None:
    """The first age phrase of ``text``, else a ``newborn``/``neonate``/``infant`` word; ``None`` when
    the text introduces no patient."""
    m = AGE_RE.search(text)
    if m:
        raw = m.group("num").lower()
        number = float(_NUMBER_VALUES[raw]) if raw in _NUMBER_VALUES else float(raw)
        unit = m.group("unit").lower()
        per_year = {"year": 1.0, "yr": 1.0, "month": 12.0, "week": 52.0, "day": 365.0, "hour": 8760.0}[unit]
        return Anchor(m.start(), m.end(), number / per_year)
    m = NEWBORN_RE.search(text)
    if m:
        return Anchor(m.start(), m.end(), 0.0)
    return None


def next_token(text: str, pos: int) -> str:
    """The token after position ``pos``: a word, a number, one punctuation character, or '' at the end."""
    m = re.compile(r"\s*([A-Za-z]+(?:['’][A-Za-z]+)?|\d+|\S)").match(text, pos)
    return m.group(1) if m else ""


def previous_word(text: str, pos: int) -> str:
    """The word (letters only) that ends right before position ``pos`` (after white space), or ''."""
    m = re.compile(r"([A-Za-z]+)\s*$").search(text[max(0, pos - 40) : pos])
    return m.group(1) if m else ""
