"""Are two diagnosis names clinically the same? Deterministic tiers, each with a confidence and a reason.

``equivalent(a, b)`` tries, in order (names normalised by ``clineval.text.names.diagnosis_vocab.name_forms``:
explanations cut, parentheticals as aliases, "/" alternatives, abbreviations expanded):

=========  ===========  ==================================================================================
tier       confidence   fires when
=========  ===========  ==================================================================================
exact      1.0          a normalised form of ``a`` equals one of ``b`` ("Acute MI" ~ "acute myocardial
                        infarction", "acute kidney injury (AKI)" ~ "AKI")
synonym    0.95         forms of both are in the same curated synonym group ("AKI" ~ "acute renal failure")
hierarchy  0.7 / 0.6    one is a subtype of the other in the curated hierarchy, directly (0.7) or through
                        intermediate types (0.6) ("contrast-induced nephropathy" ~ "AKI"); a weaker match,
                        reported as such: a scorer may refuse it (``best_match(allow_hierarchy=False)``)
overlap    0.55+0.35*J  content-word overlap, conservative (below); J = Jaccard index of the two sets of
                        specific content stems, so 0.725 <= confidence <= 0.9
=========  ===========  ==================================================================================

Overlap, on the main forms (abbreviations expanded): tokens are split into *discriminators* (numbers,
roman numerals after type/grade/stage, single letters, laterality, negation: "non", "no", "without"),
*generic* heads (disease, syndrome, disorder, infection, condition, illness, mellitus) and *specific*
content stems (Snowball; stop words dropped). Equivalent only if all of:

1. the discriminators are identical ("type 1 diabetes" != "type 2 diabetes" != "diabetes"; "left" !=
   "right"; "hepatitis a" != "hepatitis b"; "NSTEMI" != "STEMI");
2. the head nouns agree: the last specific stem before a linking word (of, with, due, secondary, from,
   in, caused, associated, after, following) is the same ("hypertension" != "hypotension");
3. the specific stems of one are a subset of the other's (only one side adds words: "pulmonary embolism"
   ~ "acute pulmonary embolism"; "acute" vs "chronic" fails);
4. the generic words agree when both have one ("Cushing disease" != "Cushing syndrome");
5. J >= 0.5.

``best_match(name, candidates)`` returns the index of the best candidate by (tier order, confidence,
position) and its ``Equivalence``; (None, a non-match) when none is equivalent.

Direction: a ``hierarchy`` equivalence says which name is the more general one (``broader``: ``"a"`` the
first argument, ``"b"`` the second), so that a scorer can refuse a name broader than the ground truth
(``clineval.ddx.scorer``: an ancestor is never a hit). ``broader`` is None for the same-disease tiers and
for a compositional name that lists the other as one of its alternatives or examples ("Rh or ABO
incompatibility" names "ABO incompatibility": neither is the broader *claim*).

Speed: everything about one name (forms, groups, hierarchy nodes, overlap features) is computed once per
vocabulary and cached, so a pair costs a few set operations (see ``benchmarks/bench_equivalence.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from clineval.text.names import acronyms, ontology_match
from clineval.text.names.diagnosis_vocab import DiagnosisVocabulary, load_vocabulary, name_key
from clineval.text.names.features import conflict, overlap
from clineval.text.names.resolution import Resolved, resolve
from clineval.text.names.terminology import ontology_of
from clineval.text.stemming import stem

Tier: TypeAlias = Literal["exact", "synonym", "hierarchy", "overlap"]
Side: TypeAlias = Literal["a", "b"]
TIERS: tuple[Tier, ...] = ("exact", "synonym", "hierarchy", "overlap")
CONFIDENCE = {
    "exact": 1.0,
    "synonym": 0.95,
    "ontology_synonym": 0.9,
    "hierarchy": 0.7,
    "hierarchy_indirect": 0.6,
    "hierarchy_by_name": 0.6,
    "component": 0.6,
    "by_context": 0.85,
}
ONTOLOGY = "Disease Ontology"
OVERLAP_BASE, OVERLAP_SLOPE = 0.55, 0.35


@dataclass(frozen=True, slots=True)
class Equivalence:
    """Whether two diagnosis names are equivalent, by which tier, how confidently, and why."""

    equivalent: bool
    tier: Tier | None
    confidence: float
    explanation: str
    broader: Side | None = None  # hierarchy only: the more general name (see the module docstring)

    def flipped(self) -> Equivalence:
        """The same equivalence read with the two names swapped."""
        side: Side | None = None if self.broader is None else ("b" if self.broader == "a" else "a")
        return Equivalence(self.equivalent, self.tier, self.confidence, self.explanation, side)


def _hierarchy(a: Resolved, b: Resolved, vocab: DiagnosisVocabulary) -> tuple[str, str, int, Side] | None:
    """(child node, parent node, depth, the side of the parent) when one name is a subtype of the other."""
    best: tuple[str, str, int, Side] | None = None
    pairs: tuple[tuple[Resolved, Resolved, Side], ...] = ((a, b, "b"), (b, a, "a"))
    for x, y, up_side in pairs:
        for child in x.nodes:
            ups = vocab.ancestors[child]
            for parent in y.nodes:
                depth = ups.get(parent)
                if depth is not None and (best is None or depth < best[2]):
                    best = (child, parent, depth, up_side)
    return best


def _exact(a: Resolved, b: Resolved) -> Equivalence | None:
    same = a.forms & b.forms
    if not same:
        return None
    if (
        a.main not in same
        and b.main not in same
        and a.main != b.main
        and all(len(f.split()) == 1 for f in same)
    ):
        # only an abbreviation alias is shared: "Autism Spectrum Disorder (ASD)" vs "Atrial Septal Defect"
        return None
    form = a.main if a.main in same else min(same)
    return Equivalence(True, "exact", CONFIDENCE["exact"], f"same after normalisation: {form!r}")


def _curated(
    a: Resolved, b: Resolved, vocab: DiagnosisVocabulary, allow_hierarchy: bool
) -> Equivalence | None:
    common = a.groups & b.groups
    if common:
        group = vocab.groups[min(common)]
        return Equivalence(True, "synonym", CONFIDENCE["synonym"], f"synonym group {group[0]!r}")
    if allow_hierarchy and a.nodes and b.nodes:
        found = _hierarchy(a, b, vocab)
        if found is not None:
            child, parent, depth, side = found
            conf = CONFIDENCE["hierarchy" if depth == 1 else "hierarchy_indirect"]
            how = "a subtype" if depth == 1 else f"a subtype ({depth} levels down)"
            text = f"{vocab.label(child)!r} is {how} of {vocab.label(parent)!r}"
            return Equivalence(True, "hierarchy", conf, text, side)
    return None


def _known(r: Resolved) -> bool:
    return bool(r.groups or r.nodes)


def _ontology(a: Resolved, b: Resolved, allow_hierarchy: bool) -> Equivalence | None:
    """Disease Ontology synonymy, then is_a; unless the curated layer knows both names and does not
    relate them (its decision stands: it encodes what the ontology gets wrong) or their words conflict."""
    ca, cb = a.concepts, b.concepts
    if not (ca.exact or ca.narrow_evidence) or not (cb.exact or cb.narrow_evidence):
        return None  # most pairs: a name the ontology does not know
    if (_known(a) and _known(b)) or conflict(a.features, b.features):
        return None
    found = ontology_match.shared(a.concepts, b.concepts)
    if found is not None:
        cid, ka, kb = found
        stored = (
            ontology_match.evidence_of(a.concepts, ka, cid),
            ontology_match.evidence_of(b.concepts, kb, cid),
        )
        why = "; ".join(
            dict.fromkeys(ontology_match.explain(k, c) for k, c in zip((ka, kb), stored, strict=True))
        )
        return Equivalence(True, "synonym", CONFIDENCE["ontology_synonym"], why)
    if not allow_hierarchy:
        return None
    sub = ontology_match.subtype(a.concepts, b.concepts)
    if sub is None:
        return None
    narrow, broad, depth, a_is_narrow = sub
    term = ontology_match.terminology()
    is_id = narrow.startswith(("DOID:", "NCIT:"))
    shown = f"{narrow} {term.label(narrow)}" if is_id else f"NARROW synonym {narrow!r}"
    how = "is_a" if depth == 1 else f"is_a ({depth} levels)"
    conf = CONFIDENCE["hierarchy" if depth == 1 else "hierarchy_indirect"]
    text = f"{shown} {how} {broad} {term.label(broad)}, {_sources(narrow, broad)}"
    return Equivalence(True, "hierarchy", conf, text, "b" if a_is_narrow else "a")


def _sources(*cids: str) -> str:
    """ "Disease Ontology", "NCI Thesaurus" or both, for the ids an explanation names."""
    return " + ".join(dict.fromkeys(sorted(ontology_of(c) for c in cids if ":" in c))) or ONTOLOGY


def _components(a: Resolved, b: Resolved, vocab: DiagnosisVocabulary) -> Equivalence | None:
    """One name is a compositional name ("X due to Y", "X with Y", "A or B") and a component of it is
    the other name: a narrower statement of it (hierarchy tier; the other name is the broader one, unless the
    component is one of the compositional name's alternatives or examples)."""
    if not a.parts and not b.parts:
        return None
    pairs: tuple[tuple[Resolved, Resolved, Side], ...] = ((a, b, "b"), (b, a, "a"))
    for x, y, y_side in pairs:
        # the other name whole, or one of its alternatives ("Rh or ABO incompatibility")
        targets = [("", y)] + [(f" ({r} {q!r})", resolve(q, vocab)) for r, q in y.parts if r == "alternative"]
        for role, part in x.parts:
            p = resolve(part, vocab)
            for where, t in targets:
                if conflict(p.features, t.features):
                    continue
                eq = _exact(p, t) or _curated(p, t, vocab, False) or _ontology(p, t, False)
                if eq is not None:
                    text = f"{role} {part!r} of {x.name!r} ~ {y.name!r}{where}: {eq.explanation}"
                    side = None if role.startswith(("alternative", "example")) else y_side
                    return Equivalence(True, "hierarchy", CONFIDENCE["component"], text, side)
    return None


def _compare(a: Resolved, b: Resolved, vocab: DiagnosisVocabulary, allow_hierarchy: bool) -> Equivalence:
    found = _compare_forms(a, b, vocab, allow_hierarchy)
    if not found.equivalent or not (a.rewrites or b.rewrites):
        return found
    # cite the lay name / drug name / qualifier rule that gave a form (lay names: their public source)
    why = "; ".join(dict.fromkeys(reason for _, reason in (*a.rewrites, *b.rewrites)))
    return Equivalence(True, found.tier, found.confidence, f"{found.explanation}; via {why}", found.broader)


def _compare_forms(
    a: Resolved, b: Resolved, vocab: DiagnosisVocabulary, allow_hierarchy: bool
) -> Equivalence:
    if not a.forms or not b.forms:
        return Equivalence(False, None, 0.0, "an empty name matches nothing")
    if not a.signature & b.signature:
        return Equivalence(False, None, 0.0, "no tier matched (no shared name, group, concept or head noun)")
    found = _exact(a, b)
    if found is not None:
        return found
    for form in a.forms if vocab.distinct else ():  # a curated "different" wins over every tier below
        if vocab.distinct.get(form, frozenset()) & b.forms:
            return Equivalence(False, None, 0.0, f"curated as distinct diseases: {a.main!r} vs {b.main!r}")
    found = _curated(a, b, vocab, allow_hierarchy) or _ontology(a, b, allow_hierarchy)
    if found is not None:
        return found
    if allow_hierarchy and (component := _components(a, b, vocab)) is not None:
        return component
    apart = ontology_match.distinct(a.concepts, b.concepts) if a.concepts.exact and b.concepts.exact else None
    if apart is not None:  # two Disease Ontology concepts, neither is_a the other: never merged by words
        term = ontology_match.terminology()
        ca, cb = apart
        why = f"distinct concepts {ca} {term.label(ca)} and {cb} {term.label(cb)} ({_sources(ca, cb)})"
        return Equivalence(False, None, 0.0, f"no tier matched ({why})")
    ov = overlap(a.features, b.features)
    if ov.added:  # the longer name narrows the shorter: a subtype by name, not the same disease
        if not allow_hierarchy:
            return Equivalence(False, None, 0.0, "a subtype by name; hierarchy not allowed")
        a_narrow = len(a.features.specific) >= len(b.features.specific)
        narrow, broad = (a, b) if a_narrow else (b, a)
        extra = " ".join(w for w in narrow.main.split() if w not in broad.main.split()) or "a qualifier"
        text = f"{narrow.main!r} names a subtype of {broad.main!r} (adds {extra!r})"
        return Equivalence(True, "hierarchy", CONFIDENCE["hierarchy_by_name"], text, "b" if a_narrow else "a")
    course = _course_form(a, b) if ov.jaccard and allow_hierarchy and vocab.use_terminology else None
    if course is not None:
        return course
    if ov.jaccard:
        conf = round(OVERLAP_BASE + OVERLAP_SLOPE * ov.jaccard, 4)
        shared = " ".join(sorted(a.features.specific & b.features.specific))
        return Equivalence(True, "overlap", conf, f"content overlap {ov.jaccard:.2f} on {shared!r}")
    return Equivalence(False, None, 0.0, f"no tier matched ({ov.why})")


_ACUTE = frozenset({stem("acute")})


def _course_form(a: Resolved, b: Resolved) -> Equivalence | None:
    """Qualifier rule Q7: "acute X" names X itself where X is (nearly) always acute ("acute myocardial
    infarction"), but a subtype of X where the terminology also knows "chronic X" as a disease (both courses
    recognised: "acute hepatitis B", "acute cholecystitis")."""
    if a.features.specific ^ b.features.specific != _ACUTE:
        return None
    side: Side = "b" if a.features.specific >= _ACUTE else "a"
    narrow, broad = (a, b) if side == "b" else (b, a)
    term = ontology_match.terminology()
    for form in broad.forms:
        chronic = term.concepts(name_key(f"chronic {form}"))
        if chronic:
            why = f"{narrow.main!r} names a subtype of {broad.main!r}: {chronic[0]} {term.label(chronic[0])}"
            text = f"{why} is the other course ({ontology_of(chronic[0])}; qualifier rule Q7)"
            return Equivalence(True, "hierarchy", CONFIDENCE["hierarchy_by_name"], text, side)
    return None


def _by_context(
    a: Resolved, b: Resolved, context: Sequence[str], v: DiagnosisVocabulary, allow_hierarchy: bool
) -> Equivalence | None:
    """When one name is an unresolved abbreviation, read it through the context and compare again."""
    if a.acronym == b.acronym:  # neither (most pairs), or both: context cannot help
        return None
    for x, y in ((a, b), (b, a)):
        if x.acronym:
            swapped = x is b
            if not context:
                return Equivalence(
                    False, None, 0.0, f"ambiguous abbreviation {x.name!r}: no context to read it"
                )
            found = acronyms.resolve(x.name, context)
            if found.sense is None:
                return Equivalence(False, None, 0.0, f"no tier matched ({found.why})")
            eq = _compare(resolve(found.sense, v), y, v, allow_hierarchy)
            if eq.equivalent and eq.tier is not None:
                conf = round(min(eq.confidence, CONFIDENCE["by_context"]), 4)
                read = Equivalence(True, eq.tier, conf, f"{found.why}; {eq.explanation}", eq.broader)
                return read.flipped() if swapped else read
            return None
    return None


def equivalent(
    a: str, b: str, *, vocab: DiagnosisVocabulary | None = None, context: Sequence[str] = ()
) -> Equivalence:
    """How (and whether) two diagnosis names are clinically equivalent; see the module docstring.
    ``context``: the other names of the differential and the ground truth, read to resolve an ambiguous
    abbreviation (``clineval.text.names.acronyms``); without it "MS" stays unresolved."""
    v = load_vocabulary() if vocab is None else vocab
    ra, rb = resolve(a, v), resolve(b, v)
    found = _compare(ra, rb, v, True)
    if found.equivalent or ra.acronym == rb.acronym:
        return found
    return _by_context(ra, rb, [*context, a, b] if context else [], v, True) or found


_RANK = {t: i for i, t in enumerate(TIERS)}


def best_match(
    name: str,
    candidates: Sequence[str],
    *,
    vocab: DiagnosisVocabulary | None = None,
    allow_hierarchy: bool = True,
    context: Sequence[str] = (),
) -> tuple[int | None, Equivalence]:
    """The candidate most equivalent to ``name``: best tier first, then highest confidence, then earliest.
    An ambiguous abbreviation is read through the candidates and ``context`` together (see ``equivalent``)."""
    v = load_vocabulary() if vocab is None else vocab
    target = resolve(name, v)
    names = [*candidates, *context, name]
    best: tuple[int, float, int] | None = None
    best_eq: Equivalence | None = None
    for i, cand in enumerate(candidates):
        other = resolve(cand, v)
        eq = _compare(target, other, v, allow_hierarchy)
        if not eq.equivalent and target.acronym != other.acronym and len(names) > 2:
            eq = _by_context(target, other, names, v, allow_hierarchy) or eq
        if eq.equivalent and eq.tier is not None:
            key = (_RANK[eq.tier], -eq.confidence, i)
            if best is None or key < best:
                best, best_eq = key, eq
                if key[0] == 0:
                    break
    if best is None or best_eq is None:
        return None, Equivalence(False, None, 0.0, f"none of {len(candidates)} candidates is equivalent")
    return best[2], best_eq


def synonyms_of(name: str, *, vocab: DiagnosisVocabulary | None = None) -> tuple[str, ...]:
    """Other names of the same diagnosis: its curated synonym group and the LABEL/EXACT names of its
    Disease Ontology concept (for finding a diagnosis in free text by any of its names)."""
    v = load_vocabulary() if vocab is None else vocab
    r = resolve(name, v)
    found = [m for g in sorted(r.groups) for m in v.groups[g]]
    if v.use_terminology and not r.groups:  # a curated group is the whole decision when there is one
        term = ontology_match.terminology()
        found += [n for cid in sorted(r.concepts.exact) for n in term.names(cid)]
    keys = set(r.forms)
    return tuple(dict.fromkeys(n for n in found if name_key(n) not in keys))
