"""Retrieval judgments: TREC qrels (``format: trec_qrels``) and ``retrieval_judgments`` JSONL.

Both give one Case per judged query, with ``reference.data["qrels"] = {doc_id: grade}`` (graded
relevance, e.g. 0-3; grade >= 1 is relevant for the binary measures, as in trec_eval).

- ``trec_qrels``: a standard qrels file, ``query 0 doc_id grade`` per line (whitespace separated), and an
  optional topics file: ``query_id<TAB>text`` per line (``.tsv``/``.txt``), or TREC XML
  (``<topic number="1">text</topic>``, ``.xml``). Queries are those of the qrels, in file order (trec_eval
  only evaluates judged queries); a topic without judgments is not a case.
- ``retrieval_judgments``: JSONL, one judgment per line ``{query, doc_id, chunk_id, grade, source_type}``
  (``query_id`` optional; without it the query text is the id). With ``unit: chunk`` the judged unit is the
  chunk (``chunk_id``), else the document (a document judged through several chunks keeps its highest
  grade). ``reference.data["source_types"] = {unit_id: source_type}`` when the lines carry source types.
  ``metadata`` (an object) on a line is merged into its query's case metadata (e.g. ``query_type``).
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from clineval.core import Case, CaseInput, LoadedDataset, Reference
from clineval.core.errors import DataFileError
from clineval.core.helpers.lines import decode_text, file_lines, text_lines
from clineval.datasets._io import file_hash, read_bytes, resolve, stream_jsonl


class TrecQrelsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    topics: str | None = None


class JudgmentsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    unit: Literal["doc", "chunk"] = "doc"


def parse_qrels(data: bytes, path: Path) -> dict[str, dict[str, int]]:
    """``{query_id: {doc_id: grade}}`` from qrels text, queries in file order."""
    qrels: dict[str, dict[str, int]] = {}
    for number, line in file_lines(data, path):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise DataFileError(
                f"expected 4 fields, got {len(fields)}", path=path, line=number, hint="query 0 doc_id grade"
            )
        query, _, doc, grade = fields
        try:
            qrels.setdefault(query, {})[doc] = int(grade)
        except ValueError:
            raise DataFileError(f"grade {grade!r} is not an integer", path=path, line=number) from None
    if not qrels:
        raise DataFileError("no judgments in the qrels file", path=path)
    return qrels


def parse_topics(data: bytes, path: Path) -> dict[str, str]:
    """``{query_id: text}`` from ``id<TAB>text`` lines or TREC XML ``<topic number="...">``."""
    text = decode_text(data, path)
    if path.suffix.lower() == ".xml" or text.lstrip().startswith("<"):
        try:
            root = ET.fromstring(text)
        except ET.ParseError as err:
            raise DataFileError(f"malformed XML: {err}", path=path, line=err.position[0]) from None
        return {
            str(t.get("number")): " ".join("".join(t.itertext()).split())
            for t in root.iter("topic")
            if t.get("number") is not None
        }
    topics: dict[str, str] = {}
    for number, line in text_lines(text):
        if not line.strip():
            continue
        query, sep, body = line.partition("\t")
        if not sep:
            raise DataFileError("expected 'query_id<TAB>text'", path=path, line=number)
        topics[query.strip()] = body.strip()
    return topics


def load_trec_qrels(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    opts = TrecQrelsOptions.model_validate(options)
    path = resolve(opts.path, base_dir)
    data = read_bytes(path)
    qrels = parse_qrels(data, path)
    topics: dict[str, str] = {}
    digest_input = data
    if opts.topics is not None:
        topics_path = resolve(opts.topics, base_dir)
        topics_bytes = read_bytes(topics_path)
        topics = parse_topics(topics_bytes, topics_path)
        digest_input = data + b"\0" + topics_bytes
        missing = [q for q in qrels if q not in topics]
        if missing:
            raise DataFileError(
                f"{len(missing)} judged queries have no topic (e.g. {missing[0]!r})",
                path=topics_path,
                hint="use the topics file of these qrels",
            )
    cases = [
        Case(
            id=query,
            input=CaseInput(question=topics.get(query)),
            reference=Reference(data={"qrels": judged}),
        )
        for query, judged in qrels.items()
    ]
    return LoadedDataset(cases=cases, content_hash=file_hash(digest_input), source=str(path))


def _grade(obj: dict[str, Any], path: Path, line: int) -> int:
    grade = obj.get("grade")
    if isinstance(grade, bool) or not isinstance(grade, int):
        raise DataFileError(f"field 'grade' should be an integer, got {grade!r}", path=path, line=line)
    return grade


def _id(obj: dict[str, Any], key: str, path: Path, line: int) -> str:
    value = obj.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise DataFileError(f"missing field {key!r}", path=path, line=line)
    if not isinstance(value, str | int):
        raise DataFileError(f"field {key!r} should be text, got {type(value).__name__}", path=path, line=line)
    return str(value)


def load_retrieval_judgments(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    opts = JudgmentsOptions.model_validate(options)
    path = resolve(opts.path, base_dir)
    digest = hashlib.sha256()  # of the file's bytes, read as they are parsed
    queries: dict[str, dict[str, Any]] = {}
    for line, obj in stream_jsonl(path, digest):
        text = _id(obj, "query", path, line)
        query_id = _id(obj, "query_id", path, line) if obj.get("query_id") is not None else text
        unit = _id(obj, "chunk_id" if opts.unit == "chunk" else "doc_id", path, line)
        grade = _grade(obj, path, line)
        entry = queries.setdefault(query_id, {"text": text, "qrels": {}, "types": {}, "meta": {}})
        entry["qrels"][unit] = max(grade, entry["qrels"].get(unit, grade))
        source_type = obj.get("source_type")
        if source_type is not None:
            entry["types"][unit] = str(source_type)
        meta = obj.get("metadata")
        if meta is not None:
            if not isinstance(meta, dict):
                raise DataFileError("field 'metadata' should be an object", path=path, line=line)
            entry["meta"].update(meta)
    if not queries:
        raise DataFileError("no judgments in the file", path=path)
    cases = []
    for query_id, entry in queries.items():
        ref: dict[str, Any] = {"qrels": entry["qrels"], "unit": opts.unit}
        if entry["types"]:
            ref["source_types"] = entry["types"]
        cases.append(
            Case(
                id=query_id,
                input=CaseInput(question=entry["text"]),
                reference=Reference(data=ref),
                metadata=entry["meta"],
            )
        )
    return LoadedDataset(cases=cases, content_hash="sha256:" + digest.hexdigest(), source=str(path))
