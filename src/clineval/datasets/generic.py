"""Generic JSONL / CSV loader with a field mapping.

``fields`` maps our names to the file's: ``id``, ``question``, ``answer`` (gold letter / label),
``answer_text``, ``options`` (one field holding a dict or list, or a list of fields, one per option, lettered
A, B, C...), ``context``, ``vignette``, ``ground_truth``. ``metadata`` lists the fields kept for
stratification (default: every other scalar field). A missing mapped field is an error naming the line; it is
never read as an empty string.

DDx rows: a record with a ``ground_truth`` field is a differential-diagnosis case. ``ground_truth`` is a list
of diagnosis names, a ``{name: [supporting findings]}`` object, or (CSV) one string of names separated by
``;``; it fills ``reference.differential`` (in its order) and ``reference.findings``. The ``answer`` field is
then optional, and ``question`` defaults to the ``vignette`` (one of the two is required). ``vignette``
always fills ``input.vignette``. Rows without ``ground_truth`` keep the MCQ rules above.
"""

from __future__ import annotations

import csv
import hashlib
import string
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.core import Case, CaseInput, LoadedDataset, Reference
from clineval.core.errors import DataFileError
from clineval.datasets._io import csv_checked, csv_lines, resolve
from clineval.datasets.cases import case_id_for, check_unique
from clineval.datasets.lazy_cases import JsonlCases


class FieldMap(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = "id"
    question: str = "question"
    answer: str | None = "answer"
    answer_text: str | None = None
    options: str | list[str] | None = "options"
    context: str | None = None
    vignette: str | None = "vignette"
    ground_truth: str | None = "ground_truth"


class GenericOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    fields: FieldMap = Field(default_factory=FieldMap)
    metadata: list[str] | None = None


def _iter_csv(path: Path, digest: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """The rows of a CSV file with a header, read as they are parsed (a bad row stops the load there)."""
    reader = csv.DictReader(csv_lines(path, digest))
    for row in csv_checked(iter(reader), path, lambda: reader.reader.line_num):
        if None in row:
            raise DataFileError("row has more cells than the header", path=path, line=reader.line_num)
        yield reader.line_num, {k: v for k, v in row.items() if v != ""}


def _options(row: dict[str, Any], spec: str | list[str] | None, path: Path, line: int) -> dict[str, str]:
    if spec is None:
        return {}
    if isinstance(spec, list):
        return {string.ascii_uppercase[i]: str(_get(row, name, path, line)) for i, name in enumerate(spec)}
    value = row.get(spec)
    if value is None:
        return {}
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, list):
        return {string.ascii_uppercase[i]: str(v) for i, v in enumerate(value)}
    raise DataFileError(f"field {spec!r} should be an object or a list of options", path=path, line=line)


def _get(row: dict[str, Any], name: str, path: Path, line: int) -> Any:
    if row.get(name) is None:
        raise DataFileError(
            f"missing field {name!r}",
            path=path,
            line=line,
            hint="fix the record or the dataset's `fields` mapping",
        )
    return row[name]


def _ground_truth(value: Any, path: Path, line: int) -> dict[str, list[str]]:
    """``[names]`` | ``{name: [findings]}`` | ``"a; b"`` -> {name: findings}, order kept."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(";") if part.strip()]
    if isinstance(value, list):
        if not all(isinstance(v, str) and v.strip() for v in value):
            raise DataFileError("ground_truth should list diagnosis names (strings)", path=path, line=line)
        value = {name: [] for name in value}
    if isinstance(value, dict) and value:
        findings: dict[str, list[str]] = {}
        for name, items in value.items():
            items = [items] if isinstance(items, str) else items
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise DataFileError(
                    f"ground_truth: findings of {name!r} should be a list of strings", path=path, line=line
                )
            findings[str(name)] = list(items)
        return findings
    raise DataFileError(
        "ground_truth should be a non-empty list of diagnosis names or an object {name: [findings]}",
        path=path,
        line=line,
    )


def _case(row: dict[str, Any], line: int, index: int, opts: GenericOptions, path: Path) -> Case:
    fmap = opts.fields
    ddx = fmap.ground_truth is not None and row.get(fmap.ground_truth) is not None
    findings = _ground_truth(row[fmap.ground_truth], path, line) if ddx and fmap.ground_truth else {}
    vignette = row.get(fmap.vignette) if fmap.vignette else None
    if vignette is not None and not isinstance(vignette, str):
        raise DataFileError(f"field {fmap.vignette!r} should be a string", path=path, line=line)
    has_answer = fmap.answer is not None and (not ddx or row.get(fmap.answer) is not None)
    answer = str(_get(row, fmap.answer, path, line)) if fmap.answer and has_answer else None
    if ddx and row.get(fmap.question) is None:
        if vignette is None:
            raise DataFileError(
                f"missing field {fmap.vignette or 'vignette'!r} (or {fmap.question!r})", path=path, line=line
            )
        question = vignette
    else:
        question = str(_get(row, fmap.question, path, line))
    context = row.get(fmap.context) if fmap.context else None
    used = {v for v in (fmap.id, fmap.question, fmap.answer, fmap.answer_text, fmap.context) if v}
    used |= {v for v in (fmap.vignette, fmap.ground_truth) if v}
    used |= set(fmap.options) if isinstance(fmap.options, list) else {fmap.options} if fmap.options else set()
    keys = (
        opts.metadata
        if opts.metadata is not None
        else [k for k, v in row.items() if k not in used and isinstance(v, str | int | float | bool)]
    )
    row_for_id = {"id": row.get(fmap.id)}
    return Case(
        id=case_id_for(row_for_id, index + 1),
        input=CaseInput(
            question=question,
            options=_options(row, fmap.options, path, line),
            context=[context] if isinstance(context, str) else list(context or []),
            vignette=vignette,
        ),
        reference=Reference(
            answer=answer,
            answer_text=row.get(fmap.answer_text) if fmap.answer_text else None,
            differential=list(findings),
            findings={name: items for name, items in findings.items() if items},
        ),
        metadata={k: row[k] for k in keys if k in row},
    )


def _load(options: Mapping[str, Any], base_dir: Path, csv_format: bool) -> LoadedDataset:
    opts = GenericOptions.model_validate(options)
    path = resolve(opts.path, base_dir)
    if not csv_format:  # read from the file when used (datasets.lazy_cases); the id fallback: line - 1
        lazy, content_hash = JsonlCases.load(path, lambda row, line: _case(row, line, line - 1, opts, path))
        return LoadedDataset(cases=lazy, content_hash=content_hash, source=str(path))
    digest = hashlib.sha256()
    # The 0-based id fallback counts data records (rows after the header).
    cases = [_case(row, line, index, opts, path) for index, (line, row) in enumerate(_iter_csv(path, digest))]
    check_unique(cases, path)
    return LoadedDataset(cases=cases, content_hash="sha256:" + digest.hexdigest(), source=str(path))


def load_jsonl(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    return _load(options, base_dir, csv_format=False)


def load_csv(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    return _load(options, base_dir, csv_format=True)
