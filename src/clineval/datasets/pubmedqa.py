"""PubMedQA (Jin et al. 2019) PQA-L loader: `ori_pqal.json` keyed by PMID, optional official test labels.

Options A=yes, B=no, C=maybe. With ``ground_truth`` (test_ground_truth.json) the cases are restricted to its
PMIDs and the gold label comes from it. ``contexts: false`` drops the abstracts (MIRAGE's PubMedQA* setting).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clineval.core import Case, CaseInput, LoadedDataset, Reference
from clineval.core.errors import DataFileError
from clineval.datasets._io import file_hash, load_json, read_bytes, resolve
from clineval.datasets.hf import SourceOptions, source_bytes

OPTIONS = {"A": "yes", "B": "no", "C": "maybe"}
LETTER_OF = {label: letter for letter, label in OPTIONS.items()}


class PubMedQAOptions(SourceOptions):
    ground_truth: str | None = None
    contexts: bool = True


def _letter(label: Any, path: Path, pmid: str) -> str:
    if label not in LETTER_OF:
        raise DataFileError(f"PMID {pmid}: label {label!r} is not yes/no/maybe", path=path)
    return LETTER_OF[label]


def _as_object(value: Any, path: Path) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataFileError("expected a JSON object keyed by PMID", path=path, line=1)
    return value


def load_pubmedqa(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    opts = PubMedQAOptions.model_validate(options)
    src = source_bytes(opts, base_dir, "pubmedqa")
    path, data = src.path, src.data
    records = _as_object(load_json(path, data), path)
    digest = src.content_hash
    gold_path = None
    if opts.ground_truth is not None:
        gold_path = resolve(opts.ground_truth, base_dir)
        gold_bytes = read_bytes(gold_path)
        gold = _as_object(load_json(gold_path, gold_bytes), gold_path)
        digest = file_hash(data + b"\0" + gold_bytes)
        missing = [pmid for pmid in gold if pmid not in records]
        if missing:
            raise DataFileError(
                f"{len(missing)} ground-truth PMIDs are not in {path.name} (e.g. {missing[0]})",
                path=gold_path,
                hint="use the ori_pqal.json that ships with this ground truth",
            )
        labels = {pmid: _letter(label, gold_path, pmid) for pmid, label in gold.items()}
    else:
        labels = {pmid: _letter(rec.get("final_decision"), path, pmid) for pmid, rec in records.items()}
    cases = []
    for pmid, letter in labels.items():
        record = records[pmid]
        if not isinstance(record, dict) or not record.get("QUESTION"):
            raise DataFileError(f"PMID {pmid}: missing field 'QUESTION'", path=path)
        cases.append(
            Case(
                id=str(pmid),
                input=CaseInput(
                    question=record["QUESTION"],
                    options=dict(OPTIONS),
                    context=list(record.get("CONTEXTS", [])) if opts.contexts else [],
                ),
                reference=Reference(answer=letter, answer_text=OPTIONS[letter]),
                metadata={"year": str(record["YEAR"])} if record.get("YEAR") else {},
            )
        )
    return LoadedDataset(cases=cases, content_hash=digest, source=str(gold_path or src.source))
