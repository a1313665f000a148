"""Reading the answer from long free text that states it in words (GPT-4 / GPT-3.5 reasoning).

Two readings, both measured on the published MIRAGE reasoning texts (the answer field removed, the
field's letter as the reference; see ``docs/mcq/answer_extraction.md``):

- ``text_phrase``: the last "the answer is <text>" statement whose text names exactly one option
  ("Therefore, the answer is cisplatin."); conditional ("If ..., the answer would be no") and hedged
  ("either X or Y") statements name none;
- ``conclusion``: the text's last sentence, when it names exactly one option, either as a letter with
  that option's own text after a verb ("... is A. Preterm labor") or, when it draws the conclusion
  ("Therefore", "Thus", "Based on ..."), as ``(Option C)`` or the option's text, with no word that
  brings in a second answer or a negation ("not", "or", "also", "but", "than", ...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from clineval.mcq.answer_options import contained_option, labelled_with_own_text, names_an_option
from clineval.mcq.answer_patterns import AnswerPatterns, conditional
from clineval.text.normalize import normalize_text

_SPAN_CHARS = 200
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)\s+(?=[A-Z(*\"'])|\n+|\\n")
_CONCLUSION = re.compile(
    r"^[\W_]*(?i:therefore|thus|hence|so|in\s+conclusion|in\s+summary|overall|consequently|based\s+on"
    r"|given|to\s+summari[sz]e)\b"
)
# words that make a sentence name more than one answer, or none
_DOUBT = frozenset(
    ["not", "no", "incorrect", "wrong", "false", "unlikely", "except", "neither", "nor", "none", "cannot",
     "t", "either", "or", "both", "all", "and", "also", "but", "than", "excluded", "ruled"]
)  # fmt: skip
_NOT_THIS = frozenset(["not", "no", "neither", "nor", "either", "or", "than", "except", "rather", "instead"])
_VERB = frozenset(["is", "be", "answer", "option", "choice"])
_LABEL = re.compile(r"(?<![\w'])([A-H])[.)]\s+")


def text_phrase(text: str, options: Mapping[str, str], pats: AnswerPatterns) -> tuple[str, str, int] | None:
    """(letter, phrase, start) of the last "the answer is <option text>" statement naming one option."""
    for m in reversed(list(pats.text_phrase.finditer(text))):
        rest = normalize_text(_SENTENCE_BREAK.split(m.group("rest"), 1)[0])
        if not names_an_option(rest, options):
            continue  # "the answer is supported by ...": not a statement of the answer
        key = contained_option(rest, options)
        if key is None or set(rest.split()) & _DOUBT or conditional(text, m.start()):
            return None
        return key, m.group(0)[:_SPAN_CHARS].strip(), m.start()
    return None


def conclusion(text: str, options: Mapping[str, str], pats: AnswerPatterns) -> tuple[str, str] | None:
    """(letter, sentence) when the last sentence names exactly one option (see the module docstring)."""
    sentences = [s for s in _SENTENCE_BREAK.split(text.strip().rstrip("\"'}").strip()) if s.strip()]
    last = sentences[-1].strip() if sentences else ""
    labels = [(m.group(1), m.start(), m.end()) for m in _LABEL.finditer(last)]
    labelled, mentions = labelled_with_own_text(last, options, labels), pats.mentions(last)
    if len(labelled) == 1 and not mentions - set(labelled) and len({x for x, _, _ in labels}) == 1:
        letter, at = next(iter(labelled.items()))
        before = normalize_text(last[:at]).split()  # "... is A. Preterm labor", not a list item "A. ..."
        if before and before[-1] in _VERB and not set(before) & _NOT_THIS and letter in options:
            return letter, last[:_SPAN_CHARS]
    if not _CONCLUSION.match(last) or set(normalize_text(last).split()) & _DOUBT:
        return None
    named = mentions | set(labelled)
    if (key := contained_option(normalize_text(last), options)) is not None:
        named.add(key)
    if len(named) == 1 and (letter := named.pop()) in options:
        return letter, last[:_SPAN_CHARS]
    return None
