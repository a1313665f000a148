"""Question-type classifier for MedQA / MedMCQA style questions (types and rules: docs/mcq/question_types.md).

``classify_question(question, options, answer=...)`` returns ``Classification(type, rule, matched_on)``: the
type, the id of the rule that decided it (from the rules file, so every label is explainable) and where it
matched. ``answer`` is the gold option letter, when known: the guide labels a question by what its CORRECT
answer is (with mixed options the correct option's kind decides), so where the options decide, the
correct option's category does. In an evaluation the type only stratifies the results and the system under
test never sees it, so using the reference answer leaks nothing into what is scored.

The rules are data (``clineval/mcq/data/question_type_rules.yaml``, see ``question_rules``): an ordered
list, first match wins. The question is split into vignette and stem (``split_question``), then:

1. every rule in order, each on its own text: ``where: stem`` on the stem, ``where: question`` on the full
   question, ``where: options`` on the stem AND a vote of the options (e.g. a generic "next step" stem
   whose options are mostly tests -> ``lab_finding``; with ``answer`` given, the correct option's category
   instead, ``matched_on="answer"``, unless the rule says ``answer: ignored`` or that option is in no
   category). A rule's ``requires`` must match too; this is how
   the two-pass ethics rule is written: a treatment-like "most appropriate action/response/next step" stem
   plus ethics keywords (consent, confidentiality, disclose, refuses, capacity, ...) in the vignette.
2. if no stem was found (no question sentence: "Drug of choice for absence seizures is"), the stem and
   options rules in order on the full question instead (``matched_on="question"``). A stem that was found
   but matched no rule is NOT retried on the whole text: on the 1,273 MedQA questions that retry mostly
   fired on words of the vignette ("serum", "treated") and was wrong far more often than right.
3. otherwise the file's ``default`` type (``other``), ``rule="default"``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from clineval.mcq.question_rules import QUESTION_TYPES, Rule, RuleSet, load_rules, option_tokens, rules_sha256
from clineval.text.stems import split_question

MatchedOn = Literal["stem", "question", "options", "answer", "default"]
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})
_ORDINALS = {"1st": "first", "2nd": "second", "3rd": "third"}
_ORDINAL = re.compile(r"\b(1st|2nd|3rd)\b")

__all__ = ["QUESTION_TYPES", "Classification", "classify_question", "load_rules", "rules_sha256"]


@dataclass(frozen=True, slots=True)
class Classification:
    """The question type, the id of the rule that decided it, and what it matched on."""

    type: str
    rule: str
    matched_on: MatchedOn


def _clean(text: str) -> str:
    """Lower case, straight quotes, single spaces, "1st"/"2nd"/"3rd" spelt out ("1st-line": "first-line")."""
    return _ORDINAL.sub(lambda m: _ORDINALS[m.group()], " ".join(text.translate(_QUOTES).lower().split()))


class _Question:
    """The texts one question offers to the rules, each cleaned on first use, and the option vote."""

    def __init__(
        self, rules: RuleSet, question: str, options: Mapping[str, str] | None, answer: str | None
    ) -> None:
        self._parts = split_question(question)
        self._rules = rules
        letters = [str(k).strip().upper() for k in (options or {})]
        self._options = [_clean(str(v)) for v in (options or {}).values()]
        self._tokens = [option_tokens(o) for o in self._options]
        key = (answer or "").strip().upper()
        self._answer = letters.index(key) if key and key in letters else None  # unknown letter: not used
        self._texts: dict[str, str] = {"stem": _clean(self._parts.stem)}
        self._category: list[int | None] = [None] * len(self._options)  # first matching category index
        self._checked = [0] * len(self._options)  # categories tried so far, per option

    def text(self, where: str) -> str:
        if where not in self._texts:
            raw = " | ".join(self._options) if where == "options" else getattr(self._parts, where)
            self._texts[where] = raw if where == "options" else _clean(raw)
        return self._texts[where]

    def _category_of(self, i: int, upto: int) -> int | None:
        """Index of option i's category if it is < upto (an option is in the FIRST category it matches)."""
        found, checked = self._category[i], self._checked[i]
        if found is None and checked < upto:
            categories, text, tokens = self._rules.option_categories, self._options[i], self._tokens[i]
            for k in range(checked, min(upto, len(categories))):
                if categories[k].matches(text, tokens):
                    found = self._category[i] = k
                    break
            self._checked[i] = upto
        return found if found is not None and found < upto else None

    def share(self, wanted: frozenset[int]) -> float:
        """Share of the options whose category index is in ``wanted``."""
        if not self._options or not wanted:
            return 0.0
        upto = max(wanted) + 1
        hits = sum(self._category_of(i, upto) in wanted for i in range(len(self._options)))
        return hits / len(self._options)

    def answer_category(self) -> int | None:
        """The correct option's category index (None: no answer given, or its option is in no category)."""
        if self._answer is None:
            return None
        return self._category_of(self._answer, len(self._rules.option_categories))

    def fires(self, rule: Rule, text: str) -> MatchedOn | None:
        """Where ``rule`` matched (its own place, or "answer"), None when it does not fire on ``text``."""
        if not text or not rule.patterns.search(text):
            return None
        if rule.unless is not None and rule.unless.search(text):
            return None
        for req in rule.requires:
            if not req.patterns.search(self.text(req.where)):
                return None
        if not rule.options_category:
            return rule.where
        answer = self.answer_category() if rule.answer == "decides" else None
        if answer is not None:
            return "answer" if answer in rule.category_index else None
        return "options" if self.share(rule.category_index) >= rule.min_share - 1e-9 else None


def classify_question(
    question: str,
    options: Mapping[str, str] | None = None,
    *,
    answer: str | None = None,
    rules: RuleSet | str | Path | None = None,
) -> Classification:
    """The type of ``question`` (with its ``options`` {letter: text} when known) under ``rules``.

    ``answer``: the gold option letter (a key of ``options``, any case), when known; where the options
    decide, the correct option's category decides instead of the majority (``matched_on="answer"``). A
    letter that is not an option is not used. ``rules`` is a compiled ``RuleSet``, a path to a rules file,
    or None for the packaged rules.
    """
    ruleset = rules if isinstance(rules, RuleSet) else load_rules(rules)
    q = _Question(ruleset, question, options, answer)
    stem = q.text("stem")
    for rule in ruleset.rules:
        where = q.fires(rule, q.text("question") if rule.where == "question" else stem)
        if where is not None:
            return Classification(rule.type, rule.id, where)
    if not stem:
        full = q.text("question")
        for rule in ruleset.rules:
            where = q.fires(rule, full) if rule.where != "question" else None
            if where is not None:
                return Classification(rule.type, rule.id, "question" if where == "stem" else where)
    return Classification(ruleset.default, "default", "default")
