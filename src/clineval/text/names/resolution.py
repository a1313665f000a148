"""What is known about one diagnosis name, computed once per vocabulary and cached: its normalised forms (a
misspelt ontology word corrected; an organism read as the infection it causes,
``clineval.text.names.organisms``; a double eponym cut at its hyphen read whole), curated groups and
hierarchy nodes, Disease Ontology concepts, overlap features, compositional parts, and a *signature*:
every token through which some tier of ``clineval.text.names.equivalence`` could relate it to another name
(two names with disjoint signatures are not equivalent by any tier, so most pairs stop there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from clineval.text.names import acronyms, ontology_match
from clineval.text.names.compositional import components
from clineval.text.names.diagnosis_vocab import DiagnosisVocabulary, clean_name, name_forms, name_key
from clineval.text.names.features import NameFeatures, analyse
from clineval.text.names.lay_names import extra_forms
from clineval.text.names.ontology_match import NONE as NO_CONCEPTS
from clineval.text.names.ontology_match import Concepts, concepts_of
from clineval.text.names.organisms import may_name_organism, organism_forms

_OR = re.compile(r"\s+or\s+", re.IGNORECASE)
_OF = re.compile(r"\s+of\s+(?:the\s+)?", re.IGNORECASE)
# Any word a compositional link starts with (clineval.text.names.compositional.LINKS), "/" or "(": a cheap
# pre-check; a name without one is never split.
_MAY_COMPOSE = re.compile(
    r"[/(]|\b(?:due|secondary|caused|induced|resulting|attributable|related|from|with|and|or|such|like|"
    r"including|e\.g|left|right|bilateral|unilateral|associated|mediated|sided)\b",
    re.IGNORECASE,
)
_CACHE_LIMIT = 100_000


@dataclass(frozen=True, slots=True)
class Resolved:
    forms: frozenset[str]
    main: str
    groups: frozenset[int]
    nodes: tuple[str, ...]
    features: NameFeatures
    concepts: Concepts
    name: str
    parts: tuple[tuple[str, str], ...]  # (role, component) of a compositional name
    signature: frozenset[str] = frozenset()  # what any tier could share with another name (_signature)
    acronym: bool = False  # an abbreviation nothing settles: only context can read it
    rewrites: tuple[tuple[str, str], ...] = ()  # (form, reason): lay name, drug name, qualifier (lay_names)


def _fits(form: str, group: int, main: str, vocab: DiagnosisVocabulary) -> bool:
    """A one-word alias ("ASD") joins a group only if the group shares a word with the name's main form
    ("Autism spectrum disorder (ASD)" is not in the atrial septal defect group)."""
    words = set(main.split())
    if form == main or len(words) < 2 or len(form.split()) > 1:
        return True
    return any(words & set(name_key(m).split()) for m in vocab.groups[group])


def resolve(name: str, vocab: DiagnosisVocabulary) -> Resolved:
    found = vocab.cache.get(name)
    if found is None:
        if len(vocab.cache) >= _CACHE_LIMIT:
            vocab.cache.clear()
        forms = name_forms(name)
        if vocab.use_terminology and (fixed := _spelling_fixed(forms[0])) is not None:
            forms = (*forms, fixed)  # "Schizophrenifonn disorder": a misspelt ontology word, corrected
        rewrites = extra_forms(forms)  # "lockjaw" -> "tetanus", "AF with RVR" -> "af" (clineval...lay_names)
        if vocab.use_terminology and may_name_organism(name):  # "Toxoplasma gondii" -> "toxoplasmosis"
            rewrites = (*rewrites, *((f, why) for f, why in organism_forms(name) if f not in forms))
        if (
            vocab.use_terminology
            and " " not in name.strip()
            and (cut := ontology_match.truncated_eponym(name))
        ):
            rewrites = (*rewrites, cut)  # "Guillain": Guillain-Barre syndrome cut at its hyphen
        forms = (*forms, *(f for f, _ in rewrites)) if rewrites else forms
        groups = frozenset(
            g for f in forms if (g := vocab.group_of(f)) is not None and _fits(f, g, forms[0], vocab)
        )
        nodes = tuple(n for f in forms if (n := vocab.node_of(f)) in vocab.ancestors)
        concepts = concepts_of(forms) if vocab.use_terminology else NO_CONCEPTS
        resolved = Resolved(
            frozenset(forms) - {""}, forms[0], groups, nodes, analyse(name), concepts, name, parts_of(name)
        )
        object.__setattr__(resolved, "rewrites", rewrites)
        object.__setattr__(resolved, "signature", _signature(resolved, vocab))  # once, before it is shared
        object.__setattr__(resolved, "acronym", unresolved_acronym(resolved))
        found = vocab.cache[name] = resolved
    assert isinstance(found, Resolved)
    return found


def _spelling_fixed(key: str) -> str | None:
    words = key.split()
    fixed = [ontology_match.spelling_fix(w) or w for w in words]
    return " ".join(fixed) if fixed != words else None


def _own_signature(r: Resolved, vocab: DiagnosisVocabulary) -> set[str]:
    sig = set(r.forms) | {f"g{g}" for g in r.groups} | {f"n{n}" for n in r.nodes}
    sig |= {f"n{up}" for n in r.nodes for up in vocab.ancestors.get(n, ())}
    c = r.concepts
    sig |= {f"c{x}" for x in c.exact} | {f"c{x}" for _, x in c.narrow_evidence}
    if c.exact:
        term, broad = ontology_match.terminology(), ontology_match.broad_concepts()
        sig |= {
            f"c{up}"
            for x in c.exact
            for up, d in term.ancestors(x).items()
            if d <= ontology_match.MAX_DEPTH and up not in broad
        }
    return sig


def _signature(r: Resolved, vocab: DiagnosisVocabulary) -> frozenset[str]:
    """Every token through which some tier could relate this name to another: its forms, curated groups
    and nodes (with ancestors), ontology concepts (with ancestors), head noun, and the same of its
    components. Two names with disjoint signatures are not equivalent by any tier: most pairs stop here."""
    sig = _own_signature(r, vocab) | {f"h{r.features.head}"}
    for _, part in r.parts:
        sig |= _own_signature(resolve(part, vocab), vocab)
    return frozenset(sig)


@lru_cache(maxsize=32768)
def parts_of(name: str) -> tuple[tuple[str, str], ...]:
    """(role, component) of a compositional name, one level of nesting followed; () for a simple name."""
    if not _MAY_COMPOSE.search(name):  # most names: no link word; at most "X of Y", split without parsing
        of = _OF.split(clean_name(name), maxsplit=1)
        return (("of", of[1].strip()),) if len(of) == 2 and of[1].strip() else ()
    comp = components(name)
    of = _OF.split(comp.condition, maxsplit=1)  # "manic episode of bipolar disorder": the disease it is of
    if (not comp.patterns or comp.patterns == ("laterality",)) and len(of) == 1:
        return ()
    parts = [("condition", comp.condition)] if comp.condition and comp.patterns else []
    parts += [("cause", c) for c in comp.causes] + [("co-condition", c) for c in comp.with_]
    parts += [("alternative", c) for c in comp.alternatives] + [("example", c) for c in comp.examples]
    parts += [("of", of[1])] if len(of) == 2 else []
    nested = [(f"{role} part", q) for role, p in parts for _, q in parts_of(p) if p != name]
    nested += [(f"{role} part", q.strip()) for role, p in parts for q in _OR.split(p) if q.strip() != p]
    return tuple(dict.fromkeys(x for x in parts + nested if x[1] and x[1] != name))


def unresolved_acronym(r: Resolved) -> bool:
    """An abbreviation no inventory, group or concept settles ("MS"): only context can read it."""
    return acronyms.is_acronym(r.name) and len(r.forms) == 1 and not r.groups and not r.concepts.exact
