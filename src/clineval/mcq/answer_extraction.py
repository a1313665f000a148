"""Which option letter does a model's answer name? (multiple-choice answer extraction)

``extract_choice(text, options)`` returns an ``Extraction(letter, method, span)``. It never guesses:
when no single option can be identified (no letter, several letters, "None of the above", an error
message, empty text, two answers that compete) the result is ``letter=None, method="unparsed"``. In
particular it never falls back to "A" as MIRAGE's ``locate_answer`` does.

A reasoning model's ``<think>...</think>`` block is skipped when an answer follows it. Then the first
of these that applies decides:

1. An answer field in JSON-like text, ``"answer_choice": "B. ..."`` / ``"answer": "C"`` (the LAST one,
   as MIRAGE does). When a field exists, only the field is read; the reasoning before it is not mined
   for letters. Within the field (and within a short plain answer, <= 200 characters):
   a. the text equals an option's text exactly;
   b. a leading letter: ``B``, ``B.``, ``(B)``, ``b)``, ``**B**``, ``B. Cisplatin``, ``Option B``,
      (ambiguous when followed by another letter label: ``A/B``, ``A and C``, ``A. x, C. y``);
   c. the text equals an option's text after normalisation (case, accents, punctuation);
   d. an answer statement (the last one): ``the answer is D``, ``Answer: (C)``, ``Final answer: c)``,
      ``Option C is correct``, ``C is the correct answer``, ``I would choose (b)``, ``The answer is not
      A; it is C``; ``Option B is correct`` when another option is "also correct" is ambiguous;
   e. a single option mention: ``Option B``, ``(B)`` (several different letters: ambiguous);
   f. a bold letter ``**B**``;
   g. the text contains exactly one option's text (whole words) and no negation outside it.
2. LaTeX ``\\boxed{C}`` (also ``\\boxed{\\text{C}}``, ``$\\boxed{(C)}$``, ``\\boxed{C. Cisplatin}``,
   ``\\boxed{Cisplatin}``): every box must name the same option, and no answer statement after the
   last box may name another (``\\boxed{A} ... final answer B`` is unparsed).
3. A long plain text: the last answer statement (1d) or an answer statement followed by one option's
   text ("the answer is cisplatin"), whichever comes later; else a unique bold letter; else a leading
   letter on a short first line; else the text's last sentence, when it draws the conclusion
   ("Therefore, ...") and names exactly one option (its letter with its text, ``(Option C)``, or its text).

Letters are the keys of ``options`` (single upper-case characters); lower-case letters name the same
options where a marker makes them letters (``(b)``, ``c)``, ``answer: d.``; in a field or a box a bare
``b``), but never where an option's own text is a single letter. Letters A-H are always recognised so
that an answer naming a letter that is not an option ("E" for a four-option question) is unparsed
rather than read as something else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from clineval.mcq.answer_conclusion import conclusion, text_phrase
from clineval.mcq.answer_options import (
    contained_option,
    equal_options,
    letter_is_option_text,
    option_starting_with_letter,
    reads_lower_case,
)
from clineval.mcq.answer_patterns import AnswerPatterns, Phrase, boxed, conditional, letter_of, patterns
from clineval.text.normalize import normalize_text

SHORT_ANSWER_CHARS = 200
_SPAN_CHARS = 200
_LABEL_STRIP = " \t.):]*"


@dataclass(frozen=True, slots=True)
class Extraction:
    """The letter found (None if none could be), how it was found, and the text it came from."""

    letter: str | None
    method: str
    span: str | None = None

    @property
    def parsed(self) -> bool:
        return self.letter is not None


UNPARSED = "unparsed"
_EMPTY = Extraction(None, UNPARSED, None)
# method names by evidence kind: (inside an answer field, in a short plain answer)
_METHODS = {
    "letter": ("answer_field_letter", "bare_letter"),
    "option_text": ("answer_field_option_text", "option_text"),
    "phrase": ("answer_field_phrase", "answer_phrase"),
    "mention": ("answer_field_phrase", "option_mention"),
    "bold": ("answer_field_phrase", "bold_letter"),
}


def _answer_field(text: str) -> str | None:
    """Value of the last ``"answer_choice"`` / ``"answer"`` / ``"final_answer"`` JSON-like field."""
    end = len(text)
    while (i := text.rfind("answer", 0, end)) > 0:
        end = i
        start = i - 7 if text.startswith("final_", i - 6) else i - 1
        if start >= 0 and (m := _FIELD.match(text, start)):
            raw = m.group(1) if m.group(1) is not None else m.group(2)
            if "\\" in raw:
                raw = _unescape(raw)
            return raw.strip()
    return None


_FIELD = re.compile(
    r"""["'](?:final_)?answer(?:_choice)?["']\s*:\s*(?:"((?:[^"\\]|\\.)*)"?|'((?:[^'\\]|\\.)*)'?)"""
)


def _unescape(raw: str) -> str:
    try:
        value = json.loads(f'"{raw}"')
    except ValueError:
        return raw.replace("\\n", "\n").replace('\\"', '"').replace("\\'", "'")
    return value if isinstance(value, str) else raw


def _after_thinking(text: str) -> str:
    """The text after a reasoning model's last ``</think>``, when an answer follows it."""
    _head, sep, tail = text.rpartition("</think>")
    return tail if sep and tail.strip() else text


def _conflicts(rest: str, letter: str, pats: AnswerPatterns) -> bool:
    """Does the text after a letter name a different letter ("A or B", "A/B", "A. x, C. y")?"""
    return any(other != letter for other in pats.others(rest.lstrip(_LABEL_STRIP)))


def _from_value(value: str, options: Mapping[str, str], pats: AnswerPatterns, field: bool) -> Extraction:
    """Read an answer field or a short plain answer (steps a-g of the module docstring)."""
    which = 0 if field else 1
    span = value[:_SPAN_CHARS]
    if not value or (not field and len(value) == 1 and value.islower()):
        return Extraction(None, UNPARSED, span or None)  # a lone "a" in prose is the article
    if "\\boxed" in value and (box := _from_boxed(value, options, pats)) is not None:
        return box
    if value not in options:  # a bare letter is read below (and is ambiguous if it is another option's text)
        for key, text in options.items():
            if text == value:
                return Extraction(key, _METHODS["option_text"][which], span)
    value_norm: str | None = None
    if m := pats.lead.match(value):
        letter = letter_of(m)
        rest = value[m.end() :]
        if _conflicts(rest, letter, pats):
            value_norm = normalize_text(value)
            own = options.get(letter)
            if own is not None and normalize_text(rest.lstrip(_LABEL_STRIP)) == normalize_text(own):
                return Extraction(letter, _METHODS["letter"][which], span)
            keys = equal_options(value_norm, options)
            if len(keys) == 1:
                return Extraction(keys[0], _METHODS["option_text"][which], span)
            found = _last_phrase(value, pats, options)  # "Option A: incorrect. Option C: correct."
            if found is not None and found[0] in options:
                return Extraction(found[0], _METHODS["phrase"][which], span)
            return Extraction(None, UNPARSED, span)
        if letter in options:
            if not rest.strip(_LABEL_STRIP) and letter_is_option_text(letter, options):
                return Extraction(None, UNPARSED, span)
            found = _last_phrase(rest, pats, options)  # "(A) x (B) y (C) z  Answer: C": the statement wins
            if found is not None and found[0] in options and found[0] != letter:
                return Extraction(found[0], _METHODS["phrase"][which], span)
            return Extraction(letter, _METHODS["letter"][which], span)
    if value_norm is None:
        value_norm = normalize_text(value)
    keys = equal_options(value_norm, options)
    if len(keys) == 1:
        return Extraction(keys[0], _METHODS["option_text"][which], span)
    if (found := _last_phrase(value, pats, options)) is not None:
        if found[0] in options:
            return Extraction(found[0], _METHODS["phrase"][which], span)
        return Extraction(None, UNPARSED, span)
    mentions = pats.mentions(value)
    if mentions:
        only = mentions.pop() if len(mentions) == 1 else ""
        if only in options:
            return Extraction(only, _METHODS["mention"][which], span)
        return Extraction(None, UNPARSED, span)
    bolds = set(pats.bold.findall(value))
    if len(bolds) == 1 and (letter := bolds.pop()) in options:
        return Extraction(letter, _METHODS["bold"][which], span)
    if not bolds and (contained := contained_option(value_norm, options)) is not None:
        return Extraction(contained, _METHODS["option_text"][which], span)
    return Extraction(None, UNPARSED, span)


def _opens_list(text: str, phrase: Phrase, pats: AnswerPatterns) -> bool:
    """ "each answer choice:\\n\\nA. ..." introduces a list of options; it is not an answer."""
    return "\n" in phrase.text and any(x != phrase.letter for x in pats.line_label.findall(text, phrase.end))


def _last_phrase(text: str, pats: AnswerPatterns, options: Mapping[str, str]) -> tuple[str, str, int] | None:
    """(letter, phrase, start) of the last answer statement; letter "" if it names several or competes."""
    found = [
        p
        for p in pats.find_phrases(text)
        if not conditional(text, p.start) and not _opens_list(text, p, pats)
    ]
    if not found:
        return None
    last = found[-1]
    if last.kind == "correct" and (
        " also " in last.text or len({p.letter for p in found if p.kind == "correct"}) > 1
    ):
        return "", last.text, last.start  # "option B is correct ... option D is also correct"
    if last.kind != "correct" and (
        key := option_starting_with_letter(text[last.end - 1 :][:_SPAN_CHARS], last.letter, options)
    ):
        return key, last.text, last.start
    rest = text[last.end : last.end + _SPAN_CHARS].split("\n", 1)[0].split("\\n", 1)[0]
    return ("" if _conflicts(rest, last.letter, pats) else last.letter), last.text, last.start


def _from_boxed(text: str, options: Mapping[str, str], pats: AnswerPatterns) -> Extraction | None:
    """Read ``\\boxed{...}`` answers (step 2); None when the text has no closed box."""
    boxes = boxed(text)
    if not boxes:
        return None
    letters = set()
    for start, end, content in boxes:
        span = text[start:end][:_SPAN_CHARS]
        if "\\boxed" in content:
            return Extraction(None, UNPARSED, span)
        found = _from_value(content, options, pats, field=True)
        if found.letter is None:
            return Extraction(None, UNPARSED, span)
        letters.add(found.letter)
    after = text[boxes[-1][1] :]
    if len(letters) == 1 and all(p.letter in letters for p in pats.find_phrases(after)):
        return Extraction(letters.pop(), "boxed", span)
    return Extraction(None, UNPARSED, span)


def _from_long(text: str, options: Mapping[str, str], pats: AnswerPatterns) -> Extraction:
    """Read a long plain text (step 3 of the module docstring)."""
    found = _last_phrase(text, pats, options)
    by_text = text_phrase(text, options, pats)
    if by_text is not None and (found is None or by_text[2] > found[2]):
        return Extraction(by_text[0], "answer_phrase_text", by_text[1])
    if found is not None:
        letter, phrase, _ = found
        return (
            Extraction(letter, "answer_phrase", phrase)
            if letter in options
            else Extraction(None, UNPARSED, phrase)
        )
    bolds = set(pats.bold.findall(text))
    if bolds:
        letter = bolds.pop() if len(bolds) == 1 else ""
        return Extraction(letter, "bold_letter", f"**{letter}**") if letter in options else _EMPTY
    first_line = text.lstrip().split("\n", 1)[0]
    if len(first_line) <= 120 and (m := pats.lead.match(first_line)):
        letter = letter_of(m)
        labels = set(pats.line_label.findall(text))
        if letter in options and not _conflicts(first_line[m.end() :], letter, pats) and labels <= {letter}:
            return Extraction(letter, "leading_letter", first_line[:_SPAN_CHARS])
    if (concluded := conclusion(text, options, pats)) is not None:
        return Extraction(concluded[0], "conclusion", concluded[1])
    return _EMPTY


def extract_choice(text: str | None, options: Mapping[str, str]) -> Extraction:
    """Find the single option letter ``text`` answers with; ``letter=None, method="unparsed"`` if none."""
    if not text:
        return _EMPTY
    pats = patterns(tuple(options), reads_lower_case(options))
    text = _after_thinking(text)
    field = _answer_field(text) if "answer" in text else None
    if field is not None:
        return _from_value(field, options, pats, field=True)
    if "\\boxed" in text and (box := _from_boxed(text, options, pats)) is not None:
        return box
    stripped = text.strip()
    if len(stripped) <= SHORT_ANSWER_CHARS:
        return _from_value(stripped, options, pats, field=False)
    return _from_long(text, options, pats)
