"""The regular expressions of multiple-choice answer extraction (used by ``answer_extraction``).

One ``AnswerPatterns`` per option-letter set, compiled once. Upper-case letters A-H are always
recognised (so "E" on a four-option question is seen, and then refused). Lower-case letters ("(b)",
"Final answer: c)") are recognised only where a marker makes them letters: a bracket, a closing
parenthesis, or punctuation / end of line after them; never "a" followed by a word (the article).
Patterns for lower-case letters are not built when an option's own text is a single letter (graph
labels such as options "b", "c"), where "(c)" could name either.

``boxed(text)`` finds LaTeX ``\\boxed{...}`` answers (the usual form of reasoning models) and returns
their contents with ``\\text{}`` / ``\\textbf{}`` / ``\\mathrm{}`` wrappers and ``$`` removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

ALWAYS_LETTERS = frozenset("ABCDEFGH")

# After a lower-case letter: end of text/line, a closing bracket, bold, punctuation not followed by a
# letter ("e.g." is not a letter "e"), or a verb ("option b is ...").
_LOWER_GUARD = r"(?=\s*$|\s*\n|[)\]*]|[.,;:!?](?![^\W\d_])|\s+(?:is|was|would|seems|appears|because|as)\b)"
_OPT = r"(?i:option|choice)"
_IS_CORRECT = (
    r"(?i:is\s+(?:also\s+)?(?:the\s+)?(?:(?:correct|right|best|most\s+likely|final)(?:\s+(?:answer|option|choice|one))?"
    r"|answer)(?=\s*(?:$|[.,;:!?)\n*]|\b(?:because|as|since|here|and|but|so)\b)))"
)
_ADVERB = r"(?:\s+(?i:definitely|clearly|most\s+likely|likely|probably|therefore|thus))?"


def _letter(upper: str, lower: str) -> str:
    """One letter as two groups: upper-case, or lower-case followed by a marker."""
    if not lower:
        return rf"([{upper}])()"
    return rf"(?:([{upper}])|([{lower}]){_LOWER_GUARD})"


def letter_of(match: re.Match[str], first: int = 1) -> str:
    """The letter of a match from ``_letter`` groups starting at ``first`` (upper-cased)."""
    for group in match.groups()[first - 1 :]:
        if group:
            return group.upper()
    return ""


@dataclass(frozen=True, slots=True)
class Phrase:
    """An answer statement found in a text: its letter ("" if it names several), kind, and position."""

    letter: str
    kind: str  # answer | choose | correct | correction
    start: int
    end: int
    text: str


class AnswerPatterns:
    """Regexes for one set of option letters (see ``patterns``)."""

    __slots__ = ("bold", "lead", "line_label", "lower", "more", "phrases", "text_phrase", "weak")

    def __init__(self, letters: str, lower: bool) -> None:
        self.lower = lower
        X = _letter(letters, letters.lower() if lower else "")
        self.lead = re.compile(
            rf"""[\s*_"'`(\[]*(?:{_OPT}\b\s*[:.\-]?\s*)?[(\[]?{X}"""
            rf"""(?=$|[.):,\]/*"'>&+;]|\s*\n|\s+(?:[-–—(]|(?i:or|and)\b))"""
        )
        self.more = re.compile(
            rf"""(?:[,;/&>+]|(?:^|\s)(?i:or|and)\s|\n|\.\s)\s*(?i:(?:possibly|perhaps|maybe|probably)\s+)?"""
            rf"""(?:{_OPT}\s*)?[(\[]?{X}"""
            rf"""(?=$|[.):,\]/]|\s*(?:$|[,/&>]|(?i:or|and)\b))"""
        )
        end = r"(?![\w'’\-])"
        self.phrases: tuple[tuple[str, re.Pattern[str]], ...] = (
            (
                "answer",
                re.compile(
                    rf"""(?i:\b(?:answer(?:\s+(?:choice|option)|\s+to\s+(?:the|this)\s+question)?(?:\s+here)?"""
                    rf"""|(?:correct|right|best|final)\s+(?:option|choice)|my\s+(?:final\s+)?(?:choice|pick|selection))"""
                    rf"""(?:\s*(?:is|would\s+be|will\s+be|should\s+be|[:=\-–：]))+){_ADVERB}\s*(?:{_OPT}\s*)?"""
                    rf"""[*(\["'$\s]*{X}{end}"""
                ),
            ),
            (
                "choose",
                re.compile(
                    rf"""(?i:\b(?:I|we)(?:\s+would|'d|\s+will|'ll|\s+should|\s+must)?(?:\s+\w+ly)?\s+"""
                    rf"""(?:choose|select|pick|go\s+with|opt\s+for)\s+(?:for\s+)?(?:option\s+|answer\s+|choice\s+)?"""
                    rf"""|\b(?:I|we)\s+(?:think|believe|guess)\s+(?:that\s+)?it(?:'s|\s+is|\s+would\s+be)\s+)"""
                    rf"""[*(\["'\s]*{X}{end}"""
                ),
            ),
            (
                "correct",
                re.compile(
                    rf"""(?:(?i:\b{_OPT}\s+)[(\[]?{X}[)\]]?|\({X}\)|(?:^|(?<=[\n.!?:;])|(?i:\b(?:so|thus|hence|therefore),?))"""
                    rf"""\s*[*]*{X}[*]*)\s+{_IS_CORRECT}"""
                ),
            ),
            (
                "correct",
                re.compile(
                    rf"""(?i:\b{_OPT}\s+)[(\[]?{X}[)\]]?\s*[:\-–]\s*(?i:(?:the\s+)?correct(?:\s+answer)?)"""
                    r"""(?=\s*(?:$|[.,;!\n]))"""
                ),
            ),
            (
                "correction",
                re.compile(
                    rf"""(?i:\banswer\s+is\s+not\s+(?:option\s+)?)[(\[]?[{letters}][)\]]?\s*[,;:.]?\s*"""
                    rf"""(?i:but\s+(?:rather\s+)?|rather\s+|instead\s+|it\s*(?:is|'s|would\s+be)\s+)"""
                    rf"""(?:(?i:option)\s+)?[(\[]?{X}{end}"""
                ),
            ),
        )
        self.text_phrase = re.compile(
            r"""(?i:\b(?:answer|(?:correct|right|best|final)\s+(?:option|choice))"""
            r"""(?:\s*(?:is|would\s+be|will\s+be|should\s+be|[:=\-–：]))+)(?P<rest>[^\n]{1,200})"""
        )
        self.weak = re.compile(rf"""(?i:\b(?:option|choice))\s*[:\-]?\s*[(\[]?{X}{end}|\({X}\)""")
        self.bold = re.compile(
            rf"""\*\*\s*(?:(?i:option|answer)\s*[:\-]?\s*)?\(?([{letters}])(?:\*\*|[.):]|\s*\*\*)"""
        )
        self.line_label = re.compile(rf"""\n\s*\**[(\[]?([{letters}])[.)\]:]""")

    def mentions(self, text: str) -> set[str]:
        """Letters named as "option B" / "(B)"."""
        return {letter_of(m) for m in self.weak.finditer(text)}

    def others(self, rest: str) -> set[str]:
        """Letters named after a first one ("A or B", "A/B", "A. x, C. y")."""
        return {letter_of(m) for m in self.more.finditer(rest)}

    def find_phrases(self, text: str) -> list[Phrase]:
        """Every answer statement in ``text``, in order of where it ends."""
        found = [
            Phrase(letter_of(m), kind, m.start(), m.end(), m.group(0).strip())
            for kind, pattern in self.phrases
            for m in pattern.finditer(text)
        ]
        return sorted(found, key=lambda p: (p.end, p.start))


@lru_cache(maxsize=256)
def patterns(keys: tuple[str, ...], lower: bool) -> AnswerPatterns:
    """The compiled patterns for option ``keys`` (single upper-case letters); ``lower``: read a-h too."""
    for key in keys:
        if len(key) != 1 or not ("A" <= key <= "Z"):
            raise ValueError(f"option keys must be single upper-case letters, got {key!r}")
    return AnswerPatterns("".join(sorted(ALWAYS_LETTERS.union(keys))), lower)


_BOXED = re.compile(r"\\boxed\s*\{")
_WRAPPER = re.compile(r"\\(?:text|textbf|textrm|mathrm|mathbf|mbox|bf)\s*\{([^{}]*)\}")
_BOXED_NOISE = re.compile(r"^[\s$]+|[\s$]+$")


def boxed(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of every ``\\boxed{...}`` (braces balanced), content unwrapped."""
    found = []
    for m in _BOXED.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth:
            continue  # unclosed: truncated output
        inner = text[m.end() : i - 1]
        for _ in range(3):  # \text{\textbf{C}}
            inner = _WRAPPER.sub(r"\1", inner)
        found.append((m.start(), i, _BOXED_NOISE.sub("", inner.replace("\\,", " ").replace("\\ ", " "))))
    return found


_CONDITION = re.compile(r"(?i:\b(?:if|unless|whether|assuming|suppose)\b)")


def conditional(text: str, start: int) -> bool:
    """Is the statement at ``start`` inside a conditional sentence ("If X, the answer would be B")?"""
    begin = max(text.rfind(stop, 0, start) for stop in (".", "!", "?", "\n", "\\n"))
    return bool(_CONDITION.search(text, begin + 1, start))
