"""CAA support: is a system's `alternative` a clinically appropriate alternative, or only labelled one?

The LDDx v6 metrics guide (Local-DDx by Baglecake, MIT) defines CAA as "a reasonable alternative supported by
evidence in the 'Can't Miss' round". A label costs nothing: relabelling three wrong diagnoses as alternatives
raised diagnostic safety from 0.25 to 0.625 (issue 22). So an unmatched ``status: alternative`` item counts as
CAA only when it is **supported**; otherwise it is an FP (decision explanation "alternative without can't-miss
support", counted in ``caa_unsupported``). Modes (``DdxOptions.caa_support``):

- ``transcript`` (default): a turn of a can't-miss phase (``cant_miss_phases``, compared without case and
  punctuation: "cant_miss", "Can't Miss", "cant-miss" are one phase) names the alternative (any of its
  names: as written, without its parenthesis, its synonyms; stemmed words in order) in a sentence that does
  not rule it out (the ConText lexicon of ``clineval.scoring.assertion``), and that sentence cites a finding
  of the case; when the sentence is a heading ("**Acute Kidney Injury:**": it ends with ":", or holds the
  name and at most two other words), the next sentence of the turn may cite it. A finding of the case is
  - a finding, sign, symptom, result or known condition (``clineval.text.entities`` categories
    ``labs_findings`` and ``diagnoses``, not negated; the alternative's own name does not count) that the
    case text also states, not negated;
  - or one of the case's reference findings (``reference.findings``, quoted from the vignette) contained in
    it;
  - or two consecutive content words of the case text ("absent pedal pulses" for "right pedal pulses are
    absent": "pedal pulses"; stop words, numbers, words under 3 letters, the alternative's own words and
    ``GENERIC`` words left out);
- ``transcript_or_reasoning``: also the item's own ``reasoning`` when it cites such a finding. Weaker: a
  system writes its own reasoning, and copying one finding of the vignette into it is enough;
- ``label``: the label alone (the behaviour before issue 22; gameable, kept to reproduce old numbers).

The evidence of a supported CAA is the sentence pair (or the reasoning), with its round, phase and agent and
the cited findings as trigger.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, TypeAlias

from clineval.core.output import TranscriptTurn
from clineval.scoring.assertion import all_forms, find_form, negation_in, split_sentences
from clineval.scoring.ddx_classes import Evidence
from clineval.text.diagnosis_vocab import name_forms
from clineval.text.entities import EntityVocabulary, SpanNegation, build_vocabulary, extract_entities
from clineval.text.matching import explain_match, match_tokens
from clineval.text.stemming import stem
from clineval.text.stopwords import STOP_WORDS

CaaSupport: TypeAlias = Literal["transcript", "transcript_or_reasoning", "label"]
DEFAULT_CANT_MISS_PHASES: tuple[str, ...] = ("cant_miss",)
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
HEADING_EXTRA = 2  # words besides the name in a heading ("1. Diagnosis: X")
GENERIC = frozenset(
    stem(w)
    for w in (
        "history presentation presents presenting symptom symptoms sign signs finding findings risk level "
        "high low diagnosis diagnoses condition conditions disease likely possible concern consider "
        "considered evaluation workup immediate urgent critical life threatening missed miss treatment "
        "management examination exam shows reveals physical laboratory studies test tests"
    ).split()
)


def phase_key(phase: str | None) -> str:
    """A phase name without case and punctuation: "Can't Miss" -> "cantmiss"."""
    return _NON_ALNUM.sub("", (phase or "").lower())


def _negation(words: Sequence[str]) -> SpanNegation:
    return negation_in(words)


@lru_cache(maxsize=1)
def _vocabulary() -> EntityVocabulary:
    return build_vocabulary(drugs=False)  # findings and conditions only: the drug list costs seconds


def finding_keys(text: str) -> frozenset[str]:
    """The ``labs_findings`` and ``diagnoses`` concept keys ``text`` states, negated mentions left out."""
    return frozenset(
        e.key
        for e in extract_entities(text, negation=_negation, vocabulary=_vocabulary())
        if e.category in ("labs_findings", "diagnoses") and not e.negated
    )


def _content(text: str) -> list[tuple[str, str]]:
    """(stem, word) of the content words of ``text``, in order."""
    words = (w for w in match_tokens(text) if w.isalpha() and len(w) >= 3 and w not in STOP_WORDS)
    return [(s, w) for w in words if (s := stem(w)) not in GENERIC]


def _pairs(text: str) -> dict[tuple[str, str], str]:
    """Pairs of consecutive content stems -> the words as written; a word in a negated scope ("no neck
    stiffness", "denies headache") breaks the run and is in no pair."""
    out: dict[tuple[str, str], str] = {}
    for sentence in split_sentences(text):
        words = match_tokens(sentence)
        negated = negation_in(words)
        run: list[tuple[str, str]] = []
        for i, w in enumerate(words):
            if not w.isalpha() or len(w) < 3 or w in STOP_WORDS or (s := stem(w)) in GENERIC:
                continue
            if negated(i, i + 1) is not None:
                run = []
                continue
            if run:
                out.setdefault((run[-1][0], s), f"{run[-1][1]} {w}")
            run.append((s, w))
    return out


@lru_cache(maxsize=1024)
def _case_text_findings(case_text: str) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    return finding_keys(case_text), frozenset(_pairs(case_text))


@dataclass(frozen=True)
class CaseFindings:
    """What the case states: finding keys of its text, its reference findings (phrases), and its pairs of
    consecutive content stems."""

    keys: frozenset[str] = frozenset()
    phrases: tuple[str, ...] = ()
    pairs: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def of(cls, case_text: str | None, reference: Mapping[str, Sequence[str]] | None = None) -> CaseFindings:
        phrases = dict.fromkeys(p.strip() for ps in (reference or {}).values() for p in ps if p.strip())
        keys, pairs = _case_text_findings(case_text) if case_text else (frozenset(), frozenset())
        return cls(keys, tuple(phrases), pairs)

    def cited_in(self, text: str, name: str = "") -> list[str]:
        """The case's findings that ``text`` cites (keys, reference phrases, then shared content-word
        pairs), ``name``'s own forms and words left out."""
        found = sorted((finding_keys(text) & self.keys) - set(name_forms(name))) if self.keys else []
        found += [p for p in self.phrases if explain_match(text, p).rule in ("containment", "all_tokens")]
        skip = {s for s, _ in _content(name)}  # the name's own words
        covered = {s for f in found for s, _ in _content(f)}  # a pair of findings already cited says no more
        pairs = _pairs(text)
        shared = (p for p in pairs.keys() & self.pairs if not skip & set(p) and not set(p) <= covered)
        found += sorted(dict.fromkeys(pairs[p] for p in shared))
        return list(dict.fromkeys(found))


def _named(sentence: str, forms: Sequence[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The form by which the sentence names the target (found and not ruled out there), or None."""
    words = match_tokens(sentence)
    stems = [stem(w) for w in words]
    negated = negation_in(words)
    for form in forms:
        if any(negated(s, s + len(form)) is None for s in find_form(stems, form)):
            return form
    return None


def _heading(sentence: str, form: Sequence[str]) -> bool:
    """A heading naming the target ("**Acute Kidney Injury:**", "1. Sepsis"): its reasons follow it."""
    bare = sentence.strip().strip("*#-•[] ").rstrip("*")
    return bare.endswith(":") or len(match_tokens(bare)) <= len(form) + HEADING_EXTRA


def transcript_support(
    name: str,
    turns: Sequence[TranscriptTurn],
    case: CaseFindings,
    *,
    phases: Iterable[str] = DEFAULT_CANT_MISS_PHASES,
    names_for: Callable[[str], Iterable[str]] | None = None,
) -> Evidence | None:
    """Evidence that a can't-miss turn names ``name`` with a finding of the case (see the module), or None."""
    wanted = {phase_key(p) for p in phases}
    forms = all_forms(name, names_for)
    if not forms:
        return None
    for turn in turns:
        if phase_key(turn.phase) not in wanted:
            continue
        pieces = split_sentences(turn.text)
        for i, sentence in enumerate(pieces):
            form = _named(sentence, forms)
            if form is None:
                continue
            window = " ".join(pieces[i : i + 2]) if _heading(sentence, form) else sentence
            cited = case.cited_in(window, name)
            if cited:
                trigger = "cites " + ", ".join(cited[:3])
                return Evidence(window[:300], "transcript", turn.round, turn.phase, turn.agent, trigger)
    return None


def reasoning_support(name: str, reasoning: str | None, case: CaseFindings) -> Evidence | None:
    """Evidence that the item's own reasoning cites a finding of the case, or None."""
    cited = case.cited_in(reasoning, name) if reasoning else []
    if not cited or reasoning is None:
        return None
    return Evidence(f"{name}: {reasoning}"[:300], "differential", trigger="cites " + ", ".join(cited[:3]))
