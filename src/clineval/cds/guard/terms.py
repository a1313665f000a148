"""Fast phrase lookup: which terms of a list does a text name ("Start IV heparin infusion" -> heparin)?

A term matches when its tokens occur consecutively in the text after the same normalisation on both
sides: ``clineval.text.matching.match_tokens`` (case and accent folding, "75mg" -> "75 mg") and Snowball
stems (``clineval.text.stemming``: "pneumonias" ~ "pneumonia", "anticoagulated" ~ "anticoagulation"
is *not* assumed). Whole tokens only: "pe" matches "PE" but not "pediatric". ``suffixes`` add the
generic-name stems of drug classes ("-pril", "-sartan", "-olol"...): a token of at least
``len(suffix) + 3`` letters ending with one is a match, reported as the token itself.

The index is built once (construction); a lookup is a dictionary probe per text token, so it costs
microseconds, which the runtime guard's < 1 ms budget needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from clineval.text.matching import match_tokens
from clineval.text.stemming import stem_all

_MIN_STEM = 3  # letters a token needs before a class suffix: "lisinopril" is a drug, "april" is not


@lru_cache(maxsize=65_536)
def stemmed_tokens(text: str) -> tuple[str, ...]:
    """The stems of ``text``'s tokens, in order (cached: labels and actions repeat across calls)."""
    return tuple(stem_all(match_tokens(text)))


class TermIndex:
    """A list of terms (phrases) looked up in texts by consecutive stemmed tokens."""

    __slots__ = ("_first", "_suffixes", "terms")

    def __init__(self, terms: Iterable[str], *, suffixes: Sequence[str] = ()) -> None:
        self.terms: tuple[str, ...] = tuple(dict.fromkeys(t.strip() for t in terms if t and t.strip()))
        first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for term in self.terms:
            key = stemmed_tokens(term)
            if key:
                first.setdefault(key[0], []).append((key, term))
        for options in first.values():
            options.sort(key=lambda item: -len(item[0]))  # longest phrase first
        self._first = first
        ends = sorted({s.lower().strip("- ") for s in suffixes if s.strip("- ")}, key=len, reverse=True)
        self._suffixes = (
            re.compile(rf"\b[a-z]{{{_MIN_STEM},}}(?:{'|'.join(map(re.escape, ends))})\b") if ends else None
        )

    def __len__(self) -> int:
        return len(self.terms)

    def find(self, text: str) -> list[str]:
        """The terms ``text`` names, in order of first occurrence, each once."""
        if not text:
            return []
        stems = stemmed_tokens(text)
        found: dict[str, None] = {}
        first = self._first
        n = len(stems)
        for i, s in enumerate(stems):
            options = first.get(s)
            if options is not None:
                for key, term in options:
                    if stems[i : i + len(key)] == key:
                        found[term] = None
                        break
        if self._suffixes is not None:
            for word in self._suffixes.findall(text.lower()):
                found.setdefault(word, None)
        return list(found) if n else []

    def scan(self, text: str) -> tuple[tuple[str, ...], list[tuple[str, int, int]]]:
        """``text``'s stems and every (term, start, end) token span it names (suffix hits not included)."""
        stems = stemmed_tokens(text) if text else ()
        spans: list[tuple[str, int, int]] = []
        first = self._first
        for i, s in enumerate(stems):
            options = first.get(s)
            if options is not None:
                for key, term in options:
                    if stems[i : i + len(key)] == key:
                        spans.append((term, i, i + len(key)))
                        break
        return stems, spans

    def names(self, text: str) -> bool:
        """Whether ``text`` names any term."""
        return bool(self.find(text))
