"""Which option does a text name by its *text*? (helpers of multiple-choice answer extraction)

Option texts are compared after ``normalize_text`` (case, accents, punctuation folded), as whole words.
Used by ``answer_extraction`` (fields, short answers) and ``answer_conclusion`` (long free text).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from clineval.text.normalize import contains_phrase, normalize_text

NEGATIONS = frozenset(
    ["not", "none", "neither", "nor", "cannot", "unable", "insufficient", "unknown", "unclear", "except"]
)


@lru_cache(maxsize=8192)
def _normalized(items: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple((key, normalize_text(text)) for key, text in items)


def normalized_options(options: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """(key, normalised text) of every option (cached)."""
    return _normalized(tuple(options.items()))


def equal_options(value_norm: str, options: Mapping[str, str]) -> list[str]:
    """Keys of the options whose normalised text equals the normalised value."""
    return [key for key, norm in normalized_options(options) if norm == value_norm]


def names_an_option(value_norm: str, options: Mapping[str, str]) -> bool:
    """Does the normalised value contain any option's text?"""
    return any(contains_phrase(value_norm, norm) for _, norm in normalized_options(options))


def contained_option(value_norm: str, options: Mapping[str, str]) -> str | None:
    """The one option whose text occurs in the value (nested matches keep the longest), else None.

    None too when another option's words all occur in the value and include the found option's words
    ("wrap the finger in moist gauze, put it in a bag" names the longer option, not "Wrap the finger in
    moist gauze"), or when a negation occurs outside the option's text.
    """
    normalized = normalized_options(options)
    found = [(k, n) for k, n in normalized if contains_phrase(value_norm, n)]
    found = [(k, n) for k, n in found if not any(n != o and contains_phrase(o, n) for _, o in found)]
    if len({n for _, n in found}) != 1 or len(found) != 1:
        return None
    key, norm = found[0]
    words, own = set(value_norm.split()), set(norm.split())
    if any(k != key and own < set(n.split()) <= words for k, n in normalized):
        return None
    return None if (words - own) & NEGATIONS else key


def letter_is_option_text(letter: str, options: Mapping[str, str]) -> bool:
    """Is a bare letter also the text of another option (options that are graph labels "B".."E")?"""
    return any(len(t) <= 4 and t.strip(" ().") == letter and k != letter for k, t in options.items())


def reads_lower_case(options: Mapping[str, str]) -> bool:
    """Lower-case letters are letters unless an option's own text is a single letter ("c")."""
    return not any(len(t.strip(" ().")) == 1 and t.strip(" ().").isalpha() for t in options.values())


def option_starting_with_letter(tail: str, letter: str, options: Mapping[str, str]) -> str | None:
    """The option whose text begins with ``letter`` as a word and is how ``tail`` begins
    ("C. difficile colitis" is an option's text, not the letter C), else None."""
    tail_norm = normalize_text(tail)
    keys = [
        k
        for k, n in normalized_options(options)
        if " " in n and n.split(" ", 1)[0] == letter.lower() and f"{tail_norm} ".startswith(f"{n} ")
    ]
    return keys[0] if len(keys) == 1 else None


def labelled_with_own_text(
    sentence: str, options: Mapping[str, str], labels: list[tuple[str, int, int]]
) -> dict[str, int]:
    """Of the letter ``labels`` (letter, label start, text start) in ``sentence``, those followed by their
    own option text ("is A. Preterm labor"): letter -> where the label starts."""
    found = {}
    for letter, start, end in labels:
        own = normalize_text(options.get(letter, ""))
        after = normalize_text(sentence[end:])
        if own and (after == own or after.startswith(own + " ")):
            found[letter] = start
    return found
