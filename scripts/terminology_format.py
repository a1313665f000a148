"""Writing the packaged terminology artefact (format 3, columnar), for ``scripts/build_terminology.py``.
Read by ``clineval.text.names.terminology.parse_terminology``."""

from __future__ import annotations

import gzip
import io
from collections import defaultdict
from collections.abc import Iterator
from typing import Any


def _cell(text: str) -> str:
    return " ".join(text.replace("\t", " ").split())


def tsv_lines(artefact: dict[str, Any]) -> Iterator[str]:
    """Format 3, columnar: "#" headers, then ``#section<TAB>name`` sections of one value per line; paired
    sections share their order: ``concept_ids`` / ``concepts`` (``label<TAB>parents``), ``keys`` / ``names``
    (``id|scope|release|display`` cells), ``ambiguous``, ``links``."""
    yield f"#format\t{artefact['format']}"
    yield f"#version\t{artefact['version']}"
    yield "#scopes\t" + "\t".join(artefact["scopes"])
    yield "#releases\t" + "\t".join(f"{release}={licence}" for release, licence in artefact["releases"])
    concepts = artefact["concepts"]
    yield "#section\tconcept_ids"
    yield from concepts
    yield "#section\tconcepts"
    yield from (f"{_cell(label)}\t{','.join(parents)}" for label, parents in concepts.values())
    by_key: dict[str, list[str]] = defaultdict(list)
    for cid, names in artefact["names"].items():
        for key, scope, release, display in names:
            by_key[key].append(f"{cid}|{scope}|{release}|{_cell(display)}")
    keys = sorted(by_key)
    yield "#section\tkeys"
    yield from keys
    yield "#section\tnames"
    yield from ("\t".join(by_key[key]) for key in keys)
    yield "#section\tambiguous"
    yield from artefact["ambiguous"]
    yield "#section\tlinks"
    yield from (f"{ncit_id}\t{doid}" for ncit_id, doid in artefact["links"].items())


def serialise(artefact: dict[str, Any]) -> bytes:
    """Deterministic gzip of the TSV (mtime 0, no file name)."""
    raw = "\n".join(tsv_lines(artefact)).encode("utf-8") + b"\n"
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as fh:
        fh.write(raw)
    return buffer.getvalue()
