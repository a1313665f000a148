"""The NCI Thesaurus layer of the packaged disease terminology (used by ``scripts/build_terminology.py``).

Source: ``DATA/ncit_disease/ncit-disease-2018-06-08.json.gz`` (see its SOURCE.md): the NCIt disease subset as
distributed by the Mondo Disease Ontology project, OBO-Graphs JSON, CC BY 4.0. Every NCIt synonym in it is
``hasExactSynonym``; the label is scope LABEL, a synonym scope EXACT (the Disease Ontology's policy: both
merge).

Which concepts are kept (disease and finding concepts only; the subset also holds anatomy, genes, gene
products, abnormal cells, pathways, properties and drugs):

1. descendants of C2991 "Disease or Disorder", and of these branches of C3367 "Finding": Sign or Symptom,
   Finding by Site or System, Finding by Cause, Lesion, Mass, Other Finding. Microscopic Finding, Clinical
   Test Result, Cancer TNM Finding and Clinical Course of Disease are left out (pathology, test and staging
   terms);
2. *grouping classes* never match and are dropped: C7057 "Disease, Disorder or Finding", C2991, C3367, their
   direct children ("Rare Disorder", "Syndrome", "Neoplasm", "Sign or Symptom" ...) and every class whose
   label contains " by " ("Disorder by Site", "Finding by Cause"); a dropped class's children are re-parented
   to its nearest kept ancestors, so no is_a path is lost.

Names, beyond the Disease Ontology's filters (``clean_display``, empty keys):

3. a synonym with a comma is an index inversion ("Syndrome, Stroke", "CVA, Cerebrovascular Accident") and is
   dropped; so is an all-capitals synonym of two or more words (a coding heading: "UNDETERMINED STROKE");
4. a synonym whose key is a LABEL or EXACT name of Disease Ontology concepts is kept only when the NCIt
   concept is linked to one of them: where the two ontologies disagree on what a name means, they are kept
   apart and the Disease Ontology's reading stands ("Cerebral Infarction", an NCIt synonym of C3390
   Cerebrovascular Accident, is its own DO concept).

Links (``L`` rows): a DOID whose ``xref: NCI:C...`` (2026 subset files) names exactly one kept NCIt concept,
which no other DOID names. One-to-many or many-to-one cross-references are granularity disagreements: both
concepts stay, apart.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

NCIT_FILE = Path("ncit_disease") / "ncit-disease-2018-06-08.json.gz"
NCIT_RELEASE = "NCIt 2018-06-08"
NCIT_LICENCE = "CC BY 4.0"
ROOT = "NCIT:C7057"
DISEASE, FINDING = "NCIT:C2991", "NCIT:C3367"
FINDING_BRANCHES = ("Sign or Symptom", "Finding by Site or System", "Finding by Cause", "Lesion", "Mass")
FINDING_BRANCHES += ("Other Finding",)


def _cid(iri: str) -> str:
    return "NCIT:" + iri.rsplit("_", 1)[1]


def read_ncit(data: Path) -> tuple[dict[str, str], dict[str, set[str]], dict[str, list[str]]]:
    """(id -> label, id -> is_a parents, id -> synonyms) of every class of the file."""
    graph = json.loads(gzip.decompress((data / NCIT_FILE).read_bytes()))["graphs"][0]
    labels: dict[str, str] = {}
    synonyms: dict[str, list[str]] = {}
    for node in graph["nodes"]:
        if node.get("type") != "CLASS" or "lbl" not in node:
            continue
        cid = _cid(node["id"])
        labels[cid] = str(node["lbl"])
        meta = node.get("meta", {})
        synonyms[cid] = [
            str(s["val"]) for s in meta.get("synonyms", []) if s.get("pred") == "hasExactSynonym"
        ]
    parents: dict[str, set[str]] = defaultdict(set)
    for edge in graph["edges"]:
        if edge["pred"] == "is_a":
            parents[_cid(edge["sub"])].add(_cid(edge["obj"]))
    return labels, parents, synonyms


def _descendants(roots: set[str], parents: dict[str, set[str]]) -> set[str]:
    children: dict[str, set[str]] = defaultdict(set)
    for child, ups in parents.items():
        for up in ups:
            children[up].add(child)
    seen: set[str] = set()
    stack = sorted(roots)
    while stack:
        for child in children[stack.pop()]:
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return seen | roots


def kept_concepts(labels: dict[str, str], parents: dict[str, set[str]]) -> tuple[set[str], set[str]]:
    """(kept concepts, grouping classes) by rules 1 and 2 of the module docstring."""
    tops = {c for c, ups in parents.items() if ups & {DISEASE, FINDING}}
    branches = {c for c in tops if FINDING in parents[c] and labels.get(c) in FINDING_BRANCHES}
    within = _descendants({DISEASE} | branches, parents)
    grouping = {ROOT, DISEASE, FINDING} | tops | {c for c in within if " by " in labels.get(c, "")}
    return {c for c in within if c in labels} - grouping, grouping


def kept_parents(cid: str, keep: set[str], parents: dict[str, set[str]]) -> list[str]:
    """The nearest kept ancestors of a concept (through dropped grouping classes)."""
    found: set[str] = set()
    seen: set[str] = set()
    stack = sorted(parents.get(cid, ()))
    while stack:
        up = stack.pop()
        if up in seen or up == cid:
            continue
        seen.add(up)
        if up in keep:
            found.add(up)
        else:
            stack.extend(sorted(parents.get(up, ())))
    return sorted(found)


def links(do_xrefs: dict[str, set[str]], keep: set[str]) -> dict[str, str]:
    """NCIt id -> DOID for one-to-one cross-references only (module docstring)."""
    by_ncit: dict[str, set[str]] = defaultdict(set)
    for doid, refs in do_xrefs.items():
        kept = {r for r in refs if r in keep}
        if len(kept) == 1:
            by_ncit[kept.pop()].add(doid)
    return {n: next(iter(d)) for n, d in sorted(by_ncit.items()) if len(d) == 1}


def do_ncit_xrefs(subsets: dict[str, dict[str, Any]], current: dict[str, str]) -> dict[str, set[str]]:
    """DOID -> its NCIt cross-references ("NCI:C3390" -> "NCIT:C3390") in the 2026 subset files."""
    found: dict[str, set[str]] = {}
    for tid, term in subsets.items():
        refs = {"NCIT:" + str(x).split(":", 1)[1] for x in term.get("xref", []) if str(x).startswith("NCI:C")}
        if tid in current and refs:
            found[tid] = refs
    return found


def synonym_allowed(text: str) -> bool:
    """Rule 3: not an index inversion, not a multi-word all-capitals coding heading."""
    if "," in text:
        return False
    return not (text.upper() == text and len(text.split()) > 1 and any(c.isalpha() for c in text))
