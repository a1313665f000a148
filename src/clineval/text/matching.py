"""Does a free-text answer name a target ("Start clopidogrel 75mg daily" vs "Clopidogrel")?

``fuzzy_match(candidate, target, threshold=0.6)`` applies three rules, in this order, to the normalised
texts (``normalize_for_match``), each both as written and with abbreviations expanded ("Acute MI" ->
"acute myocardial infarction"; see ``clineval.text.abbreviations``):

1. ``containment``: the target occurs in the candidate, or the candidate in the target, as whole words
   (a side made only of stop words contains nothing);
2. ``all_tokens``: every content-token stem of the target occurs among the candidate's stems;
3. ``token_recall``: target-token recall = |target content stems found| / |target content stems|
   (distinct stems) >= ``threshold``.

Content tokens are tokens that are not stop words (``clineval.text.stopwords``: negations stay content,
so does every single letter but the article "a"); stems are Snowball stems (``clineval.text.stemming``).
An empty or stop-word-only target matches nothing, and an empty candidate matches nothing. Negation in
the *candidate* is not detected ("do not give aspirin" contains "aspirin"); that is the scorer's job.

Texts matched many times (a 3 kB report against several targets) should be ``prepare``d once; every
function here takes a ``str`` or a ``PreparedText``. ``prepare`` caches the last 8,192 short texts
(<= 256 characters: targets) and the last 64 long ones (a report and its sections while a case is scored).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, TypeAlias

from rapidfuzz import fuzz, process

from clineval.text.abbreviations import expansion_of
from clineval.text.stemming import stem, stem_set
from clineval.text.stopwords import STOP_WORDS

MatchRule: TypeAlias = Literal["containment", "all_tokens", "token_recall"]

# A token: a letter then letters/digits ("b12", "q6h" stay whole), or a number with its decimals; a number
# is split from a unit written against it ("75mg" -> "75", "mg").
_TOKEN = re.compile(r"[^\W\d_][^\W_]*|\d+(?:\.\d+)?")
_ASCII_TOKEN = re.compile(r"[a-z][a-z0-9]*|[0-9]+(?:\.[0-9]+)?")  # the same on ASCII text, faster
# Combining diacritical marks (Latin, Greek, Cyrillic accents), dropped after NFKD: "é" -> "e". Marks of
# other scripts (Indic vowel signs, ...) carry letters, not accents, and are kept.
_ACCENTS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_CLITIC = re.compile(r"'(?:s|re|ll|ve|d|m)\b")  # possessive 's, we're, we'll, we've, he'd, I'm: dropped


def _fold(text: str) -> str:
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKD", text)
    if not text.isascii():
        text = unicodedata.normalize("NFC", _ACCENTS.sub("", text))
    return text.casefold()


def match_tokens(text: str) -> list[str]:
    """The tokens of ``text``: compatibility forms folded (NFKD: full-width letters, ligatures), case
    folded, accents stripped, contractions spelled out ("don't" -> "do not", "Sjögren's" -> "sjogren"),
    split at anything not a letter or digit; a number is split from a unit written against it ("75mg"
    -> "75", "mg"); decimals are kept ("0.5")."""
    folded = _fold(text)
    if "’" in folded:
        folded = folded.replace("’", "'")
    if "'" in folded:
        folded = folded.replace("can't", "cannot").replace("won't", "will not").replace("n't", " not")
        folded = _CLITIC.sub("", folded)
    tokens: list[str] = (_ASCII_TOKEN if folded.isascii() else _TOKEN).findall(folded)
    return tokens


def normalize_for_match(text: str) -> str:
    """``match_tokens(text)`` joined by single spaces: the form containment is tested on."""
    return " ".join(match_tokens(text))


def _content(form: str) -> frozenset[str]:
    """Stems of the content tokens of a form; "a" is content only after a content word ("hepatitis a")."""
    tokens = form.split()
    words = set(tokens) - STOP_WORDS
    if "a" in tokens and any(
        tokens[i - 1] not in STOP_WORDS for i, tok in enumerate(tokens) if tok == "a" and i
    ):
        words.add("a")
    return stem_set(words)


class PreparedText:
    """A text normalised, tokenised, abbreviation-expanded and stemmed once, for matching many times.

    ``forms``: the normalised text padded with spaces (" acute mi "), then, if it has abbreviations, the
    same with them expanded; ``stems``: the stems of every token of every form, stop words included.
    Content stems and the vocabulary are computed on first use (a long candidate never needs them).
    """

    __slots__ = ("_content", "_vocabulary", "forms", "has_content", "stems", "text")

    def __init__(self, text: str, forms: tuple[str, ...], vocabulary: set[str]) -> None:
        self.text = text
        self.forms = forms
        self.stems = stem_set(vocabulary)
        self.has_content = not vocabulary.issubset(STOP_WORDS)
        self._vocabulary: set[str] | tuple[str, ...] = vocabulary
        self._content: tuple[frozenset[str], ...] | None = None

    @property
    def normalized(self) -> str:
        return self.forms[0].strip()

    @property
    def content(self) -> tuple[frozenset[str], ...]:
        """Content-token stems of each form."""
        if self._content is None:
            self._content = tuple(_content(form) for form in self.forms)
        return self._content

    @property
    def vocabulary(self) -> tuple[str, ...]:
        """The distinct tokens of every form, unstemmed."""
        if not isinstance(self._vocabulary, tuple):
            self._vocabulary = tuple(self._vocabulary)
        return self._vocabulary

    def __repr__(self) -> str:
        return f"PreparedText({self.normalized[:60]!r})"


def _build(text: str, abbreviations: Mapping[str, str] | None) -> PreparedText:
    tokens = match_tokens(text)
    vocabulary = set(tokens)
    forms: tuple[str, ...] = (f" {' '.join(tokens)} ",)
    expanded = expansion_of(tokens, vocabulary, abbreviations)
    if expanded is not None:
        forms += (f" {expanded[0]} ",)
        vocabulary |= expanded[1]
    return PreparedText(text, forms, vocabulary)


SHORT_TEXT = 256  # characters: targets, options, list items; longer texts are reports


@lru_cache(maxsize=8192)
def _prepare_short(text: str) -> PreparedText:
    return _build(text, None)


@lru_cache(maxsize=64)
def _prepare_long(text: str) -> PreparedText:
    return _build(text, None)


def prepare(text: str | PreparedText, abbreviations: Mapping[str, str] | None = None) -> PreparedText:
    """``text`` ready for matching (cached for the packaged abbreviations; returned as is if prepared)."""
    if isinstance(text, PreparedText):
        return text
    if not isinstance(text, str):
        raise TypeError(f"expected str or PreparedText, got {type(text).__name__}")
    if abbreviations is not None:
        return _build(text, abbreviations)
    return _prepare_short(text) if len(text) <= SHORT_TEXT else _prepare_long(text)


@dataclass(frozen=True, slots=True)
class MatchResult:
    """Whether the candidate names the target, by which rule, the target-token recall, and match_score."""

    matched: bool
    rule: MatchRule | None
    recall: float
    score: float


def _contains(cand: PreparedText, target: PreparedText) -> bool:
    for t in target.forms:
        for c in cand.forms:
            if t in c or (cand.has_content and len(c) <= len(t) and c in t):
                return True
    return False


def _recall(cand: PreparedText, target: PreparedText) -> float:
    return max((len(s & cand.stems) / len(s) for s in target.content if s), default=0.0)


def _near_miss(word: str, cand: PreparedText) -> float:
    """rapidfuzz ratio / 100 of the closest candidate token with the same first four letters, if >= 0.9.

    Typos only: medical opposites differ early (hyper-/hypo-, pre-/post-) and are never credited."""
    if len(word) < 5 or not word.isalpha():
        return 0.0
    for found, ratio, _ in process.extract(
        word, cand.vocabulary, scorer=fuzz.ratio, score_cutoff=90, limit=None
    ):
        if found[:4] == word[:4]:
            return float(ratio) / 100.0
    return 0.0


def _soft_recall(cand: PreparedText, target: PreparedText) -> float:
    best = 0.0
    for form, content in zip(target.forms, target.content, strict=True):
        seen: set[str] = set()
        credit = 0.0
        for word in form.split():
            s = stem(word)
            if s in content and s not in seen:
                seen.add(s)
                credit += 1.0 if s in cand.stems else _near_miss(word, cand)
        if content:
            best = max(best, credit / len(content))
    return best


def _explain(cand: PreparedText, tgt: PreparedText, threshold: float, graded: bool) -> MatchResult:
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    if not tgt.has_content or not cand.forms[0].strip():
        return MatchResult(False, None, 0.0, 0.0)
    recall = _recall(cand, tgt)
    if _contains(cand, tgt):
        return MatchResult(True, "containment", recall, 1.0)
    if recall == 1.0:
        return MatchResult(True, "all_tokens", recall, 1.0)
    score = _soft_recall(cand, tgt) if graded else recall
    return MatchResult(recall >= threshold, "token_recall" if recall >= threshold else None, recall, score)


def explain_match(
    candidate: str | PreparedText, target: str | PreparedText, threshold: float = 0.6
) -> MatchResult:
    """``fuzzy_match`` and why: the first rule that matched (or None), the recall, ``match_score``."""
    return _explain(prepare(candidate), prepare(target), threshold, graded=True)


def names_phrase(candidate: str | PreparedText, target: str | PreparedText) -> bool:
    """Does the candidate contain the target's whole normalised phrase (as written or expanded)? Unlike
    rule 1 this is one way only: "Start clopidogrel" names "clopidogrel", "PTH" does not name "Low PTH"."""
    cand, tgt = prepare(candidate), prepare(target)
    return tgt.has_content and any(t in c for t in tgt.forms for c in cand.forms)


def check_match(
    candidate: str | PreparedText, target: str | PreparedText, threshold: float = 0.6
) -> MatchResult:
    """``explain_match`` without the typo-tolerant graded score (``score`` is then the plain recall):
    cheaper, for deciding and comparing matches by recall (which of several options an item names)."""
    return _explain(prepare(candidate), prepare(target), threshold, graded=False)


def fuzzy_match(candidate: str | PreparedText, target: str | PreparedText, threshold: float = 0.6) -> bool:
    """True if ``candidate`` names ``target``: containment, else all target tokens, else token recall."""
    return _explain(prepare(candidate), prepare(target), threshold, graded=False).matched


def match_score(candidate: str | PreparedText, target: str | PreparedText) -> float:
    """Graded match in [0, 1].

    * 0.0 for an empty / stop-word-only target or an empty candidate;
    * 1.0 on containment (rule 1) or when every target content stem is in the candidate (rule 2);
    * otherwise the typo-tolerant target recall, max over the target's forms (as written, expanded):
      (1/|T|) * sum over distinct target content stems t of: 1 if t is among the candidate's stems, else
      rapidfuzz ``fuzz.ratio(word, w) / 100`` for the closest candidate token w with the same first four
      letters and a ratio >= 90 (a typo: "clopidogrl"), else 0.

    So ``match_score >= threshold`` whenever ``fuzzy_match(..., threshold)`` is True.
    """
    return _explain(prepare(candidate), prepare(target), 0.6, graded=True).score
