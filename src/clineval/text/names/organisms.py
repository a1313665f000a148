"""An organism named for the infection it causes (issue 25, round 3): "Toxoplasma gondii" for toxoplasmosis,
"Zika virus" for Zika virus infection, "C. difficile colitis" for Clostridium difficile colitis. Like the lay
names (``clineval.text.names.lay_names``) it adds a *form* to the name, with the reason, and every tier of
``clineval.text.names.equivalence`` reads the name through it. Only the ontologies' own names are used; there
is no organism list.

Which names: a name that is the bare organism and that no ontology name holds itself, of one of three shapes:

* a virus: the name's last word ends in "virus" ("Zika virus", "cytomegalovirus", "varicella-zoster virus");
* a binomial, as written: a capitalised genus and a lower-case Latin epithet ("Toxoplasma gondii",
  "Clostridium difficile"; not "Urinary tract": "tract" is no Latin epithet);
* an abbreviated genus with its full stop ("C. difficile colitis", "E. coli"): the initial is expanded to the
  one genus of the ontologies' names that is followed by that epithet; none when several are.

What the name is read as, first that found:

1. the concept the ontologies name "<organism> infection" ("zika virus infection": DOID:0060478);
2. for a binomial, the disease the ontologies name from the genus with "-osis" / "-iasis" ("Histoplasma
   capsulatum" -> histoplasmosis, "Candida albicans" -> candidiasis): the disease of the whole genus, which
   covers the species.

Must not apply, and does not:

* the concept must be an infection *by an agent*: under DO "disease by infectious agent" or NCIt viral /
  parasitic infection, or a concept whose label names the genus ("Clostridium Difficile Colitis"). A site
  infection ("urinary tract infection", "wound infection") is never reached from an organism;
* several concepts and none of them covers the others (a genus or organism with several diseases): no form
  at all, so the organism is never read as one of its diseases. Where one covers the others it is used: the
  others are subtypes of it, so a specific disease ("oral thrush") is a *subtype* of the organism's reading
  ("Candida albicans" -> candidiasis), never the same;
* a name that says more than the organism ("MRSA colonisation", "GBS carrier", "H. pylori serology",
  "Zika virus exposure"): colonisation, carriage, exposure and test states are not infections, and the rule
  reads only the bare organism;
* the genus of a binomial alone ("Streptococcus", "Toxoplasma"): a single capitalised word is no binomial; a
  word such as "sclera" or "thrombus" would otherwise read as sclerosis or thrombosis.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

from clineval.text.names import ontology_match
from clineval.text.names.diagnosis_vocab import name_key

# DO disease by infectious agent (its bacterial, viral, fungal, parasitic, helminth branches are under it)
# and the NCIt agent classes not linked to it (canonical ids: ancestors are canonicalised).
AGENT_CLASSES = frozenset({"DOID:0050117", "DOID:104", "DOID:934", "DOID:1564", "DOID:1398", "NCIT:C3439"})
_BINOMIAL = re.compile(r"^([A-Z][a-z]{3,})[\s-]+([a-z]{3,})$")
_EPITHET = re.compile(r"(?:i|ae|us|um|is|es|ans|ens|ile|ale|a|x|oides)$")
_ABBREVIATED = re.compile(r"\b([A-Z])\.\s*([a-z]{3,})\b")
_PAREN = re.compile(r"\s*\([^)]*\)")
_GENUS_ENDINGS = ("ia", "as", "us", "um", "es", "a", "i", "e", "")
_DISEASE_ENDINGS = ("osis", "iasis", "asis")


def _stripped(name: str) -> str:
    return _PAREN.sub("", name).strip()


def may_name_organism(name: str) -> bool:
    """A cheap pre-check on the raw name: one of the three shapes of the module docstring."""
    text = _stripped(name)
    if _ABBREVIATED.search(text):
        return True
    words = text.split()
    if words and words[-1].lower().endswith("virus"):
        return True
    return _binomial(text) is not None


def _binomial(text: str) -> tuple[str, str] | None:
    match = _BINOMIAL.match(text)
    if match is None or not _EPITHET.search(match.group(2)):
        return None
    return match.group(1).lower(), match.group(2)


@lru_cache(maxsize=1)
def _genus_index() -> dict[tuple[str, str], frozenset[str]]:
    """(initial, epithet key) -> the words of 4+ letters that precede that epithet in an ontology name."""
    found: dict[tuple[str, str], set[str]] = {}
    for key in ontology_match.terminology().exact_keys():
        words = key.split()
        for first, second in pairwise(words):
            if len(first) >= 4 and first.isalpha():
                found.setdefault((first[0], second), set()).add(first)
    return {k: frozenset(v) for k, v in found.items()}


def _expanded(text: str) -> tuple[str, str] | None:
    """(the name with its abbreviated genus written out, the genus) when exactly one genus fits."""
    match = _ABBREVIATED.search(text)
    if match is None:
        return None
    epithet = name_key(match.group(2))
    genera = _genus_index().get((match.group(1).lower(), epithet), frozenset())
    if len(genera) != 1:
        return None
    (genus,) = genera
    return f"{text[: match.start()]}{genus.capitalize()} {match.group(2)}{text[match.end() :]}", genus


def _by_agent(cid: str, genus: str) -> bool:
    term = ontology_match.terminology()
    return bool(AGENT_CLASSES & set(term.ancestors(cid))) or genus in name_key(term.label(cid)).split()


def _reading(key: str, genus: str, binomial: bool) -> list[tuple[str, str]]:
    """(form, concept) the bare organism ``key`` is read as (module docstring): one concept per ontology
    that names it (the DO and NCIt concepts of one disease are kept apart where they are not linked)."""
    term = ontology_match.terminology()
    tiers = [[f"{key} infection"]]
    if binomial:
        stems = {
            genus.removesuffix(e) for e in _GENUS_ENDINGS if genus.endswith(e) and len(genus) - len(e) >= 4
        }
        tiers.append(sorted(f"{s}{d}" for s in stems for d in _DISEASE_ENDINGS))
    for forms in tiers:
        found = {(f, term.canonical(c)) for f in forms for c in term.concepts(f) if _by_agent(c, genus)}
        if not found:
            continue
        read: list[tuple[str, str]] = []
        for prefix in ("DOID:", "NCIT:"):
            concepts = {c for _, c in found if c.startswith(prefix)}
            top = [c for c in concepts if all(c == o or c in term.ancestors(o) for o in concepts)]
            if concepts and len(top) != 1:
                return []  # several diseases, none covering the others: never read as one of them
            read += [(min(f for f, c in found if c == top[0]), top[0])] if top else []
        return read
    return []


@lru_cache(maxsize=16384)
def organism_forms(name: str) -> tuple[tuple[str, str], ...]:
    """(form, reason) for a name that is an organism (module docstring); () for most names."""
    text = _stripped(name)
    added: list[tuple[str, str]] = []
    expanded = _expanded(text)
    if expanded is not None:
        text, genus = expanded
        added.append((name_key(text), f"abbreviated genus: {genus!r}, the one the ontologies' names fit"))
    key = name_key(text)
    term = ontology_match.terminology()
    if term.concepts(key):
        return tuple(added)  # an ontology name itself ("C. difficile colitis" once written out)
    binomial = _binomial(text)
    genus = binomial[0] if binomial else key.split()[0] if key.endswith("virus") else ""
    if not genus:
        return tuple(added)
    for form, cid in _reading(key, genus, binomial is not None):
        shown = ontology_match.explain(form, _stored(form, cid))
        added.append((form, f"organism named for the infection it causes: {shown}"))
    return tuple(added)


def _stored(key: str, cid: str) -> str:
    term = ontology_match.terminology()
    return next((c for c in term.concepts(key) if term.canonical(c) == cid), cid)
