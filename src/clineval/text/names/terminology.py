"""Disease terminology from the Human Disease Ontology and the NCI Thesaurus: names, synonym scopes, is_a.

The artefact ``data/terminology/disease_terminology.tsv.gz`` is built by ``scripts/build_terminology.py``
(sources, licences and attribution: ``data/terminology/SOURCE.md``). It is read lazily, on the first call of
``load_terminology()`` (cached), never at import of ``clineval.text``.

API (keys are ``clineval.text.names.diagnosis_vocab.name_key`` of a name; ids are current "DOID:..." ids and
"NCIT:C..." codes of the NCIt disease subset's disease and finding concepts)::

    term = load_terminology()
    term.concepts(key)         -> ("DOID:585",)        LABEL or EXACT names only; an ambiguous key gives all
    term.is_ambiguous(key)     -> bool                 the key is a LABEL/EXACT name of 2+ concepts
    term.narrower(key)         -> concept ids of which the key is a NARROW synonym
    term.related(key)          -> concept ids of which the key is a RELATED or BROAD synonym
    term.label(cid)            -> "nephrolithiasis"    (KeyError for an unknown or obsolete id)
    term.parents(cid)          -> ("DOID:557",)
    term.ancestors(cid)        -> {"DOID:557": 1, ...} every ancestor, depth 1 = parent, the shortest path
    term.canonical(cid)        -> the DOID an NCIt concept is linked to (one-to-one xref), else the id itself
    term.ontologies(cid)       -> {"DO"}, {"NCIt"} or both (a canonical id linked across)
    term.name_source(key, cid) -> NameSource(display, scope, release, licence); .explain() for a reason text
    term.names(cid)            -> the LABEL and EXACT names of a concept, as written
    term.version, term.sha256  -> provenance of the artefact

Scope policy (the caller's, documented here): LABEL and EXACT names are synonyms of the concept; a NARROW
synonym names something more specific than the concept, so it is hierarchy (the key is a subtype of the
concept), never a synonym; RELATED and BROAD synonyms are neither and should not be used for equivalence.

The two ontologies are one graph: an NCIt concept linked to a DOID (``L`` rows) is that DOID
(``canonical``), and the parents of a canonical id are its DO parents and its linked NCIt concept's parents,
canonicalised (``parents``, ``ancestors``); an NCIt concept not linked stays an ``NCIT:`` id of its own.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

ARTEFACT = "disease_terminology.tsv.gz"
SOURCE_TEXT = "Disease Ontology"
NCIT_TEXT = "NCI Thesaurus"


def source_text(release: str) -> str:
    """ "Disease Ontology 2016", "NCI Thesaurus 2018-06-08" for a stored release."""
    if release.startswith("NCIt "):
        return f"{NCIT_TEXT} {release.removeprefix('NCIt ')}"
    return f"{SOURCE_TEXT} {release}"


def ontology_of(cid: str) -> str:
    """ "NCI Thesaurus" for an NCIT: id, else "Disease Ontology"."""
    return NCIT_TEXT if cid.startswith("NCIT:") else SOURCE_TEXT


@dataclass(frozen=True)
class NameSource:
    """Where one name of a concept comes from."""

    display: str
    scope: str  # LABEL, EXACT, NARROW, RELATED, BROAD
    release: str  # "2016" or "2026" (Disease Ontology), "NCIt 2018-06-08"
    licence: str  # "CC BY 3.0", "CC0 1.0" or "CC BY 4.0"

    def explain(self, cid: str, label: str) -> str:
        """E.g. "DOID:585 nephrolithiasis, EXACT synonym 'kidney stones', Disease Ontology 2016",
        "NCIT:C50799 Ventricular Fibrillation, EXACT synonym 'VF', NCI Thesaurus 2018-06-08"."""
        kind = "label" if self.scope == "LABEL" else f"{self.scope} synonym"
        return f"{cid} {label}, {kind} '{self.display}', {source_text(self.release)}"


_DO, _NCIT = frozenset({"DO"}), frozenset({"NCIt"})
_BOTH = _DO | _NCIT
_KIND = {"LABEL": "exact", "EXACT": "exact", "NARROW": "narrow", "RELATED": "related", "BROAD": "related"}


@dataclass
class Terminology:
    """The loaded terminology; build with ``load_terminology()`` (or ``parse_terminology(bytes)``).

    Artefact layout (format 3, gzipped UTF-8 text, columnar): header lines ``#format``, ``#version``,
    ``#scopes`` (names by index), ``#releases`` (``release=licence`` by index); then sections (concept ids,
    their ``label<TAB>parents``, name keys, their ``id|scope|release|display`` cells, ambiguous keys, NCIt ->
    DOID links), described in ``scripts/build_terminology.py`` (``tsv_lines``).

    Load cost is one split per line: a concept's label and parents, and a key's names, stay raw strings until
    first asked for (``_concept``, ``_entries``), and the per-concept name lists are built only for
    explanations (``_names``).
    """

    version: str
    sha256: str
    _concepts: dict[str, str] = field(repr=False)  # id -> "label\tparent,parent" (split on use)
    _keys: dict[str, str] = field(repr=False)  # key -> "id|scope|release|display\t..." (split on use)
    _header: dict[str, list[str]] = field(repr=False)
    _ambiguous: frozenset[str] = field(repr=False)
    _links: dict[str, str] = field(default_factory=dict, repr=False)  # NCIt id -> DOID (one-to-one xref)
    _linked_from: dict[str, str] = field(default_factory=dict, repr=False)  # DOID -> NCIt id
    _ancestors: dict[str, Mapping[str, int]] = field(default_factory=dict, repr=False)
    _parents: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _by_concept: dict[str, list[tuple[str, str, str, str]]] = field(default_factory=dict, repr=False)
    _parsed: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict, repr=False)
    _split: dict[str, tuple[str, str]] = field(default_factory=dict, repr=False)

    def _concept(self, cid: str) -> tuple[str, str] | None:
        """(label, "parent,parent") of a concept, or None."""
        found = self._split.get(cid)
        if found is None:
            raw = self._concepts.get(cid)
            if raw is None:
                return None
            label, _, parents = raw.partition("\t")
            found = self._split[cid] = (label, parents)
        return found

    def _entries(self, key: str) -> dict[str, tuple[str, ...]]:
        """kind of scope ("exact", "narrow", "related") -> concept ids with this key, parsed once per key."""
        found = self._parsed.get(key)
        if found is None:
            kinds = _kinds(self._header["scopes"])
            by_kind: dict[str, list[str]] = {}
            for cell in self._keys.get(key, "").split("\t") if key in self._keys else ():
                cid, scope_i, _ = cell.split("|", 2)
                by_kind.setdefault(kinds[scope_i], []).append(cid)
            found = self._parsed[key] = {kind: tuple(ids) for kind, ids in by_kind.items()}
        return found

    @property
    def _names(self) -> dict[str, list[tuple[str, str, str, str]]]:
        """id -> [(key, scope index, release index, display), ...], built on first use (explanations)."""
        if not self._by_concept and self._keys:
            for key, raw in self._keys.items():
                for cell in raw.split("\t"):
                    cid, scope_i, release_i, display = cell.split("|", 3)
                    self._by_concept.setdefault(cid, []).append((key, scope_i, release_i, display))
        return self._by_concept

    def canonical(self, cid: str) -> str:
        """The DOID a linked NCIt concept is, else ``cid``."""
        return self._links.get(cid, cid)

    def ontologies(self, cid: str) -> frozenset[str]:
        """The ontologies that hold a canonical id: {"NCIt"}, {"DO"}, or both when linked."""
        if cid.startswith("NCIT:"):
            return _NCIT
        return _BOTH if cid in self._linked_from else _DO

    def concepts(self, key: str) -> tuple[str, ...]:
        """Concepts with this key as LABEL or EXACT name (several when the key is ambiguous)."""
        return self._entries(key).get("exact", ()) if key in self._keys else ()

    def is_ambiguous(self, key: str) -> bool:
        return key in self._ambiguous

    def narrower(self, key: str) -> tuple[str, ...]:
        """Concepts of which the key is a NARROW synonym (the key names a subtype of each)."""
        return self._entries(key).get("narrow", ()) if key in self._keys else ()

    def related(self, key: str) -> tuple[str, ...]:
        """Concepts of which the key is a RELATED or BROAD synonym (not equivalence evidence)."""
        return self._entries(key).get("related", ()) if key in self._keys else ()

    def label(self, cid: str) -> str:
        """The current label (KeyError for an unknown or obsolete id)."""
        found = self._concept(cid)
        if found is None:
            raise KeyError(cid)
        return found[0]

    def parents(self, cid: str) -> tuple[str, ...]:
        """Canonical parents: of a DOID, its DO parents and its linked NCIt concept's (canonicalised)."""
        found = self._parents.get(cid)
        if found is None:
            own = self._concept(self.canonical(cid))
            ups = own[1].split(",") if own and own[1] else []
            other = self._concept(self._linked_from.get(cid, ""))
            ups += other[1].split(",") if other and other[1] else ()
            found = self._parents[cid] = tuple(dict.fromkeys(self.canonical(u) for u in ups if u != cid))
        return found

    def ancestors(self, cid: str) -> Mapping[str, int]:
        """Every ancestor of a concept with its minimal depth (1 = parent); cached per concept."""
        found = self._ancestors.get(cid)
        if found is None:
            found = MappingProxyType(self._walk_up(cid))
            self._ancestors[cid] = found
        return found

    def _walk_up(self, cid: str) -> dict[str, int]:
        depths: dict[str, int] = {}
        frontier, depth = list(self.parents(cid)), 1
        while frontier:  # breadth first: the first depth seen is the minimum
            next_frontier: list[str] = []
            for parent in frontier:
                if parent not in depths and parent != cid:
                    depths[parent] = depth
                    next_frontier.extend(self.parents(parent))
            frontier, depth = next_frontier, depth + 1
        return depths

    def concept_ids(self) -> tuple[str, ...]:
        """Every current concept id."""
        return tuple(self._concepts)

    def exact_keys(self) -> frozenset[str]:
        """Every key of a LABEL or EXACT name."""
        exact = "|".join(str(i) for i, name in enumerate(self._header["scopes"]) if _KIND[name] == "exact")
        cell = re.compile(rf"(?:^|\t)[^|\t]*\|(?:{exact})\|")  # a cell whose scope (2nd field) is exact
        return frozenset(k for k, raw in self._keys.items() if cell.search(raw))

    def key_count(self) -> int:
        """How many distinct name keys the artefact stores (any scope)."""
        return len(self._keys)

    def names(self, cid: str) -> tuple[str, ...]:
        """The LABEL and EXACT names of a concept, as written (its synonyms, for text search)."""
        exact = {str(i) for i, name in enumerate(self._header["scopes"]) if name in ("LABEL", "EXACT")}
        return tuple(
            display or key for key, scope_i, _, display in self._names.get(cid, ()) if scope_i in exact
        )

    def name_source(self, key: str, cid: str) -> NameSource:
        """The stored name of ``cid`` with this key (KeyError when the concept has none)."""
        for cell in self._keys.get(key, "").split("\t") if key in self._keys else ():
            name_cid, scope_i, release_i, display = cell.split("|", 3)
            if name_cid == cid:
                release, licence = self._header["releases"][int(release_i)].split("=", 1)
                return NameSource(display or key, self._header["scopes"][int(scope_i)], release, licence)
        raise KeyError((key, cid))

    def __len__(self) -> int:
        return len(self._concepts)


@lru_cache(maxsize=4)
def _kinds_cached(scopes: tuple[str, ...]) -> dict[str, str]:
    return {str(i): _KIND[scope] for i, scope in enumerate(scopes)}


def _kinds(scopes: list[str]) -> dict[str, str]:
    """scope index (as stored) -> kind of scope (``_KIND``)."""
    return _kinds_cached(tuple(scopes))


def parse_terminology(blob: bytes) -> Terminology:
    """A ``Terminology`` from the bytes of the artefact (format 3, columnar: ``scripts/build_terminology.py``
    ``tsv_lines``): each section is split into lines once and paired sections are zipped into dicts of raw
    strings (concepts by id, names by key); everything else is parsed on first use."""
    text = gzip.decompress(blob).decode("utf-8").rstrip("\n")
    head, *parts = text.split("\n#section\t")
    header = {cells[0].lstrip("#"): cells[1:] for cells in (h.split("\t") for h in head.split("\n"))}
    if header.get("format") != ["3"]:
        raise ValueError(f"terminology artefact format {header.get('format')}: this reader reads format 3")
    sections: dict[str, list[str]] = {}
    for part in parts:
        name, _, body = part.partition("\n")
        sections[name] = body.split("\n") if body else []
    links = dict(line.split("\t", 1) for line in sections["links"])
    return Terminology(
        version=header["version"][0],
        sha256=hashlib.sha256(blob).hexdigest(),
        _concepts=dict(zip(sections["concept_ids"], sections["concepts"], strict=True)),
        _keys=dict(zip(sections["keys"], sections["names"], strict=True)),
        _header=header,
        _ambiguous=frozenset(sections["ambiguous"]),
        _links=links,
        _linked_from={doid: ncit for ncit, doid in links.items()},
    )


@lru_cache(maxsize=1)
def load_terminology() -> Terminology:
    """The packaged Disease Ontology + NCIt terminology, read once."""
    path = resources.files("clineval.text.names") / "data" / "terminology" / ARTEFACT
    return parse_terminology(path.read_bytes())
