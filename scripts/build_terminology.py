"""Build the packaged disease terminology (``clineval.text.names.terminology``) from the Human Disease
Ontology and the NCI Thesaurus disease subset (``scripts/terminology_ncit.py``: which NCIt concepts and names
are kept, and how the two ontologies are linked).

    .venv/bin/python scripts/build_terminology.py [--data ../shared/data] [--check]

Writes ``src/clineval/text/names/data/terminology/disease_terminology.tsv.gz`` (deterministic: sorted, gzip
mtime 0, byte-identical on rerun). ``--check`` builds in memory and exits 1 when the packaged file differs.
Needs the optional extra ``build-vocab`` (obonet); the runtime reads only the artefact.

Sources (``DATA/disease_ontology``, see its SOURCE.md): ``HumanDO_2016-06-17.obo`` (CC BY 3.0),
``subsets_2026/*.obo`` and ``HumanDO_labels_parents_2026.tsv`` (CC0 1.0); ``DATA/ncit_disease`` (CC BY 4.0).
HPO is NOT used (licence).

Parser choice (parsing the 2016 file, 4.0 MB, 9,300 terms; wall time, 3 runs, 2-core build machine):

==========  =======  ==================================================================================
parser      time     notes
==========  =======  ==================================================================================
obonet 1.3  0.57 s   pure Python, plain dicts; fails on the file as shipped (no blank line before the
                     stanza at line 101891), fine once a blank line is inserted in memory
fastobo     0.54-    Rust, strict OBO 1.4: fails on the file as shipped (a def xref with spaces,
0.14        0.65 s   "JA:Epilepsy Genetics Kiel", line 6189) and on the missing blank line; needs both fixed
pronto 2.7  1.0 s    built on fastobo: the same two failures, twice as slow
==========  =======  ==================================================================================

obonet is used: as fast as fastobo, the one repair it needs is trivial, synonyms come as their raw OBO text
(parsed here: text, scope).

Artefact format: gzipped text, columnar (format 3, issue 25 round 2; written by ``terminology_format.py``):
paired sections of one value per line that the reader zips into dicts of raw strings, parsed per key on use.
With DO + NCIt (74k names) the row-per-name TSV of format 2 parsed in 3x the time of this layout
(``benchmarks/bench_terminology.py``).

Concepts: every current term of ``HumanDO_labels_parents_2026.tsv`` (the table lists only live terms; obsolete
ones are absent). Label and parents from the table (parent labels resolved to ids by the table's labels;
labels are unique). A 2016 term that is not obsolete is mapped to its current id: itself if current, else
through an ``alt_id`` of the 2016 or 2026 files, else through its label equal to a current label; a 2016 term
that maps to nothing (obsoleted since) is dropped. Its synonyms join the concept, and its 2016 label, when it
differs from the current one, becomes an EXACT synonym of release 2016.

Names: the current label (scope LABEL, 2026, CC0 1.0) and every synonym with its OBO scope (EXACT / RELATED /
NARROW / BROAD), release (2016: CC BY 3.0; 2026: CC0 1.0). Filters, in order:

1. a SNOMED CT semantic tag at the end is stripped: "(disorder)", "(finding)", "(morphologic abnormality)",
   "(qualifier value)", "(situation)", "(event)", "(morphology)"; then a trailing "NOS" / ", NOS" ("not
   otherwise specified" qualifies the coding, not the disease);
2. an all-caps name containing a comma is dropped (OMIM entry titles such as "NEPHROLITHIASIS, CALCIUM
   OXALATE": a variant or subtype heading, not a name of the concept);
3. a name whose key (``clineval.text.names.diagnosis_vocab.name_key``) is empty is dropped;
4. one name per (concept, key): the strongest scope wins (LABEL > EXACT > NARROW > RELATED > BROAD), then the
   2026 release (CC0), then a display form equal to the key, then the first in sorted order.

A key that is the LABEL or an EXACT name of two or more concepts of one ontology is listed in ``ambiguous``:
the loader returns all its concepts. ``L`` rows link an NCIt concept to the DOID it is the same concept as
(one-to-one cross-references only; ``terminology_ncit.links``).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import terminology_ncit as ncit  # scripts/ (this script's folder is on sys.path)
from terminology_format import serialise  # scripts/

from clineval.text.names.diagnosis_vocab import name_key

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
OUTPUT = ROOT / "src" / "clineval" / "text" / "names" / "data" / "terminology" / "disease_terminology.tsv.gz"
FORMAT = 3
SCOPES = ("LABEL", "EXACT", "NARROW", "RELATED", "BROAD")
RELEASES = {"2026": "CC0 1.0", "2016": "CC BY 3.0", ncit.NCIT_RELEASE: ncit.NCIT_LICENCE}
RELEASE_RANK = {release: i for i, release in enumerate(RELEASES)}
_SYNONYM = re.compile(r'^"((?:[^"\\]|\\.)*)"\s+(EXACT|RELATED|NARROW|BROAD)\b')
_SEMANTIC_TAG = re.compile(
    r"\s*\((?:disorder|finding|morphologic abnormality|qualifier value|situation|event|morphology)\)\s*$",
    re.I,
)
_NOS = re.compile(r",?\s+NOS\s*$")
_STANZA = re.compile(r"(?m)(?<=\S)\n(?=\[(?:Term|Typedef|Instance)\])")


@dataclass(frozen=True, order=True)
class Name:
    """One name of a concept, as stored."""

    cid: str
    key: str
    rank: int  # index in SCOPES
    release_rank: int  # index in RELEASES: 0 = DO 2026, 1 = DO 2016, 2 = NCIt
    altered: bool  # the display differs from the key (case, punctuation): a verbatim lower-case form wins
    display: str


def read_obo(path: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """(data-version, id -> term dict) of one OBO file, obsolete terms included."""
    import obonet  # build-time only: the optional extra build-vocab

    text = _STANZA.sub("\n\n", path.read_text(encoding="utf-8"))
    graph = obonet.read_obo(io.StringIO(text), ignore_obsolete=False)
    return str(graph.graph.get("data-version", "")), {str(k): dict(v) for k, v in graph.nodes(data=True)}


def parse_synonym(raw: str) -> tuple[str, str] | None:
    """(text, scope) of an OBO synonym value, None when malformed."""
    match = _SYNONYM.match(raw)
    if match is None:
        return None
    return re.sub(r"\\(.)", r"\1", match.group(1)), match.group(2)


def clean_display(text: str) -> str | None:
    """The name with SNOMED suffixes stripped; None for an OMIM-style all-caps heading."""
    text = _NOS.sub("", _SEMANTIC_TAG.sub("", text.strip())).strip()
    if "," in text and text.upper() == text and any(c.isalpha() for c in text):
        return None
    return text or None


def read_current(path: Path, extra_labels: dict[str, str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(id -> label, id -> parent ids) from the 2026 labels/parents table.

    A parent label that is not a row of the table (the root, "disease") is resolved through
    ``extra_labels`` (label -> id of the OBO files) and becomes a concept itself.
    """
    labels: dict[str, str] = {}
    parent_labels: dict[str, set[str]] = defaultdict(set)
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            cid, label, parent = (row[k].strip().strip('"') for k in ("id", "label", "subClassOf"))
            labels[cid] = label
            if parent:
                parent_labels[cid].add(parent)
    by_label = {label: cid for cid, label in labels.items()}
    for label in sorted({p for ps in parent_labels.values() for p in ps} - set(by_label)):
        if label in extra_labels:
            by_label[label] = extra_labels[label]
            labels[extra_labels[label]] = label
    parents = {
        cid: sorted(by_label[p] for p in parent_labels.get(cid, ()) if p in by_label and by_label[p] != cid)
        for cid in labels
    }
    return labels, parents


def obo_labels(*releases: dict[str, dict[str, Any]]) -> dict[str, str]:
    """label -> id of the live terms of the OBO files (earlier releases win)."""
    found: dict[str, str] = {}
    for terms in releases:
        for tid, term in sorted(terms.items()):
            if "name" in term and not is_obsolete(term):
                found.setdefault(str(term["name"]), tid)
    return found


def is_obsolete(term: dict[str, Any]) -> bool:
    return str(term.get("is_obsolete", "false")).lower() == "true"


def term_synonyms(term: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for raw in term.get("synonym", []):
        parsed = parse_synonym(str(raw))
        if parsed is not None:
            yield parsed


def alias_map(*releases: dict[str, dict[str, Any]]) -> dict[str, str]:
    """alt_id -> primary id over the given releases (later releases win)."""
    aliases: dict[str, str] = {}
    for terms in releases:
        for tid, term in terms.items():
            for alt in term.get("alt_id", []):
                aliases[str(alt)] = tid
    return aliases


def map_2016(
    tid: str, label: str, current: dict[str, str], aliases: dict[str, str], by_key: dict[str, str]
) -> str | None:
    """The current id of a 2016 term, None when it has none."""
    for candidate in (tid, aliases.get(tid, ""), aliases.get(aliases.get(tid, ""), "")):
        if candidate in current:
            return candidate
    return by_key.get(name_key(label))


def make_name(cid: str, text: str, scope: str, release: str) -> Name | None:
    display = clean_display(text)
    if display is None:
        return None
    key = name_key(display)
    if not key:
        return None
    return Name(cid, key, SCOPES.index(scope), RELEASE_RANK[release], display != key, display)


def raw_names(
    current: dict[str, str], subsets: dict[str, dict[str, Any]], old: dict[str, dict[str, Any]]
) -> Iterator[Name | None]:
    """Every candidate name (None for those filtered out)."""
    for cid, label in current.items():
        yield make_name(cid, label, "LABEL", "2026")
    for tid, term in subsets.items():
        if tid in current and not is_obsolete(term):
            for text, scope in term_synonyms(term):
                yield make_name(tid, text, scope, "2026")
    aliases = alias_map(old, subsets)
    by_key = {name_key(label): cid for cid, label in sorted(current.items())}
    for tid, term in sorted(old.items()):
        if is_obsolete(term) or "name" not in term:
            continue
        cid = map_2016(tid, str(term["name"]), current, aliases, by_key)
        if cid is None:
            continue
        if name_key(str(term["name"])) != name_key(current[cid]):
            yield make_name(cid, str(term["name"]), "EXACT", "2016")
        for text, scope in term_synonyms(term):
            yield make_name(cid, text, scope, "2016")


def best_names(names: Iterable[Name]) -> list[Name]:
    """One name per (concept, key), the strongest first (filter 4)."""
    best: dict[tuple[str, str], Name] = {}
    for name in sorted(names):
        best.setdefault((name.cid, name.key), name)
    return sorted(best.values())


def ambiguous_keys(names: Iterable[Name]) -> list[str]:
    owners: dict[str, set[str]] = defaultdict(set)
    for name in names:
        if name.rank <= SCOPES.index("EXACT"):
            owners[name.key].add(name.cid)
    return sorted(key for key, cids in owners.items() if len(cids) > 1)


def merge_subsets(folder: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """All 2026 subset files merged: synonyms and alt_ids united per term."""
    merged: dict[str, dict[str, Any]] = {}
    version = ""
    for path in sorted(folder.glob("*.obo")):
        file_version, terms = read_obo(path)
        version = version or file_version.split("/subsets/")[0]
        for tid, term in terms.items():
            into = merged.setdefault(tid, {"synonym": [], "alt_id": []})
            into["synonym"] += [s for s in term.get("synonym", []) if s not in into["synonym"]]
            into["alt_id"] += [a for a in term.get("alt_id", []) if a not in into["alt_id"]]
            into.setdefault("xref", [])
            into["xref"] += [x for x in term.get("xref", []) if x not in into["xref"]]
            into["is_obsolete"] = term.get("is_obsolete", into.get("is_obsolete", "false"))
            if "name" in term:
                into["name"] = term["name"]
    return version, merged


def build(data: Path) -> dict[str, Any]:
    """The artefact's content (written by ``serialise``; layout: see ``clineval.text.names.terminology``)."""
    folder = data / "disease_ontology"
    version_2026, subsets = merge_subsets(folder / "subsets_2026")
    version_2016, old = read_obo(folder / "HumanDO_2016-06-17.obo")
    current, parents = read_current(folder / "HumanDO_labels_parents_2026.tsv", obo_labels(subsets, old))
    do_names = best_names(n for n in raw_names(current, subsets, old) if n is not None)
    labels, ncit_parents, synonyms = ncit.read_ncit(data)
    keep, _grouping = ncit.kept_concepts(labels, ncit_parents)
    linked = ncit.links(ncit_xrefs(current, subsets, old), keep)
    ncit_names = best_names(ncit_raw_names(keep, labels, synonyms, linked, do_names))
    concepts = {cid: [current[cid], parents[cid]] for cid in current}
    concepts |= {cid: [labels[cid], ncit.kept_parents(cid, keep, ncit_parents)] for cid in keep}
    return {
        "format": FORMAT,
        "version": f"{release_version(version_2016, version_2026)}; {ncit.NCIT_RELEASE}",
        "scopes": list(SCOPES),
        "releases": [[release, licence] for release, licence in RELEASES.items()],
        "concepts": dict(sorted(concepts.items())),
        "names": names_by_concept(sorted(do_names + ncit_names)),
        "ambiguous": sorted(set(ambiguous_keys(do_names)) | set(ambiguous_keys(ncit_names))),
        "links": linked,
    }


def ncit_xrefs(
    current: dict[str, str], subsets: dict[str, dict[str, Any]], old: dict[str, dict[str, Any]]
) -> dict[str, set[str]]:
    """DOID -> NCIt cross-references: the 2026 subset files', else the 2016 file's (its term mapped to the
    current id as its synonyms are)."""
    found = ncit.do_ncit_xrefs(subsets, current)
    aliases = alias_map(old, subsets)
    by_key = {name_key(label): cid for cid, label in sorted(current.items())}
    from_2016: dict[str, set[str]] = defaultdict(set)
    for tid, term in sorted(old.items()):
        if is_obsolete(term) or "name" not in term:
            continue
        cid = map_2016(tid, str(term["name"]), current, aliases, by_key)
        if cid is not None and cid not in found:
            from_2016[cid] |= ncit.do_ncit_xrefs({cid: term}, current).get(cid, set())
    return found | {cid: refs for cid, refs in from_2016.items() if refs}


def ncit_raw_names(
    keep: set[str],
    labels: dict[str, str],
    synonyms: dict[str, list[str]],
    linked: dict[str, str],
    do_names: list[Name],
) -> Iterator[Name]:
    """The NCIt names kept (``terminology_ncit`` rules 3 and 4)."""
    do_owners: dict[str, set[str]] = defaultdict(set)
    for n in do_names:
        if n.rank <= SCOPES.index("EXACT"):
            do_owners[n.key].add(n.cid)
    for cid in sorted(keep):
        label = make_name(cid, labels[cid], "LABEL", ncit.NCIT_RELEASE)
        if label is not None:
            yield label
        for text in synonyms.get(cid, ()):
            name = make_name(cid, text, "EXACT", ncit.NCIT_RELEASE) if ncit.synonym_allowed(text) else None
            if name is None:
                continue
            owners = do_owners.get(name.key)
            if owners and linked.get(cid) not in owners:
                continue  # rule 4: the Disease Ontology reads this name as another concept
            yield name


def release_version(version_2016: str, version_2026: str) -> str:
    """E.g. "DO 2016-06-17 + 2026-07-31" from the two files' data-version headers."""
    return f"DO {version_2016.removeprefix('releases/')} + {version_2026.removeprefix('doid/releases/')}"


def names_by_concept(names: list[Name]) -> dict[str, list[list[Any]]]:
    """id -> [[key, scope index, release index, display ("" when equal to the key)], ...]."""
    grouped: dict[str, list[list[Any]]] = defaultdict(list)
    for n in names:
        grouped[n.cid].append([n.key, n.rank, n.release_rank, "" if n.display == n.key else n.display])
    return dict(sorted(grouped.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--check", action="store_true", help="exit 1 if the packaged artefact is stale")
    args = parser.parse_args(argv)
    blob = serialise(build(args.data))
    if args.check:
        same = OUTPUT.exists() and OUTPUT.read_bytes() == blob
        print("up to date" if same else f"STALE: {OUTPUT} differs from a fresh build")
        return 0 if same else 1
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_bytes(blob)
    print(f"wrote {OUTPUT} ({len(blob):,} bytes, sha256 {hashlib.sha256(blob).hexdigest()[:12]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
