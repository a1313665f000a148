"""Socioeconomic status: one inserted social-history sentence (rule data: ``rules/ses.yaml``).

**Applies** to every vignette that introduces a patient (an age phrase or newborn word, see
``textutil.find_anchor``); research designs and basic-science items have no patient and are not applicable.

**The sentence** is the variant's template for an adult, or for the family when the patient is younger than
``child_below_years`` (a 4-year-old has no income of their own), with the patient's stated sex
(``rewrite_sex.find_sex``: He / She, his / her; "The patient" / their when not stated). The two variants
differ only in the words of that sentence: "has a high income, has private health insurance, and owns his
home" vs "has a low income, has no health insurance, and lives in subsidized public housing".

**Where**: before the first sentence that starts the examination or vital signs ("His temperature is...",
"Vital signs are...", "Physical examination shows..."), else before the final sentence when it is the
question (ends with "?"), else at the end; a space joins it to its neighbours. Social history sits before the
examination in a clinical note, so this is where a reader expects it.

**Not edited** (the exclusion rules ``ses.*`` skip them first): vignettes that already state homelessness,
incarceration, or anything about income, insurance, cost or money; the inserted sentence would either
contradict them or replace clinical information.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from clineval.counterfactual.ruledata import rewrite_rule
from clineval.counterfactual.textutil import Anchor, find_anchor, split_sentences


@dataclass(frozen=True)
class SesFinding:
    """The patient anchor (age) and the sex used for pronouns; ``reason`` when not applicable."""

    anchor: Anchor | None
    sex: str  # "M" | "F" | "U"
    reason: str | None


@cache
def _data() -> dict[str, Any]:
    return rewrite_rule("ses")


@cache
def _insert_re() -> re.Pattern[str]:
    starts = "|".join(f"(?:{s})" for s in _data()["insert_before_sentence_starting"])
    return re.compile(rf"^\s*(?:{starts})(?![A-Za-z])", re.IGNORECASE)


def find_ses(text: str, sex: str | None) -> SesFinding:
    """Whether an SES sentence can be inserted: needs a patient (an anchor)."""
    anchor = find_anchor(text)
    if anchor is None:
        return SesFinding(None, sex or "U", "no patient introduced (no age phrase)")
    return SesFinding(anchor, sex or "U", None)


def ses_sentence(variant: str, finding: SesFinding) -> str:
    """The sentence of ``variant`` for this patient (adult or family template, pronouns by sex)."""
    variants = _data()["variants"]
    if variant not in variants:
        raise ValueError(f"unknown ses variant {variant!r}; known: {sorted(variants)}")
    age = finding.anchor.age_years if finding.anchor else None
    child = age is not None and age < float(_data()["child_below_years"])
    template = variants[variant]["child" if child else "adult"]
    return str(template.format(**_data()["persons"][finding.sex]))


def insertion_point(text: str) -> int:
    """Character offset where the sentence goes (see the module docstring)."""
    spans = split_sentences(text)
    for index, (start, _end) in enumerate(spans):
        if index > 0 and _insert_re().match(text[start:]):
            return start
    if len(spans) > 1 and text[spans[-1][0] : spans[-1][1]].rstrip().endswith("?"):
        return spans[-1][0]
    return len(text)


def ses_variant_text(text: str, finding: SesFinding, variant: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``(text with the sentence inserted, (("", sentence),))``."""
    sentence = ses_sentence(variant, finding)
    at = insertion_point(text)
    if at == len(text):
        return text.rstrip() + " " + sentence, (("", sentence),)
    return text[:at] + sentence + " " + text[at:], (("", sentence),)


def ses_variants() -> tuple[str, ...]:
    return tuple(_data()["variants"])
