"""Disease terminology from the Human Disease Ontology: names, synonym scopes, is_a hierarchy.

The artefact ``data/terminology/disease_ontology.tsv.gz`` is built by ``scripts/build_terminology.py``
(sources, licences and attribution: ``data/terminology/SOURCE.md``). It is read lazily, on the first call of
``load_terminology()`` (cached), never at import of ``clineval.text``.

API (keys are ``clineval.text.names.diagnosis_vocab.name_key`` of a name; ids are current "DOID:..." ids)::

    term = load_terminology()
    term.concepts(key)         -> ("DOID:585",)        LABEL or EXACT names only; an ambiguous key gives all
    term.is_ambiguous(key)     -> bool                 the key is a LABEL/EXACT name of 2+ concepts
    term.narrower(key)         -> concept ids of which the key is a NARROW synonym
    term.related(key)          -> concept ids of which the key is a RELATED or BROAD synonym
    term.label(cid)            -> "nephrolithiasis"    (KeyError for an unknown or obsolete id)
    term.parents(cid)          -> ("DOID:557",)
    term.ancestors(cid)        -> {"DOID:557": 1, ...} every ancestor, depth 1 = parent, the shortest path
    term.name_source(key, cid) -> NameSource(display, scope, release, licence); .explain() for a reason text
    term.names(cid)            -> the LABEL and EXACT names of a concept, as written
    term.version, term.sha256  -> provenance of the artefact

Scope policy (the caller's, documented here): LABEL and EXACT names are synonyms of the concept; a NARROW
synonym names something more specific than the concept, so it is hierarchy (the key is a subtype of the
concept), never a synonym; RELATED and BROAD synonyms are neither and should not be used for equivalence.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

ARTEFACT = "disease_ontology.tsv.gz"
SOURCE_TEXT = "Disease Ontology"


@dataclass(frozen=True)
class NameSource:
    """Where one name of a concept comes from."""

    display: str
    scope: str  # LABEL, EXACT, NARROW, RELATED, BROAD
    release: str  # "2016" or "2026"
    licence: str  # "CC BY 3.0" or "CC0 1.0"

    def explain(self, cid: str, label: str) -> str:
        """E.g. "DOID:585 nephrolithiasis, EXACT synonym 'kidney stones', Disease Ontology 2016"."""
        kind = "label" if self.scope == "LABEL" else f"{self.scope} synonym"
        return f"{cid} {label}, {kind} '{self.display}', {SOURCE_TEXT} {self.release}"


_KIND = {"LABEL": "exact", "EXACT": "exact", "NARROW": "narrow", "RELATED": "related", "BROAD": "related"}


@dataclass
class Terminology:
    """The loaded terminology; build with ``load_terminology()`` (or ``parse_terminology(bytes)``).

    Artefact layout (gzipped UTF-8 TSV): header lines ``#format``, ``#version``, ``#scopes`` (names by index),
    ``#releases`` (``release=licence`` by index); ``C id label parent,parent``; ``N key id scope-index
    release-index display`` (display empty when equal to the key); ``A key`` for an ambiguous key.
    """

    version: str
    sha256: str
    _concepts: dict[str, tuple[str, tuple[str, ...]]]  # id -> (label, parents)
    _names: dict[str, list[tuple[str, str, str, str]]]  # id -> [(key, scope index, release index, display)]
    _index: dict[str, dict[str, list[str]]]  # "exact" / "narrow" / "related" -> key -> ids
    _header: dict[str, list[str]]
    _ambiguous: frozenset[str]
    _ancestors: dict[str, Mapping[str, int]] = field(default_factory=dict)

    def concepts(self, key: str) -> tuple[str, ...]:
        """Concepts with this key as LABEL or EXACT name (several when the key is ambiguous)."""
        return tuple(self._index["exact"].get(key, ()))

    def is_ambiguous(self, key: str) -> bool:
        return key in self._ambiguous

    def narrower(self, key: str) -> tuple[str, ...]:
        """Concepts of which the key is a NARROW synonym (the key names a subtype of each)."""
        return tuple(self._index["narrow"].get(key, ()))

    def related(self, key: str) -> tuple[str, ...]:
        """Concepts of which the key is a RELATED or BROAD synonym (not equivalence evidence)."""
        return tuple(self._index["related"].get(key, ()))

    def label(self, cid: str) -> str:
        """The current label (KeyError for an unknown or obsolete id)."""
        return self._concepts[cid][0]

    def parents(self, cid: str) -> tuple[str, ...]:
        entry = self._concepts.get(cid)
        return entry[1] if entry else ()

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
        return frozenset(self._index["exact"])

    def names(self, cid: str) -> tuple[str, ...]:
        """The LABEL and EXACT names of a concept, as written (its synonyms, for text search)."""
        exact = {i for i, name in enumerate(self._header["scopes"]) if name in ("LABEL", "EXACT")}
        return tuple(
            display or key for key, scope_i, _, display in self._names.get(cid, ()) if int(scope_i) in exact
        )

    def name_source(self, key: str, cid: str) -> NameSource:
        """The stored name of ``cid`` with this key (KeyError when the concept has none)."""
        for name_key, scope_i, release_i, display in self._names.get(cid, ()):
            if name_key == key:
                release, licence = self._header["releases"][int(release_i)].split("=", 1)
                return NameSource(display or key, self._header["scopes"][int(scope_i)], release, licence)
        raise KeyError((key, cid))

    def __len__(self) -> int:
        return len(self._concepts)


def parse_terminology(blob: bytes) -> Terminology:
    """A ``Terminology`` from the bytes of the artefact."""
    header: dict[str, list[str]] = {}
    concepts: dict[str, tuple[str, tuple[str, ...]]] = {}
    names: dict[str, list[tuple[str, str, str, str]]] = {}
    rows: list[tuple[str, str, str]] = []  # (scope index, key, id)
    ambiguous: list[str] = []
    for line in gzip.decompress(blob).decode("utf-8").splitlines():
        kind, *cells = line.split("\t")
        if kind == "N":
            key, cid, scope_i, release_i, display = cells
            names.setdefault(cid, []).append((key, scope_i, release_i, display))
            rows.append((scope_i, key, cid))
        elif kind == "C":
            concepts[cells[0]] = (cells[1], tuple(cells[2].split(",")) if cells[2] else ())
        elif kind == "A":
            ambiguous.append(cells[0])
        else:
            header[kind.lstrip("#")] = cells
    return Terminology(
        version=header["version"][0],
        sha256=hashlib.sha256(blob).hexdigest(),
        _concepts=concepts,
        _names=names,
        _index=_indexes(rows, header["scopes"]),
        _header=header,
        _ambiguous=frozenset(ambiguous),
    )


def _indexes(rows: list[tuple[str, str, str]], scopes: list[str]) -> dict[str, dict[str, list[str]]]:
    """key -> concept ids, per kind of scope (``_KIND``)."""
    kinds = [_KIND[scope] for scope in scopes]
    index: dict[str, dict[str, list[str]]] = {"exact": {}, "narrow": {}, "related": {}}
    for scope_i, key, cid in rows:
        index[kinds[int(scope_i)]].setdefault(key, []).append(cid)
    return index


@lru_cache(maxsize=1)
def load_terminology() -> Terminology:
    """The packaged Disease Ontology terminology, read once."""
    path = resources.files("clineval.text.names") / "data" / "terminology" / ARTEFACT
    return parse_terminology(path.read_bytes())
