"""The five components of ReasoningQuality (``clineval.quality.reasoning``), as pure functions of text.

Each returns a value in [0, 1] (``evidence_use`` None when there is nothing to cite); its formula is in
its docstring and in ``docs/quality/reasoning_quality.md``. Tokens are ``clineval.text.matching.match_tokens``
(case, accents, punctuation folded; "75mg" -> "75", "mg"); content tokens drop ``STOP_WORDS``
(``clineval.text.stopwords``); stems are Snowball stems.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from clineval.text.matching import fuzzy_match, match_tokens, normalize_for_match, prepare
from clineval.text.stemming import stem
from clineval.text.stopwords import STOP_WORDS, content_tokens


def content_stems(text: str) -> list[str]:
    """Stems of the content tokens of ``text``, in order, duplicates kept."""
    return [stem(t) for t in content_tokens(match_tokens(text))]


def overlap_f1(text: str, reference: str) -> float:
    """SQuAD-style token F1 (Rajpurkar et al. 2016, the official evaluation script) over content stems.

    With P = content-stem multiset of ``text``, R = that of ``reference`` and c = |P ∩ R| (multiset
    intersection): precision = c/|P|, recall = c/|R|, F1 = 2·precision·recall / (precision + recall);
    0 when c = 0. When either side has no content token: 1.0 if both are empty, else 0.0 (as SQuAD).
    """
    pred, ref = Counter(content_stems(text)), Counter(content_stems(reference))
    if not pred or not ref:
        return 1.0 if not pred and not ref else 0.0
    common = sum((pred & ref).values())
    if common == 0:
        return 0.0
    precision, recall = common / sum(pred.values()), common / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


# --- structure --------------------------------------------------------------------------------------
_NUMBERED = re.compile(r"(?m)^\s*(?:\(?\d{1,2}[.)]|[-*•])\s+\S")
_STEP_WORD = re.compile(r"(?i)\bstep\s*\d+\b|\bstep\s+(?:one|two|three)\b")
_FIRST = re.compile(r"(?i)\bfirst(?:ly)?\b")
_THEN = re.compile(r"(?i)\b(?:second(?:ly)?|then|next|third(?:ly)?|finally|subsequently|lastly)\b")
DIFFERENTIAL_MARKERS = re.compile(
    r"(?i)\b(?:differential|versus|vs\.?|rule[sd]? out|less likely|unlikely|alternatives?|alternatively"
    r"|other possibilit(?:y|ies)|more likely than|distinguish(?:es|ed)? from|other candidates?)\b"
)
CONCLUSION_MARKERS = re.compile(
    r"(?i)\b(?:therefore|thus|hence|most likely|in conclusion|final diagnosis|in summary|to conclude"
    r"|we conclude|leading diagnosis|best explain(?:s|ed)?|overall)\b"
)


@dataclass(frozen=True, slots=True)
class Structure:
    """Which of the three structural elements the text has, and ``value`` = their fraction."""

    steps: bool
    differential: bool
    conclusion: bool

    @property
    def value(self) -> float:
        return (self.steps + self.differential + self.conclusion) / 3


def structure_parts(text: str, n_candidates: int = 0) -> Structure:
    """The three elements of ``structure`` (see there)."""
    steps = (
        len(_NUMBERED.findall(text)) >= 2
        or _STEP_WORD.search(text) is not None
        or ((m := _FIRST.search(text)) is not None and _THEN.search(text, m.end()) is not None)
    )
    differential = n_candidates >= 2 or DIFFERENTIAL_MARKERS.search(text) is not None
    return Structure(steps, differential, CONCLUSION_MARKERS.search(text) is not None)


def structure(text: str, n_candidates: int = 0) -> float:
    """``(steps + differential + conclusion) / 3``, each 0 or 1.

    * steps: at least two numbered or bulleted lines ("1. ...", "2) ...", "- ..."), a "step N" marker, or
      "first" followed later by "second / then / next / finally / lastly";
    * differential: ``n_candidates`` >= 2 (the structured differential lists several diagnoses) or a
      differential marker: "differential", "versus", "vs", "rule(d) out", "less likely", "unlikely",
      "alternative(s)", "other possibilities", "more likely than", "distinguish from";
    * conclusion: "therefore", "thus", "hence", "most likely", "in conclusion", "final diagnosis",
      "in summary", "to conclude", "leading diagnosis", "best explains", "overall".
    """
    return structure_parts(text, n_candidates).value


# --- evidence use ----------------------------------------------------------------------------------
_SALIENT_VALUE = re.compile(
    r"(?i)([a-z][a-z \-]{2,40}?)\s*(?:of|is|was|at|=|:)?\s*(\d[\d,./]*)\s*"
    r"(mg/dl|g/dl|mmol/l|meq/l|mg/l|ng/ml|pg/ml|u/l|iu/l|mm ?hg|/mm3|/min|mm/h|%|°[cf]|kg|cm)"
)
_ABNORMAL = re.compile(
    r"(?i)\b(?:elevated|increased|decreased|reduced|low|high|positive|absent|enlarged|tender|swollen"
    r"|abnormal|diminished|prolonged)\b(?:\s+[a-z\-]+){1,3}"
)


def salient_facts(vignette: str) -> list[str]:
    """Facts of a vignette a reasoning should use when the case has no annotated findings: each value with
    a unit and the words before it ("creatinine 4.2 mg/dL"), and each abnormal finding ("elevated", "low",
    "positive", "tender"... with the next one to three words). Distinct (normalised), in order."""
    facts = [" ".join(m.groups()) for m in _SALIENT_VALUE.finditer(vignette)]
    facts += [m.group(0) for m in _ABNORMAL.finditer(vignette)]
    seen: dict[str, str] = {}
    for fact in facts:
        seen.setdefault(normalize_for_match(fact), fact.strip())
    return [f for key, f in seen.items() if key]


def cited_findings(text: str, findings: Sequence[str], threshold: float = 0.6) -> list[bool]:
    """For each finding, whether ``text`` cites it: ``fuzzy_match(text, finding, threshold)``."""
    prepared = prepare(text)
    return [fuzzy_match(prepared, f, threshold) for f in findings]


def distinct_findings(findings: Sequence[str]) -> list[str]:
    """Findings with content, one per normalised form, in order."""
    seen: dict[str, str] = {}
    for finding in findings:
        key = normalize_for_match(finding)
        if key and not set(key.split()) <= STOP_WORDS:
            seen.setdefault(key, finding)
    return list(seen.values())


def evidence_use(text: str, case_findings: Sequence[str], threshold: float = 0.6) -> float | None:
    """``|{f in F : text cites f}| / |F|`` over the distinct findings F with content (None if F is empty).

    "cites" is ``clineval.text.matching.fuzzy_match(text, f, threshold)``: f occurs in the text as whole
    words, or every content stem of f is in it, or at least ``threshold`` of f's distinct content stems
    are (so a paraphrase or a shortened quotation counts, a single shared word of a long finding does
    not). F is the case's annotated supporting findings, or ``salient_facts(vignette)`` without them.
    """
    found = distinct_findings(case_findings)
    if not found:
        return None
    return sum(cited_findings(text, found, threshold)) / len(found)


# --- factual consistency ---------------------------------------------------------------------------
_UNIT = (
    r"mg/dl|g/dl|g/l|mmol/l|meq/l|mg/l|ng/ml|pg/ml|µg/l|ug/l|miu/l|iu/l|u/l|mm\s?hg|/mm3|/mm\^3|/µl|/ul"
    r"|breaths/min|beats/min|/min|mm/h(?:r|our)?|%|°\s?[cf]|kg/m2|kg|cm|mm|bpm|days?|weeks?|months?"
    r"|hours?"
)
_VALUE = re.compile(
    rf"(?<![\w.,/])(\d{{1,3}}(?:,\d{{3}})+|\d+(?:\.\d+)?)(?:\s?/\s?(\d+(?:\.\d+)?))?(?![\d])"
    rf"\s*({_UNIT})(?![a-z])",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.;:()\[\]\n!?]")
#: Words that do not tell one measured entity from another ("count" in "platelet count").
ENTITY_GENERIC: frozenset[str] = frozenset(
    stem(w)
    for w in "count level levels serum plasma blood concentration value values measured shows show "
    "showed reveal reveals revealed laboratory lab labs studies study result results past ago last "
    "about approximately around reading elevated increased decreased low high normal".split()
)


@dataclass(frozen=True, slots=True)
class StatedValue:
    """A number stated for an entity: its entity stems (the last two content words before it), the
    number, an optional second number ("125/85"), the normalised unit (None if not written)."""

    entity: frozenset[str]
    number: float
    second: float | None
    unit: str | None
    text: str

    def same_quantity(self, other: StatedValue) -> bool:
        """Same entity (shared stem) and compatible units (equal, or one of them not written)."""
        return bool(self.entity & other.entity) and (
            self.unit is None or other.unit is None or self.unit == other.unit
        )

    def same_value(self, other: StatedValue) -> bool:
        return abs(self.number - other.number) < 1e-9 and self.second == other.second


def _unit(raw: str | None) -> str | None:
    if raw is None:
        return None
    unit = re.sub(r"\s", "", raw.lower()).replace("^", "")
    unit = {"ug/l": "µg/l", "/ul": "/µl", "beats/min": "/min", "bpm": "/min", "mm/hr": "mm/h"}.get(unit, unit)
    return unit[:-1] if unit in ("days", "weeks", "months", "hours") else unit


def stated_values(text: str) -> list[StatedValue]:
    """Every number of ``text`` that follows an entity name in its clause ("creatinine 4.2 mg/dL",
    "pulse is 93/min", "blood pressure 125/85 mm Hg"). The entity is the last two content stems (minus
    ``ENTITY_GENERIC``) between the previous number or clause boundary and the number; numbers with no
    entity word before them ("a 61-year-old", "(100.4 °F)") are skipped."""
    out: list[StatedValue] = []
    previous_end = 0
    for m in _VALUE.finditer(text):
        window = text[previous_end : m.start()]
        previous_end = m.end()
        if cut := list(_CLAUSE_END.finditer(window)):
            window = window[cut[-1].end() :]
        entity = [s for s in content_stems(window) if s not in ENTITY_GENERIC and not s[0].isdigit()]
        if not entity:
            continue
        number, second = float(m.group(1).replace(",", "")), m.group(2)
        shown = f"{window.strip(' ,')} {m.group(0)}".strip()
        second_number = float(second) if second else None
        out.append(StatedValue(frozenset(entity[-2:]), number, second_number, _unit(m.group(3)), shown))
    return out


def contradicted_values(text: str, vignette: str) -> tuple[list[StatedValue], list[StatedValue]]:
    """(checkable, contradicted): values stated in ``text`` whose quantity the vignette also states,
    and those of them that equal none of the vignette's values for that quantity."""
    case_values = stated_values(vignette)
    checkable: list[StatedValue] = []
    contradicted: list[StatedValue] = []
    for value in stated_values(text):
        same = [v for v in case_values if value.same_quantity(v)]
        if same:
            checkable.append(value)
            if not any(value.same_value(v) for v in same):
                contradicted.append(value)
    return checkable, contradicted


def factual_consistency(text: str, vignette: str) -> float:
    """``1 - contradicted / stated`` (1.0 when stated = 0).

    stated = values (numbers with their entity, e.g. "creatinine 2.1 mg/dL") in the reasoning whose
    entity the vignette also gives a value for, with a compatible unit (the same after normalisation,
    or not written on one side); contradicted = those equal to none of the vignette's values for that
    entity ("creatinine 2.1 mg/dL" when the vignette says 4.2 mg/dL). See ``stated_values``.
    """
    checkable, contradicted = contradicted_values(text, vignette)
    return 1.0 - len(contradicted) / len(checkable) if checkable else 1.0


# --- fallacies ---------------------------------------------------------------------------------------
PREMATURE_CLOSURE = re.compile(
    r"(?i)\b(?:obviously|clearly|no need to (?:consider|look|test|rule)"
    r"|must be(?! (?:ruled out|excluded|considered))|nothing else"
    r"|can only be|the only possib\w+|no other (?:diagnosis|explanation|possibilit\w+))\b"
)
UNSUPPORTED_CERTAINTY = re.compile(
    r"(?i)\b(?:definitely|certainly|undoubtedly|absolutely|unquestionably|guaranteed|beyond (?:any )?doubt"
    r"|without (?:a|any) doubt)\b|\b100\s?%"
)
EVIDENCE_TERMS = re.compile(
    r"(?i)\b(?:because|since|given|due to|evidenc\w*|support\w*|consistent with|show\w*|reveal\w*"
    r"|finding\w*|suggest\w*|indicat\w*|history|exam\w*|lab\w*|biopsy|imaging|test\w*)\b|\d"
)
_CONNECTIVE = re.compile(r"(?i)\b(?:because|since|given that|as evidenced by|due to|therefore|thus|hence)\b")
_LEADING = re.compile(r"(?i)^\W*(?:therefore|thus|hence|so)\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
#: Penalty added by each occurrence of a pattern; the total is capped at 1.
FALLACY_WEIGHTS: dict[str, float] = {"premature_closure": 0.4, "circular": 0.3, "unsupported_certainty": 0.3}


@dataclass(frozen=True, slots=True)
class Fallacy:
    pattern: str
    text: str


def _same_claim(a: str, b: str, min_jaccard: float = 0.8) -> bool:
    sa, sb = set(content_stems(a)), set(content_stems(b))
    return bool(sa and sb) and len(sa & sb) / len(sa | sb) >= min_jaccard


def fallacies(text: str) -> list[Fallacy]:
    """The fallacy patterns found, in order of kind (``fallacy_penalty`` defines them)."""
    found: list[Fallacy] = []
    first_alternative = m.start() if (m := DIFFERENTIAL_MARKERS.search(text)) else len(text)
    found += [Fallacy("premature_closure", c.group(0)) for c in PREMATURE_CLOSURE.finditer(text)
              if c.start() < first_alternative]  # fmt: skip
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    for i, sentence in enumerate(sentences):
        if _LEADING.match(sentence) and i and _same_claim(_LEADING.sub("", sentence), sentences[i - 1]):
            found.append(Fallacy("circular", f"{sentences[i - 1]} {sentence}"[:300]))
        elif (c := _CONNECTIVE.search(sentence)) and _same_claim(sentence[: c.start()], sentence[c.end() :]):
            found.append(Fallacy("circular", sentence[:300]))
    found += [Fallacy("unsupported_certainty", s[:300]) for s in sentences
              if UNSUPPORTED_CERTAINTY.search(s) and not EVIDENCE_TERMS.search(s)]  # fmt: skip
    return found


def fallacy_penalty(text: str) -> tuple[float, list[Fallacy]]:
    """``min(1, Σ_p FALLACY_WEIGHTS[kind(p)])`` over the patterns p found, and the patterns.

    * premature_closure (0.4 each): "obviously", "clearly", "no need to consider", "must be" (not "must
      be ruled out / excluded / considered"), "nothing else", "can only be", "the only possibility", "no
      other diagnosis", each before the first differential marker (``DIFFERENTIAL_MARKERS``: alternatives
      not yet weighed);
    * circular (0.3 each): a sentence whose conclusion restates its premise: the parts before and after
      "because / since / given that / due to / therefore / thus / hence", or a sentence opening with
      "therefore / thus / hence / so" and the sentence before it, share >= 80% of their content stems
      (Jaccard of the stem sets);
    * unsupported_certainty (0.3 each): a sentence with "definitely / certainly / undoubtedly /
      absolutely / 100% / without a doubt / beyond doubt" and no evidence term (``EVIDENCE_TERMS``:
      because, given, evidence, consistent with, shows, finding, suggests, history, exam, lab, biopsy,
      imaging, test, or any digit).
    """
    found = fallacies(text)
    return min(1.0, math.fsum(FALLACY_WEIGHTS[f.pattern] for f in found)), found
