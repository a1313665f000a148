"""The question-type rules file: an ordered list of regex rules, loaded and compiled once.

Format (YAML; the packaged file is ``clineval/mcq/data/question_type_rules.yaml``)::

    version: 3                     # bump on every change; recorded with the sha256 in run provenance
    default: other                 # the type when no rule matches
    option_categories:             # an option is in the FIRST category that matches it
      - name: drug                 # words: whole words / phrases (a set lookup; a word is a run of [a-z0-9]);
        words: [aspirin, folic acid]   # suffixes: word endings; patterns: regexes (at least one of the 3)
        suffixes: [olol, pril]
        patterns: ['\\bbeta.blockers?\\b']
    rules:                         # first match wins
      - id: ethics-dilemma
        type: ethics
        where: stem                # stem | question | options
        patterns: ['most appropriate (action|response)']   # any one must match (see Matching)
        unless: ['...']            # optional: none of these may match the same text
        requires:                  # optional: each must also match its own text (where: stem |
          - {where: vignette, patterns: ['consent', 'confidential']}   # question | vignette | options)
      - id: next-step-tests
        type: lab_finding
        where: options             # patterns are tried on the stem, then the options vote:
        patterns: ['next step']
        options_category: test     # at least min_share of the options are in this category
        min_share: 0.5             # (a list of categories: their shares are added)
        answer: decides            # decides (default) | ignored: see Answer

Matching: the texts are lower-cased, curly quotes straightened and white space collapsed; patterns are
Python regular expressions (ASCII ``\\w``/``\\b``), written in lower case. A rule pattern must match from the
start of a word ('sensitivity' does not fire on "hypersensitivity"); option-category patterns may match
anywhere, so suffixes can be written ('\\B(olol|pril)\\b'). Back-references are not supported (a rule's
patterns are joined into one alternation). Errors in a rules file raise ``ValueError`` naming the file
and the rule.

Answer: given the gold option letter, a ``where: options`` rule with ``answer: decides`` fires iff the
CORRECT option's category is one of its ``options_category`` (guide: with mixed options the correct
answer's kind decides); if that option is in no category, the vote decides. ``answer: ignored``: always vote.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast

from clineval.core.errors import DataFileError
from clineval.core.helpers.safe_yaml import safe_load

QUESTION_TYPES = (
    "diagnostic",
    "treatment",
    "mechanism",
    "lab_finding",
    "pharmacology",
    "epidemiology",
    "ethics",
    "anatomy",
    "other",
)
# The packaged rules file's version and sha256; a test keeps them equal to the file, so an edit of the rules
# fails until both are updated (bump the version in the file too).
QUESTION_TYPE_RULES_VERSION = "3"
QUESTION_TYPE_RULES_SHA256 = "245b2bf57f9a8a4074e7d7eb83ff35c56c8f1199c5946993d322a40aa6ea773a"

RulePlace = Literal["stem", "question", "options"]
RULE_PLACES = ("stem", "question", "options")
AnswerUse = Literal["decides", "ignored"]
ANSWER_USES = ("decides", "ignored")
REQUIRE_PLACES = ("stem", "question", "vignette", "options")

Matcher = re.Pattern[str]  # a list of patterns compiled as ONE alternation
_UPPER = re.compile(r"(?<!\\)[A-Z]")  # an upper-case letter that is not an escape such as \b, \B, \W
_BACKREF = re.compile(r"\\[1-9]|\(\?P=")
_TOKEN = re.compile(r"[a-z0-9]+")
_RULE_KEYS = set("id type where patterns unless requires options_category min_share answer note".split())
_CATEGORY_KEYS = {"name", "patterns", "words", "suffixes", "note"}  # note: free text, ignored


@dataclass(frozen=True, slots=True)
class Requirement:
    where: str  # stem | question | vignette | options
    patterns: Matcher


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    type: str
    where: RulePlace
    patterns: Matcher
    unless: Matcher | None = None
    requires: tuple[Requirement, ...] = ()
    options_category: tuple[str, ...] = ()
    category_index: frozenset[int] = frozenset()  # positions of options_category in option_categories
    min_share: float = 0.5
    answer: AnswerUse = "decides"


@dataclass(frozen=True, slots=True)
class OptionCategory:
    """A kind of option (test, drug, ...): literal words / phrases and word endings, then regexes."""

    name: str
    patterns: Matcher | None = None
    words: frozenset[str] = frozenset()  # phrases as their tokens joined by one space
    longest: int = 0  # most tokens in a phrase of ``words``
    starts: frozenset[str] = frozenset()  # the first tokens of the phrases of ``words``
    suffixes: tuple[str, ...] = ()

    def matches(self, text: str, tokens: tuple[str, ...]) -> bool:
        """Whether the cleaned option ``text`` (split into ``tokens``, see ``option_tokens``) is in it."""
        if not self.words.isdisjoint(tokens):
            return True
        longest = min(self.longest, len(tokens)) if not self.starts.isdisjoint(tokens) else 1
        for n in range(2, longest + 1):
            if any(" ".join(tokens[i : i + n]) in self.words for i in range(len(tokens) - n + 1)):
                return True
        # a word that is itself a suffix does not count ("olol" alone is not a drug)
        if self.suffixes and any(t.endswith(self.suffixes) and t not in self.suffixes for t in tokens):
            return True
        return self.patterns is not None and self.patterns.search(text) is not None


def option_tokens(text: str) -> tuple[str, ...]:
    """The words of a cleaned option, as ``OptionCategory.words`` and ``suffixes`` see them."""
    return tuple(_TOKEN.findall(text))


@dataclass(frozen=True, slots=True)
class RuleSet:
    """A compiled rules file: ``version`` and ``sha256`` (of the file's bytes) identify it in provenance."""

    version: str
    sha256: str
    default: str
    option_categories: tuple[OptionCategory, ...]
    rules: tuple[Rule, ...]
    source: str


def _compile(raw: Any, where: str, *, word_start: bool = True) -> Matcher:
    """The patterns, each checked on its own, joined into one alternation (one search per rule).

    ``word_start``: a match must begin at the start of a word (not after a letter or digit), so
    ``'sensitivity'`` does not match "hypersensitivity"; it also makes a search about twice as fast.
    """
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw or not all(isinstance(p, str) for p in raw):
        raise ValueError(f"{where}: patterns must be a non-empty list of regular expressions")
    upper = next((p for p in raw if _UPPER.search(p)), None)
    if upper is not None:
        raise ValueError(
            f"{where}: patterns are matched on lower-cased text, write them in lower case: {upper!r}"
        )
    for pattern in raw:
        if _BACKREF.search(pattern):
            raise ValueError(f"{where}: back-references are not supported: {pattern!r}")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{where}: bad regular expression {pattern!r}: {exc}") from exc
    joined = "|".join(f"(?:{p})" for p in raw)
    return re.compile(f"(?<![a-z0-9])(?:{joined})" if word_start else joined, re.ASCII)


def _category(raw: Any, source: str) -> OptionCategory:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ValueError(f"{source}: every option category must be a mapping with a 'name'")
    where = f"{source}: option category {raw['name']!r}"
    lists: dict[str, list[str]] = {}
    for key in ("words", "suffixes"):
        value = raw.get(key) or []
        if not isinstance(value, list) or not all(isinstance(w, str) and w == w.lower() for w in value):
            raise ValueError(f"{where}: {key} must be a list of lower-case words")
        lists[key] = [" ".join(option_tokens(w)) for w in value]
    if not all(lists["words"]) or not all(x.isalnum() for x in lists["suffixes"]):
        raise ValueError(f"{where}: empty words, or a suffix that is not one word ending")
    if set(raw) - _CATEGORY_KEYS or not (raw.get("patterns") or lists["words"] or lists["suffixes"]):
        raise ValueError(f"{where}: needs patterns, words or suffixes (and no other keys)")
    patterns, words = raw.get("patterns"), lists["words"]
    return OptionCategory(
        name=raw["name"],
        patterns=None if patterns is None else _compile(patterns, where, word_start=False),
        words=frozenset(words),
        longest=max((w.count(" ") + 1 for w in words), default=1),
        starts=frozenset(w.split(" ")[0] for w in words if " " in w),
        suffixes=tuple(lists["suffixes"]),
    )


def _rule(raw: Any, source: str, categories: tuple[str, ...]) -> Rule:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        raise ValueError(f"{source}: every rule must be a mapping with an 'id'")
    where = f"{source}: rule {raw['id']!r}"
    unknown = set(raw) - _RULE_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    if raw.get("type") not in QUESTION_TYPES:
        raise ValueError(f"{where}: type must be one of {', '.join(QUESTION_TYPES)}, got {raw.get('type')!r}")
    place = raw.get("where", "stem")
    if place not in RULE_PLACES:
        raise ValueError(f"{where}: where must be one of {', '.join(RULE_PLACES)}, got {place!r}")
    raw_category = raw.get("options_category") or []
    category = (raw_category,) if isinstance(raw_category, str) else tuple(map(str, raw_category))
    if (place == "options") != bool(category) or not set(category) <= set(categories):
        raise ValueError(
            f"{where}: where: options needs an options_category from option_categories (and only it)"
        )
    answer = raw.get("answer", "decides")
    if answer not in ANSWER_USES or ("answer" in raw and place != "options"):
        raise ValueError(f"{where}: answer must be one of {', '.join(ANSWER_USES)}, on a where: options rule")
    requires = []
    for req in raw.get("requires") or []:
        if not isinstance(req, dict) or req.get("where") not in REQUIRE_PLACES:
            raise ValueError(f"{where}: each requirement needs where: {' | '.join(REQUIRE_PLACES)}")
        requires.append(Requirement(req["where"], _compile(req.get("patterns"), where)))
    return Rule(
        id=raw["id"],
        type=raw["type"],
        where=cast(RulePlace, place),
        patterns=_compile(raw.get("patterns"), where),
        unless=None if raw.get("unless") is None else _compile(raw["unless"], where),
        requires=tuple(requires),
        options_category=category,
        category_index=frozenset(i for i, name in enumerate(categories) if name in category),
        min_share=float(raw.get("min_share", 0.5)),
        answer=cast(AnswerUse, answer),
    )


def parse_rules(data: bytes, source: str) -> RuleSet:
    """Compile the rules in ``data`` (the bytes of a rules file; ``source`` names it in errors)."""
    try:  # the packaged rules share pattern lists by alias: allowed, with their expansion bounded
        doc = safe_load(data, path=source, allow_aliases=True)
    except DataFileError as exc:
        raise ValueError(f"not valid YAML: {exc}") from None
    if not isinstance(doc, dict) or "version" not in doc or not isinstance(doc.get("rules"), list):
        raise ValueError(f"{source}: a rules file needs 'version' and a list of 'rules'")
    default = doc.get("default", "other")
    if default not in QUESTION_TYPES:
        raise ValueError(f"{source}: default must be one of {', '.join(QUESTION_TYPES)}")
    categories = tuple(_category(c, source) for c in doc.get("option_categories") or [])
    rules = tuple(_rule(r, source, tuple(c.name for c in categories)) for r in doc["rules"])
    ids = [r.id for r in rules]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{source}: rule ids must be unique")
    return RuleSet(str(doc["version"]), hashlib.sha256(data).hexdigest(), default, categories, rules, source)


@lru_cache(maxsize=1)
def _packaged() -> RuleSet:
    ref = resources.files("clineval.mcq").joinpath("data", "question_type_rules.yaml")
    return parse_rules(ref.read_bytes(), "question_type_rules.yaml")


def load_rules(path: str | Path | None = None) -> RuleSet:
    """The packaged rules (``path=None``, compiled once) or a user's rules file (read on every call)."""
    if path is None:
        return _packaged()
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise ValueError(f"{file}: cannot read the rules file: {exc.strerror}") from exc
    return parse_rules(data, str(file))


def rules_sha256(path: str | Path | None = None) -> str:
    """sha256 of the rules file's bytes (the packaged one by default), for run provenance."""
    return load_rules(path).sha256
