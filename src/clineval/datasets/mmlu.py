"""MMLU loader (Hendrycks et al. 2021, ``cais/mmlu``): four-option questions of one subject.

Sources (``SourceOptions``): ``hf: cais/mmlu, name: SUBJECT, split: test`` (rows ``question``, ``subject``,
``choices`` [4 strings], ``answer`` 0-3), a local JSONL file with those fields, or (``path`` ending ``.csv``)
the authors' headerless CSV: ``question, A, B, C, D, answer letter``. The gold letter is ``"ABCD"[answer]``
(a letter is accepted as well); metadata ``subject`` is the row's, else the ``name`` option, else the file
name without ``_test``/``_dev``/``_val``. Case id: ``<subject>-<0-based row index>``.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from clineval.core import Case, CaseInput, LoadedDataset, Reference
from clineval.core.errors import DataFileError
from clineval.datasets._io import csv_checked, csv_lines, iter_jsonl, require, stream_jsonl
from clineval.datasets.cases import check_unique
from clineval.datasets.hf import SourceOptions, source_bytes

LETTERS = "ABCD"
SPLIT_SUFFIXES = ("_test", "_dev", "_val")


def _gold(value: Any, path: Path, line: int) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(LETTERS):
        return LETTERS[value]
    if isinstance(value, str) and value.strip().upper() in tuple(LETTERS):
        return value.strip().upper()
    raise DataFileError(f"answer must be 0-3 or a letter A-D, got {value!r}", path=path, line=line)


def _csv_rows(path: Path, lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The authors' CSV (no header): question, four choices, the answer letter."""
    reader = csv.reader(lines)
    for cells in csv_checked(reader, path, lambda: reader.line_num):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != 6:
            raise DataFileError(
                f"expected 6 cells (question, A, B, C, D, answer), got {len(cells)}",
                path=path,
                line=reader.line_num,
            )
        yield reader.line_num, {"question": cells[0], "choices": cells[1:5], "answer": cells[5]}


def _default_subject(opts: SourceOptions, path: Path) -> str:
    if opts.hf is not None:
        return opts.name or "mmlu"
    stem = path.stem
    for suffix in SPLIT_SUFFIXES:
        stem = stem.removesuffix(suffix)
    return stem


def _case(row: dict[str, Any], line: int, index: int, subject: str, path: Path) -> Case:
    question = require(row, "question", path, line)
    choices = require(row, "choices", path, line, list)
    if len(choices) != len(LETTERS):
        raise DataFileError(f"choices should hold 4 options, got {len(choices)}", path=path, line=line)
    options = {letter: str(text) for letter, text in zip(LETTERS, choices, strict=True)}
    gold = _gold(require(row, "answer", path, line, object), path, line)
    row_subject = row.get("subject")
    subject = row_subject if isinstance(row_subject, str) and row_subject else subject
    return Case(
        id=f"{subject}-{index}",
        input=CaseInput(question=question, options=options),
        reference=Reference(answer=gold, answer_text=options[gold]),
        metadata={"subject": subject},
    )


def load_mmlu(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    opts = SourceOptions.model_validate(options)
    src = source_bytes(opts, base_dir, "mmlu")
    path = src.path
    authors_csv = opts.hf is None and path.suffix.lower() == ".csv"
    digest = hashlib.sha256()  # a local file is read as it is parsed: a bad row stops the load there
    rows: Iterator[tuple[int, dict[str, Any]]]
    if not src.local:
        rows = iter_jsonl(path, src.data)
    elif authors_csv:
        rows = _csv_rows(path, csv_lines(path, digest))
    else:
        rows = stream_jsonl(path, digest)
    subject = _default_subject(opts, path)
    cases = [_case(row, line, index, subject, path) for index, (line, row) in enumerate(rows)]
    check_unique(cases, path)
    content_hash = "sha256:" + digest.hexdigest() if src.local else src.content_hash
    return LoadedDataset(cases=cases, content_hash=content_hash, source=src.source)
