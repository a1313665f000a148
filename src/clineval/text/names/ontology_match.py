"""Disease Ontology and NCIt evidence for diagnosis equivalence: concepts of a name, synonymy, is_a,
distinctness. Concepts are canonical ids (an NCIt concept linked to a DOID is that DOID,
``Terminology.canonical``); the evidence keeps the concept the name was found in, for the explanation.

Used by ``clineval.text.names.equivalence`` below the curated layer (curated groups and hierarchy edges win,
a user's file wins over both). Scope policy: a name's LABEL or EXACT keys give its concepts (synonym
evidence); a NARROW synonym makes the name a subtype of that concept (hierarchy evidence); RELATED and
BROAD synonyms are ignored. An ambiguous key (an EXACT name of several concepts of one ontology) resolves to
the one concept whose label it is, else to none; each ontology is read apart, so a name that both hold for
concepts they do not link resolves to both. A two-letter upper-case name ("AS", "MS") is not used, except
"VF" and "AF" (``SHORT_NAMES``). A symptom, sign or result that the ontology lists as an EXACT
synonym of a differently named disease concept ("bronchospasm" of "bronchial disease") never resolves to it
(``data/finding_names.tsv``, ``finding_exclusions``): a finding is not a diagnosis, let alone a disease class.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from rapidfuzz.distance import Levenshtein

from clineval.text.names.diagnosis_vocab import name_key
from clineval.text.names.terminology import Terminology, load_terminology

MAX_DEPTH = 6  # an is_a path longer than this says nothing useful about two clinical names


@dataclass(frozen=True, slots=True)
class Concepts:
    """The concepts a name resolves to (exact) and those it is a narrower synonym of."""

    exact: frozenset[str]
    narrower_of: frozenset[str]
    evidence: tuple[tuple[str, str], ...]  # (key, concept as stored) for the explanation
    narrow_evidence: tuple[tuple[str, str], ...] = ()  # (key, broader canonical concept)
    ontologies: frozenset[str] = frozenset()  # "DO" / "NCIt": which ontologies resolve the name


NONE = Concepts(frozenset(), frozenset(), ())


@lru_cache(maxsize=1)
def terminology() -> Terminology:
    return load_terminology()


def _label_key(term: Terminology, cid: str) -> str:
    return name_key(term.label(cid))


SHORT_NAMES = frozenset({"vf", "af"})  # two-letter names that mean one rhythm in any differential (reviewed)


def _abbreviation(term: Terminology, key: str, cid: str) -> bool:
    """A two-letter upper-case name ("AS", "MS", "PE", "AD"): ambiguous out of context, not used as evidence,
    except ``SHORT_NAMES`` ("VF", "AF"; longer ones, "SIADH", "AIDS", "ALL", name one disease in practice)."""
    if len(key) > 2 or key in SHORT_NAMES:  # most keys: no need to read the stored display
        return False
    display = term.name_source(key, cid).display
    return len(display) <= 2 and display.isupper()


FINDING_NAMES = "finding_names.tsv"


@lru_cache(maxsize=1)
def finding_exclusions() -> frozenset[tuple[str, str]]:
    """(name key, concept id) pairs never used: a finding named as a disease concept
    (``data/finding_names.tsv``: name, concept, label, why; ``#`` comments)."""
    text = (resources.files("clineval.text.names") / "data" / FINDING_NAMES).read_text(encoding="utf-8")
    rows = (line.split("\t") for line in text.splitlines() if line.strip() and not line.startswith("#"))
    return frozenset((name_key(row[0]), row[1].strip()) for row in rows)


def _by_ontology(term: Terminology, key: str, ids: tuple[str, ...]) -> tuple[str, ...]:
    """The concepts a key names, ambiguity resolved within each ontology (by label, else none)."""
    kept: list[str] = []
    for group in (
        tuple(c for c in ids if c.startswith("DOID:")),
        tuple(c for c in ids if c.startswith("NCIT:")),
    ):
        if len({term.canonical(c) for c in group}) > 1:
            labelled = tuple(c for c in group if _label_key(term, c) == key)
            group = labelled if len({term.canonical(c) for c in labelled}) == 1 else _broadest(term, group)
        kept += group
    return tuple(kept)


def _broadest(term: Terminology, group: tuple[str, ...]) -> tuple[str, ...]:
    """An EXACT name held by a concept and its own subtypes ("von Gierke disease": glycogen storage disease
    I and its type Ia) names the broadest of them, the one every other is_a; () when there is none."""
    canon = {term.canonical(c) for c in group}
    top = [c for c in canon if all(c == o or c in term.ancestors(o) for o in canon)]
    return tuple(c for c in group if term.canonical(c) == top[0]) if len(top) == 1 else ()


def concepts_of(forms: Iterable[str], term: Terminology | None = None) -> Concepts:
    """The concepts of a name's normalised forms (LABEL/EXACT), ambiguity resolved by label, finding names
    (``finding_exclusions``) left out."""
    t = term or terminology()
    exact: set[str] = set()
    narrow: list[tuple[str, str]] = []
    evidence: list[tuple[str, str]] = []
    excluded = finding_exclusions()
    for key in forms:
        ids = tuple(
            c
            for c in t.concepts(key)
            if not _abbreviation(t, key, c) and not {(key, c), (key, t.canonical(c))} & excluded
        )
        ids = _by_ontology(t, key, ids) if len(ids) > 1 else ids
        exact.update(t.canonical(c) for c in ids)
        evidence += [(key, c) for c in ids]
        narrow += [(key, t.canonical(c)) for c in t.narrower(key)]
    broader = frozenset(c for _, c in narrow) - exact
    found = frozenset(o for c in exact for o in t.ontologies(c))
    narrow_evidence = tuple(x for x in narrow if x[1] in broader)
    return Concepts(frozenset(exact), broader, tuple(evidence), narrow_evidence, found)


def explain(key: str, cid: str, term: Terminology | None = None) -> str:
    """ "DOID:585 nephrolithiasis, EXACT synonym 'kidney stones', Disease Ontology 2016"; ``cid`` as stored
    (an NCIt concept is named as itself even when it is linked to a DOID)."""
    t = term or terminology()
    try:
        return t.name_source(key, cid).explain(cid, t.label(cid))
    except KeyError:
        return f"{cid} {t.label(cid)}"


def shared(a: Concepts, b: Concepts) -> tuple[str, str, str] | None:
    """(concept, key of a, key of b) when both names are LABEL/EXACT names of one concept."""
    common = a.exact & b.exact
    if not common:
        return None
    cid = min(common)
    t = terminology()
    ka = next(k for k, c in a.evidence if t.canonical(c) == cid)
    kb = next(k for k, c in b.evidence if t.canonical(c) == cid)
    return cid, ka, kb


def evidence_of(found: Concepts, key: str, cid: str) -> str:
    """The stored concept through which ``key`` reached the canonical ``cid`` (for the explanation)."""
    t = terminology()
    return next((c for k, c in found.evidence if k == key and t.canonical(c) == cid), cid)


def subtype(a: Concepts, b: Concepts, term: Terminology | None = None) -> tuple[str, str, int, bool] | None:
    """(narrow: a concept id or the key of a NARROW synonym, broad concept, depth, whether ``a`` is the narrow
    name) when one name is_a the other's concept (or is a NARROW synonym of it: depth 1), the shortest such
    path; None otherwise."""
    t = term or terminology()
    best: tuple[str, str, int, bool] | None = None
    for x, y, x_is_a in ((a, b, True), (b, a, False)):
        for key, broad in x.narrow_evidence:
            if broad in y.exact and (best is None or best[2] > 1):
                best = (key, broad, 1, x_is_a)
        for narrow in x.exact:
            ups = t.ancestors(narrow)
            for broad in y.exact:
                depth = ups.get(broad)
                if depth is not None and depth <= MAX_DEPTH and (best is None or depth < best[2]):
                    best = (narrow, broad, depth, x_is_a)
    return best


def distinct(a: Concepts, b: Concepts, term: Terminology | None = None) -> tuple[str, str] | None:
    """(concept of a, concept of b) when both names resolve and share no concept and neither is_a the
    other: two different diseases, whatever their words share ("heat stroke" vs "stroke")."""
    if not a.exact or not b.exact or a.exact & b.exact or not a.ontologies & b.ontologies:
        return None  # (resolved in two ontologies that do not link them: no evidence either way)
    if subtype(a, b, term) is not None:
        return None
    t = term or terminology()
    if any(x in t.ancestors(y) or y in t.ancestors(x) for x in a.exact for y in b.exact):
        return None  # related beyond MAX_DEPTH: not evidence of distinctness either
    return min(a.exact), min(b.exact)


@lru_cache(maxsize=1)
def _known_words() -> dict[str, frozenset[str]]:
    """Every word of a Disease Ontology name, bucketed by its first two letters (typo candidates)."""
    buckets: dict[str, set[str]] = {}
    for key in terminology().exact_keys():
        for word in key.split():
            if len(word) >= 6 and word.isalpha():
                buckets.setdefault(word[:2], set()).add(word)
    return {k: frozenset(v) for k, v in buckets.items()}


@lru_cache(maxsize=65536)
def spelling_fix(word: str) -> str | None:
    """The Disease Ontology word a misspelt word stands for ("otosderosis" -> "otosclerosis"), or None.
    Only a word the ontology does not know, of 7+ letters, within 1 edit (2 from 10 letters) of exactly
    one known word of the same first two letters (its British and American "-ise"/"-ize" spellings count as
    one: "generalhed" -> "generalized"): a known word is never changed ("hypothyroidism")."""
    if len(word) < 7 or not word.isalpha():
        return None
    bucket = _known_words().get(word[:2], frozenset())
    if word in bucket:
        return None
    limit = 1 if len(word) < 10 else 2
    close = [
        w
        for w in bucket
        if abs(len(w) - len(word)) <= limit and Levenshtein.distance(word, w, score_cutoff=limit) <= limit
    ]
    if len({_ize(w) for w in close}) == 1:  # "generalised" / "generalized": one word in two spellings
        return min(close, key=lambda w: (w != _ize(w), w))
    return None


def _ize(word: str) -> str:
    return word.replace("isation", "ization").replace("ised", "ized").replace("ise", "ize")


BROAD_DESCENDANTS = 2500  # "disease", "disease of anatomical entity", "disease of cellular proliferation"


@lru_cache(maxsize=1)
def broad_concepts() -> frozenset[str]:
    """Concepts above so many others (more than ``BROAD_DESCENDANTS``) that sharing one as an ancestor says
    nothing: left out of the equivalence signatures (a name that IS one still matches by its own id)."""
    term = terminology()
    counts: dict[str, int] = {}
    for cid in term.concept_ids():
        for up in term.ancestors(cid):
            counts[up] = counts.get(up, 0) + 1
    return frozenset(c for c, n in counts.items() if n > BROAD_DESCENDANTS)


@lru_cache(maxsize=1)
def _by_first_word() -> dict[str, tuple[str, ...]]:
    """First word -> the LABEL/EXACT keys of two or more words that begin with it."""
    found: dict[str, list[str]] = {}
    for key in terminology().exact_keys():
        first, _, rest = key.partition(" ")
        if rest:
            found.setdefault(first, []).append(key)
    return {k: tuple(v) for k, v in found.items()}


@lru_cache(maxsize=4096)
def truncated_eponym(name: str) -> tuple[str, str] | None:
    """(key, reason) when ``name`` is the first part of a hyphenated double eponym cut at its hyphen
    ("Guillain" for Guillain-Barre syndrome): one capitalised word of 4+ letters that no ontology name is,
    such that every ontology name beginning with it is a name of one concept (or of a concept and its
    subtypes, read as the broadest) and at least one is written "<word>-<eponym>". None otherwise ("Wolff":
    Wolff-Parkinson-White and Wolff-Chaikoff; "Charcot": Charcot-Marie-Tooth and Charcot joint; "Down": no
    hyphenated name)."""
    word = name.strip()
    if len(word) < 4 or not word.isalpha() or not word[0].isupper():
        return None
    t = terminology()
    key = name_key(word)
    if t.concepts(key):  # a name itself ("Pneumonia"): no index needed
        return None
    keys = _by_first_word().get(key, ())
    if not keys:
        return None
    stored = [(k, c) for k in keys for c in t.concepts(k)]
    top = _broadest(t, tuple(c for _, c in stored))
    hyphenated = [(k, c) for k, c in stored if t.name_source(k, c).display.lower().startswith(f"{key}-")]
    if not top or not hyphenated:
        return None
    k, c = next(((k, c) for k, c in hyphenated if c in top), (None, None))
    if k is None or c is None:
        return None
    return k, f"a double eponym cut at its hyphen: {explain(k, c, t)}"
