"""CAA support: is a system's `alternative` a clinically appropriate alternative, or only labelled one?

The LDDx v6 metrics guide (Local-DDx by Baglecake, MIT) defines CAA as "a reasonable alternative supported by
evidence in the 'Can't Miss' round". A label costs nothing: relabelling three wrong diagnoses as alternatives
raised diagnostic safety from 0.25 to 0.625 (issue 22). So an unmatched ``status: alternative`` item counts as
CAA only when it is **supported**; otherwise it is an FP (decision explanation "alternative without can't-miss
support", counted in ``caa_unsupported``). Modes (``DdxOptions.caa_support``):

- ``transcript`` (default): a turn of a can't-miss phase (``cant_miss_phases``, compared without case and
  punctuation: "cant_miss", "Can't Miss", "cant-miss" are one phase) names the alternative (any of its
  names: as written, without its parenthesis, its synonyms; stemmed words in order) in a sentence that does
  not rule it out (the ConText lexicon of ``clineval.text.assertion``), and that sentence cites a finding
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

Support must be specific (issue 22, the audit's ``alternatives_cant_miss``: a can't-miss turn naming each
frequent diagnosis beside the first 300 characters of the vignette was "supported"):

- **a quotation is no citation**: a run of ``QUOTE_WORDS`` (8) or more consecutive words identical to the case
  text (``match_tokens``: case folded, punctuation ignored) is the vignette copied, not reasoning; it is cut
  out before the findings are looked for (``CaseFindings.unquoted``), so a short finding phrase of the case
  ("pleuritic chest pain") still counts and a copied paragraph does not;
- **a shotgun supports nothing**: a sentence (with its heading, or the reasoning) that names more than
  ``SHOTGUN_NAMES`` (2) of the differential's diagnoses supports none of them ("Consider PE, dissection and
  tamponade given chest pain").

AE ("considered and explicitly ruled out"; issue 22, the audit's ``all_excluded`` turns): a ruled-out mention
(``clineval.text.assertion``, a turn of any phase) counts only when the diagnosis was considered first
(``SupportPolicy.ruled_out``): an earlier sentence puts it forward (no negated or conditional scope) citing
a finding of the case, or the ruling-out sentence (with the next one after a ":") cites one, a pertinent
negative included; the quotation and shotgun rules above apply. This decides a ground truth the list leaves
out and an ``excluded`` item naming a ground truth (``SupportPolicy.exclusion``; ``transcript_or_reasoning``:
or its reasoning cites a finding of the case, "no neck stiffness" when the case says so); ``label``: the
status, or any ruled-out mention.

The evidence of a supported CAA or AE is the sentence pair (or the reasoning), with its round, phase and
agent and the cited findings (for AE: the ruling-out trigger and its support) as trigger.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, TypeAlias

from clineval.core.output import DifferentialItem, TranscriptTurn
from clineval.ddx.classes import Evidence
from clineval.text.assertion import (
    Mention,
    Passage,
    all_forms,
    find_form,
    heading,
    negation_in,
    split_sentences,
    target_mentions,
)
from clineval.text.entities import EntityVocabulary, SpanNegation, build_vocabulary, extract_entities
from clineval.text.matching import explain_match, match_tokens, normalize_for_match
from clineval.text.names.diagnosis_vocab import name_forms
from clineval.text.names.equivalence import synonyms_of
from clineval.text.stemming import stem
from clineval.text.stopwords import STOP_WORDS

CaaSupport: TypeAlias = Literal["transcript", "transcript_or_reasoning", "label"]
DEFAULT_CANT_MISS_PHASES: tuple[str, ...] = ("cant_miss",)
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
QUOTE_WORDS = 8  # consecutive words of the case text that make a quotation, not a citation
SHOTGUN_NAMES = 2  # a sentence naming more of the differential's diagnoses supports none of them
Forms: TypeAlias = tuple[tuple[str, ...], ...]
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


def finding_keys(text: str, *, negated: bool = False) -> frozenset[str]:
    """The ``labs_findings`` and ``diagnoses`` concept keys ``text`` states, negated mentions left out
    (``negated``: kept, for a pertinent negative)."""
    return frozenset(
        e.key
        for e in extract_entities(text, negation=_negation, vocabulary=_vocabulary())
        if e.category in ("labs_findings", "diagnoses") and (negated or not e.negated)
    )


def _content(text: str) -> list[tuple[str, str]]:
    """(stem, word) of the content words of ``text``, in order."""
    words = (w for w in match_tokens(text) if w.isalpha() and len(w) >= 3 and w not in STOP_WORDS)
    return [(s, w) for w in words if (s := stem(w)) not in GENERIC]


def _pairs(text: str, *, negated_too: bool = False) -> dict[tuple[str, str], str]:
    """Pairs of consecutive content stems -> the words as written; a word in a negated scope ("no neck
    stiffness", "denies headache") breaks the run and is in no pair, unless ``negated_too``."""
    out: dict[tuple[str, str], str] = {}
    for sentence in split_sentences(text):
        words = match_tokens(sentence)
        negated = negation_in(words)
        run: list[tuple[str, str]] = []
        for i, w in enumerate(words):
            if not w.isalpha() or len(w) < 3 or w in STOP_WORDS or (s := stem(w)) in GENERIC:
                continue
            if not negated_too and negated(i, i + 1) is not None:
                run = []
                continue
            if run:
                out.setdefault((run[-1][0], s), f"{run[-1][1]} {w}")
            run.append((s, w))
    return out


Pairs: TypeAlias = frozenset[tuple[str, str]]


@lru_cache(maxsize=1024)
def _case_text_findings(case_text: str) -> tuple[frozenset[str], Pairs, frozenset[str], Pairs]:
    return (
        finding_keys(case_text),
        frozenset(_pairs(case_text)),
        finding_keys(case_text, negated=True),
        frozenset(_pairs(case_text, negated_too=True)),
    )


@lru_cache(maxsize=1024)
def _quotes(case_text: str) -> frozenset[tuple[str, ...]]:
    words = match_tokens(case_text)
    return frozenset(tuple(words[i : i + QUOTE_WORDS]) for i in range(len(words) - QUOTE_WORDS + 1))


@dataclass(frozen=True)
class CaseFindings:
    """What the case states: finding keys of its text, its reference findings (phrases), its pairs of
    consecutive content stems (``any_keys`` / ``any_pairs``: negated mentions too, for pertinent negatives),
    and its runs of ``QUOTE_WORDS`` words (a copy of them is a quotation)."""

    keys: frozenset[str] = frozenset()
    phrases: tuple[str, ...] = ()
    pairs: Pairs = frozenset()
    any_keys: frozenset[str] = frozenset()
    any_pairs: Pairs = frozenset()
    quotes: frozenset[tuple[str, ...]] = frozenset()

    @classmethod
    def of(cls, case_text: str | None, reference: Mapping[str, Sequence[str]] | None = None) -> CaseFindings:
        phrases = dict.fromkeys(p.strip() for ps in (reference or {}).values() for p in ps if p.strip())
        if not case_text:
            return cls(phrases=tuple(phrases))
        keys, pairs, any_keys, any_pairs = _case_text_findings(case_text)
        return cls(keys, tuple(phrases), pairs, any_keys, any_pairs, _quotes(case_text))

    def unquoted(self, text: str) -> str:
        """``text`` without its quotations of the case (runs of ``QUOTE_WORDS`` or more words of the case
        text, case folded); ``text`` itself when it quotes nothing. The pieces left are kept apart."""
        words = match_tokens(text)
        quoted = [False] * len(words)
        for i in range(len(words) - QUOTE_WORDS + 1):
            if tuple(words[i : i + QUOTE_WORDS]) in self.quotes:
                quoted[i : i + QUOTE_WORDS] = [True] * QUOTE_WORDS
        if not any(quoted):
            return text
        pieces: list[list[str]] = [[]]
        for word, cut in zip(words, quoted, strict=True):
            if cut and pieces[-1]:
                pieces.append([])
            elif not cut:
                pieces[-1].append(word)
        return ".\n".join(" ".join(p) for p in pieces if p)

    def cited_in(self, text: str, name: str = "", *, negatives: bool = False) -> list[str]:
        """The case's findings that ``text`` cites outside its quotations of the case (keys, reference
        phrases, then shared content-word pairs), ``name``'s own forms and words left out; ``negatives``:
        a finding the case and the text both name negated counts too (a pertinent negative)."""
        text = self.unquoted(text)
        keys, case_pairs = (self.any_keys, self.any_pairs) if negatives else (self.keys, self.pairs)
        cited = finding_keys(text, negated=negatives) & keys if keys else frozenset()
        found = sorted(cited - set(name_forms(name)))
        found += [p for p in self.phrases if explain_match(text, p).rule in ("containment", "all_tokens")]
        skip = {s for s, _ in _content(name)}  # the name's own words
        covered = {s for f in found for s, _ in _content(f)}  # a pair of findings already cited says no more
        pairs = _pairs(text, negated_too=negatives)
        shared = (p for p in pairs.keys() & case_pairs if not skip & set(p) and not set(p) <= covered)
        found += sorted(dict.fromkeys(pairs[p] for p in shared))
        return list(dict.fromkeys(found))


def names_in(text: str, rivals: Sequence[Forms]) -> int:
    """How many of the diagnoses ``rivals`` (each its name forms, stemmed) ``text`` names."""
    stems = [stem(w) for w in match_tokens(text)]
    return sum(1 for forms in rivals if any(find_form(stems, form) for form in forms))


def _named(sentence: str, forms: Sequence[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The form by which the sentence names the target (found and not ruled out there), or None."""
    words = match_tokens(sentence)
    stems = [stem(w) for w in words]
    negated = negation_in(words)
    for form in forms:
        if any(negated(s, s + len(form)) is None for s in find_form(stems, form)):
            return form
    return None


def transcript_support(
    name: str,
    turns: Sequence[TranscriptTurn],
    case: CaseFindings,
    *,
    phases: Iterable[str] = DEFAULT_CANT_MISS_PHASES,
    names_for: Callable[[str], Iterable[str]] | None = None,
    rivals: Sequence[Forms] = (),
) -> Evidence | None:
    """Evidence that a can't-miss turn names ``name`` with a finding of the case, in a sentence (with its
    heading) that names at most ``SHOTGUN_NAMES`` of the diagnoses ``rivals`` (see the module), or None."""
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
            window = " ".join(pieces[i : i + 2]) if heading(sentence, form) else sentence
            if names_in(window, rivals) > SHOTGUN_NAMES:
                continue
            cited = case.cited_in(window, name)
            if cited:
                trigger = "cites " + ", ".join(cited[:3])
                return Evidence(window[:300], "transcript", turn.round, turn.phase, turn.agent, trigger)
    return None


def reasoning_support(
    name: str,
    reasoning: str | None,
    case: CaseFindings,
    *,
    rivals: Sequence[Forms] = (),
    negatives: bool = False,
) -> Evidence | None:
    """Evidence that the item's own reasoning cites a finding of the case (and names at most
    ``SHOTGUN_NAMES`` of ``rivals``), or None."""
    if not reasoning or names_in(reasoning, rivals) > SHOTGUN_NAMES:
        return None
    cited = case.cited_in(reasoning, name, negatives=negatives)
    if not cited:
        return None
    return Evidence(f"{name}: {reasoning}"[:300], "differential", trigger="cites " + ", ".join(cited[:3]))


class SupportPolicy:
    """CAA and AE support for one case (module docstring): ``mode`` (``DdxOptions.caa_support``), the
    transcript, the case text and reference findings (read once, when first needed), the can't-miss phases,
    and the differential's diagnoses (``names``: a sentence naming more than ``SHOTGUN_NAMES`` of them
    supports none)."""

    def __init__(
        self,
        mode: CaaSupport,
        turns: Sequence[TranscriptTurn],
        case_text: str | None,
        findings: Mapping[str, Sequence[str]],
        phases: Sequence[str],
        names: Iterable[str] = (),
    ) -> None:
        self.mode, self.turns, self.case_text, self.findings, self.phases = (
            mode,
            turns,
            case_text,
            findings,
            phases,
        )
        self.names = tuple(dict.fromkeys(n for n in names if n.strip()))
        self._case: CaseFindings | None = None
        self._rivals: tuple[Forms, ...] | None = None

    def _read(self) -> tuple[CaseFindings, tuple[Forms, ...]]:
        if self._case is None or self._rivals is None:
            self._case = CaseFindings.of(self.case_text, self.findings)
            distinct = dict.fromkeys(normalize_for_match(n) for n in self.names)
            named = {normalize_for_match(n): n for n in reversed(self.names)}
            self._rivals = tuple(f for key in distinct if (f := all_forms(named[key], synonyms_of)))
        return self._case, self._rivals

    def alternative(self, item: DifferentialItem) -> Evidence | None:
        """What makes an unmatched ``alternative`` a CAA, or None (then it is an FP)."""
        if self.mode == "label":
            return Evidence(item.diagnosis, "status")
        if self.mode == "transcript" and not self.turns:
            return None
        case, rivals = self._read()
        found = transcript_support(
            item.diagnosis, self.turns, case, phases=self.phases, names_for=synonyms_of, rivals=rivals
        )
        if found is None and self.mode == "transcript_or_reasoning":
            found = reasoning_support(item.diagnosis, item.reasoning, case, rivals=rivals)
        return found

    def ruled_out(self, name: str, negated: Sequence[Mention], put: Sequence[Mention]) -> Evidence | None:
        """The latest of the ``negated`` mentions of ``name`` (in transcript order) that shows the diagnosis
        considered, then ruled out (module docstring): a sentence before it put the diagnosis forward citing a
        finding of the case (``put``: ``TargetMentions.put_forward``), or it gives a finding of the case as
        the reason itself (a pertinent negative counts). ``label``: the latest mention, whatever it says."""
        if not negated or self.mode == "label":
            return _mention_evidence(negated[-1], negated[-1].trigger) if negated else None
        reasoned: tuple[Mention, list[str]] | None = None
        for m in put:
            if m.order >= negated[-1].order:
                break
            if cited := self._cites(m.sentence, name, negatives=False):
                reasoned = (m, cited)
                break
        for m in reversed(negated):
            if reasoned is not None and reasoned[0].order < m.order:
                p, cited = reasoned[0].passage, reasoned[1]
                where = f"round {p.round}" if p.round is not None else "an earlier turn"
                return _mention_evidence(
                    m, f"{m.trigger}; put forward in {where} citing " + ", ".join(cited[:3])
                )
            if cited := self._cites(f"{m.sentence} {m.reason}".strip(), name, negatives=True):
                return _mention_evidence(m, f"{m.trigger}; cites " + ", ".join(cited[:3]))
        return None

    def _cites(self, sentence: str, name: str, *, negatives: bool) -> list[str]:
        """The case findings ``sentence`` cites for ``name`` (none when it names more than ``SHOTGUN_NAMES``
        of the differential's diagnoses)."""
        case, rivals = self._read()
        return (
            []
            if names_in(sentence, rivals) > SHOTGUN_NAMES
            else case.cited_in(sentence, name, negatives=negatives)
        )

    def exclusion(self, item: DifferentialItem) -> Evidence | None:
        """What makes an ``excluded`` item naming a ground truth an AE, or None: a turn that rules it out
        with support (``ruled_out``), or with ``transcript_or_reasoning`` its reasoning citing a finding of
        the case."""
        if self.mode == "label":
            text = f"{item.diagnosis}: {item.reasoning}" if item.reasoning else item.diagnosis
            return Evidence(text, "status")
        if self.turns:
            passages = [Passage(t.text, t.round, t.phase, t.agent) for t in self.turns]
            read = target_mentions([item.diagnosis], passages, names_for=synonyms_of)
            found = self.ruled_out(
                item.diagnosis, read.ruled_out[item.diagnosis], read.put_forward[item.diagnosis]
            )
            if found is not None:
                return found
        if self.mode == "transcript_or_reasoning":
            case, rivals = self._read()
            return reasoning_support(item.diagnosis, item.reasoning, case, rivals=rivals, negatives=True)
        return None


def _mention_evidence(mention: Mention, trigger: str) -> Evidence:
    """A ruled-out mention as evidence: its sentence (with the reason after a heading), where, ``trigger``."""
    p, text = mention.passage, f"{mention.sentence} {mention.reason}".strip()
    return Evidence(text[:400], "transcript", p.round, p.phase, p.agent, trigger)
