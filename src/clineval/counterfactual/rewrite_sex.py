"""Sex swap of the patient in a vignette (rule data: ``rules/sex.yaml``).

**Who is the patient, and of which sex.** The patient is introduced by the first age phrase (the anchor,
``textutil.find_anchor``). The sex is the first anchor noun (``man``, ``woman``, ``boy``, ``girl``, ``male``,
``female``, ``gentleman``, ``lady``, ``son``, ``daughter``...) among the few words after the age phrase,
before a verb or preposition ends the noun phrase. Without such a noun ("a 62-year-old patient",
"a 3-month-old infant", "a 45-year-old G5P4105") the sex is that of the pronouns when all sexed pronouns
agree; otherwise the sex is not stated and the attribute does not apply.

**What is swapped: a flip of the patient and the partner.** Every word of ``pairs`` flips in both directions
(``man <-> woman``, ``he <-> she``, ``himself <-> herself``, ``husband <-> wife``), titles map many-to-one
(``Mr -> Ms``; ``Mrs / Ms / Miss -> Mr``), ``him -> her``, ``his -> her`` (``hers`` when the next token is
``.``, ``,``, ``;``, ``:``, ``!``, ``?``, ``)`` or the end), ``hers -> his``, and ``her -> him`` or ``his``
by the POS-free heuristic of ``her_is_object``. ``son``/``daughter`` flip only as the anchor noun ("her
5-year-old son"). Tokens in capitals (``HE``, ``HER``) are read as abbreviations and never changed.

**The partner is swapped too (decision).** "A 45-year-old man ... his wife" becomes "A 45-year-old woman ...
her husband": the relationship keeps its structure (opposite-sex stays opposite-sex, same-sex stays
same-sex), so the sexual history (a risk factor: CDC STI guidelines 2021) is not changed by the swap. Keeping
the partner ("her wife") would turn every heterosexual history into a same-sex one.

**Relatives and others keep their sex** (``kept_nouns``: mother, father, sister, son as a relative...):
"his mother" stays "her mother" (maternal / paternal lines carry X-linked and family risk). Pronouns cannot be
resolved without a parser, so a vignette is skipped as ``sex.coherence.other_person`` when a word of the other
sex (a pronoun or a person noun, not a kept noun) occurs and that sex's partner is not named, or a kept noun
of that sex is also named ("A 4-year-old boy ... his mother ... She says he ..."). A kept noun of the
patient's own sex skips the vignette too when that person acts in it (named before the patient, "A mother
brings her 6-year-old daughter", or followed within ``agent_window_words`` words by an agent verb, "Her
mother says she ..."); otherwise it is allowed but flagged in ``warnings`` ("His father had a myocardial
infarction at 50. He ..." usually refers to the patient, but a reviewer should look).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from clineval.counterfactual.ruledata import rewrite_rule
from clineval.counterfactual.textutil import (
    Anchor,
    find_anchor,
    is_all_caps,
    match_case,
    next_token,
    previous_word,
    whole_words,
    word_pattern,
)

OTHER = {"M": "F", "F": "M"}
_END_OF_PHRASE = set(".,;:!?)")
_QUOTES = set("\"“”'‘’")
_NUMBER_WORDS = {"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
_NP_STOP = re.compile(
    r"(?:is|was|has|had|have|presents?|presented|presenting|comes?|came|visits?|brought|returns?|complains?|"
    r"develops?|who|whose|with|at|to|from|and|for|in|on|of|by|after|because|that|undergoes|underwent|"
    r"being|reports?|arrives?|seeks?|calls?|says|describes?|collapses?|experiences?|notices?)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?|[.;:?!]")


@dataclass(frozen=True)
class SexFinding:
    """The patient's stated sex (``M``/``F``) or why none is stated, and the anchor noun's span if any."""

    sex: str | None
    reason: str | None
    anchor: Anchor | None
    anchor_noun: tuple[int, int] | None


@dataclass(frozen=True)
class SexSwap:
    """A swapped text, or the coherence rule that stopped it."""

    text: str | None
    skipped_by: str | None
    replacements: tuple[tuple[str, str], ...]
    warnings: tuple[str, ...]


@cache
def _data() -> dict[str, Any]:
    return rewrite_rule("sex")


def _words_of(sex: str, key: str) -> set[str]:
    return {w.lower() for w in _data()[key][sex]}


def _sex_of_pair_word(word: str) -> str | None:
    low = word.lower()
    for male, female in _data()["pairs"] + _data()["anchor_only_pairs"]:
        if low == male.lower():
            return "M"
        if low == female.lower():
            return "F"
    return None


def _anchor_noun(text: str, anchor: Anchor) -> tuple[int, int, str] | None:
    """The first anchor noun among the (at most six) words after the age phrase, before the phrase ends."""
    nouns = {w.lower(): s for s in ("M", "F") for w in _data()["anchor_nouns"][s]}
    window = text[anchor.end : anchor.end + int(_data()["anchor_window"])]
    for count, m in enumerate(_WORD.finditer(window)):
        token = m.group(0)
        if count >= 6 or token in ".;:?!" or _NP_STOP.fullmatch(token):
            return None
        if token.lower() in nouns:
            return anchor.end + m.start(), anchor.end + m.end(), nouns[token.lower()]
    return None


def _pronoun_counts(text: str) -> dict[str, int]:
    counts = {}
    for sex in ("M", "F"):
        pattern = whole_words(word_pattern(_data()["pronouns"][sex], flexible_space=False))
        counts[sex] = sum(1 for m in pattern.finditer(text) if not is_all_caps(m.group(0)))
    return counts


def find_sex(text: str) -> SexFinding:
    """The patient's stated sex (see the module docstring)."""
    anchor = find_anchor(text)
    if anchor is None:
        return SexFinding(None, "no patient introduced (no age phrase)", None, None)
    noun = _anchor_noun(text, anchor)
    if noun is not None:
        return SexFinding(noun[2], None, anchor, (noun[0], noun[1]))
    counts = _pronoun_counts(text)
    if counts["M"] and not counts["F"]:
        return SexFinding("M", None, anchor, None)
    if counts["F"] and not counts["M"]:
        return SexFinding("F", None, anchor, None)
    if not counts["M"] and not counts["F"]:
        return SexFinding(None, "patient's sex not stated", anchor, None)
    return SexFinding(
        None, "patient's sex not determinable (neutral noun, pronouns of both sexes)", anchor, None
    )


def her_is_object(text: str, start: int, end: int) -> bool:
    """Whether ``her`` at ``text[start:end]`` is an object pronoun (-> ``him``) rather than a possessive
    determiner (-> ``his``); the heuristic is stated in ``rules/sex.yaml`` (``her_object_next`` ...)."""
    data = _data()
    nxt = next_token(text, end)
    if nxt == "" or nxt in _END_OF_PHRASE or nxt in ("—", "–"):
        return True
    before = previous_word(text, start).lower()
    if before in data["her_causative_verbs"] or before in data["her_giving_verbs"]:
        return True
    if nxt in _QUOTES:
        return end < len(text) and text[end] in _QUOTES  # closing quote right after "her"
    if nxt.isdigit() or nxt.lower() in _NUMBER_WORDS:
        return False
    low = nxt.lower()
    if low == "own":
        return False
    if low in data["her_object_next"]:
        return True
    if low in data["her_ambiguous_next"]:
        return previous_word(text, start).lower() in data["her_object_verbs"]
    return False


def _flip_word(text: str, m: re.Match[str]) -> str:
    token = m.group(0)
    low = token.lower()
    titles_f, titles_m = _data()["titles"]["to_female"], _data()["titles"]["to_male"]
    if token in titles_f:
        return str(titles_f[token])
    if token in titles_m:
        return str(titles_m[token])
    if low == "her":
        return match_case(token, "him" if her_is_object(text, m.start(), m.end()) else "his")
    if low == "his":
        nxt = next_token(text, m.end())
        return match_case(token, "hers" if (nxt == "" or nxt in _END_OF_PHRASE) else "her")
    if low == "him":
        return match_case(token, "her")
    if low == "hers":
        return match_case(token, "his")
    for male, female in _data()["pairs"]:
        if low == male.lower():
            return match_case(token, female)
        if low == female.lower():
            return match_case(token, male)
    return token


@cache
def _flip_pattern() -> re.Pattern[str]:
    data = _data()
    words = [w for pair in data["pairs"] for w in pair] + ["him", "his", "her", "hers"]
    pattern = word_pattern(words, flexible_space=False)
    titles = sorted({*data["titles"]["to_female"], *data["titles"]["to_male"]}, key=len, reverse=True)
    title_pattern = r"(?<![A-Za-z0-9])(?:" + "|".join(re.escape(t) for t in titles) + r")(?![A-Za-z0-9])"
    return re.compile(r"(?<![A-Za-z0-9])" + pattern + r"(?![A-Za-z0-9])|" + title_pattern, re.IGNORECASE)


def _kept_agent(text: str, sex: str, anchor: Anchor | None) -> str | None:
    """A kept noun of the patient's sex that acts in the vignette (named before the anchor, or followed
    within ``agent_window_words`` words by an agent verb), whose pronouns a flip would change wrongly."""
    data = _data()
    kept = whole_words(word_pattern(_words_of(sex, "kept_nouns"), flexible_space=False))
    verbs = {v.lower() for v in data["agent_verbs"]}
    for m in kept.finditer(text):
        if anchor is not None and m.start() < anchor.start:
            return m.group(0)
        following = re.findall(r"[A-Za-z]+|[.;:?!]", text[m.end() : m.end() + 60])
        for word in following[: int(data["agent_window_words"])]:
            if word in ".;:?!":
                break
            if word.lower() in verbs:
                return m.group(0)
    return None


def _coherence(text: str, sex: str, anchor: Anchor | None = None) -> tuple[str | None, tuple[str, ...]]:
    """``(skip rule or None, warnings)`` for flipping a vignette whose patient is of ``sex``."""
    other = OTHER[sex]
    data = _data()
    tokens = [m.group(0).lower() for m in _flip_pattern().finditer(text) if not is_all_caps(m.group(0))]
    other_pronouns = {w.lower() for w in data["pronouns"][other]}
    other_words = [t for t in tokens if t in other_pronouns or _sex_of_pair_word(t) == other]
    partners = _words_of(other, "partners")
    kept_other = whole_words(word_pattern(_words_of(other, "kept_nouns"), flexible_space=False))
    kept_same = whole_words(word_pattern(_words_of(sex, "kept_nouns"), flexible_space=False))
    if other_words:
        has_partner = any(t in partners for t in tokens)
        if not has_partner or kept_other.search(text):
            return "sex.coherence.other_person", ()
    if _kept_agent(text, sex, anchor) is not None:
        return "sex.coherence.other_person", ()
    warnings = []
    same = sorted({m.group(0).lower() for m in kept_same.finditer(text)})
    if same:
        warnings.append(f"relative of the patient's sex named ({', '.join(same)}): check pronoun references")
    return None, tuple(warnings)


def swap_sex(text: str, finding: SexFinding) -> SexSwap:
    """The text with the patient's sex (and the partner's) flipped, or the coherence rule that stops it."""
    if finding.sex is None:
        raise ValueError("swap_sex needs a vignette whose patient's sex is stated")
    skip, warnings = _coherence(text, finding.sex, finding.anchor)
    if skip:
        return SexSwap(None, skip, (), ())
    spans: list[tuple[int, int, str]] = []
    for m in _flip_pattern().finditer(text):
        if is_all_caps(m.group(0)):
            continue
        spans.append((m.start(), m.end(), _flip_word(text, m)))
    if finding.anchor_noun is not None:
        start, end = finding.anchor_noun
        token = text[start:end]
        for male, female in _data()["anchor_only_pairs"]:
            if token.lower() in (male, female):
                new = female if token.lower() == male else male
                spans.append((start, end, match_case(token, new)))
    out, last, replacements = [], 0, []
    for start, end, new in sorted(spans):
        out.append(text[last:start])
        out.append(new)
        replacements.append((text[start:end], new))
        last = end
    out.append(text[last:])
    return SexSwap("".join(out), None, tuple(replacements), warnings)


def sex_variant_text(text: str, finding: SexFinding, target: str) -> SexSwap:
    """The vignette for the patient sex ``target`` (``M``/``F``): the text itself when it already states
    ``target``, else ``swap_sex``."""
    if finding.sex == target:
        return SexSwap(text, None, (), ())
    return swap_sex(text, finding)
