"""``format: golden_set``: the synthetic CDS golden set (``data/golden_set/golden_set_v2.jsonl``).

One JSON object per line: ``id``, ``version``, ``question``, ``patient`` (the CDS patient record of
``docs/CONTRACTS.md``), ``reference`` (expected_problems, expected_actions, expected_rules,
expected_escalation, escalation_reasons, evidence_source_types, severity) and ``metadata`` (condition,
split: train | heldout, case_kind: typical | adversarial, variant, severity). The case gets
``input.question``, ``input.data = {"patient": ...}``, ``reference.data`` and ``metadata`` (plus
``dataset_version``).

Option ``split``: ``all`` (default), ``train`` or ``heldout``. Anything that tunes a system (prompt
search, threshold fitting) must load ``split: train`` so the held-out cases stay unseen. The content hash
is of the whole file, with the split appended when filtered.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from clineval.core import Case, CaseInput, LoadedDataset, Reference
from clineval.core.errors import DataFileError
from clineval.datasets._io import require, resolve, stream_jsonl
from clineval.datasets.cases import check_unique

SPLITS = ("train", "heldout")


class GoldenSetOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    split: Literal["all", "train", "heldout"] = "all"


def golden_case(row: dict[str, Any], line: int, path: Path) -> Case:
    """One golden-set record as a Case; a missing or malformed field raises DataFileError."""
    if not isinstance(row.get("id"), str | int) or row.get("id") == "":
        raise DataFileError("missing field 'id'", path=path, line=line)
    case_id = str(row["id"])
    patient = require(row, "patient", path, line, dict)
    reference = require(row, "reference", path, line, dict)
    metadata = require(row, "metadata", path, line, dict)
    split = metadata.get("split")
    if split not in SPLITS:
        raise DataFileError(
            f"case {case_id}: metadata.split must be train or heldout, got {split!r}", path=path, line=line
        )
    if not metadata.get("condition"):
        raise DataFileError(f"case {case_id}: missing metadata.condition", path=path, line=line)
    return Case(
        id=case_id,
        input=CaseInput(question=require(row, "question", path, line), data={"patient": patient}),
        reference=Reference(data=reference),
        # Every golden-set question asks for management: a treatment query (tier 2 citation rate).
        metadata={"query_type": "treatment", **metadata, "dataset_version": row.get("version")},
    )


def load_golden_set(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    opts = GoldenSetOptions.model_validate(dict(options))
    path = resolve(opts.path, base_dir)
    digest = hashlib.sha256()  # of the file's bytes, read as they are parsed
    cases = [golden_case(row, line, path) for line, row in stream_jsonl(path, digest)]
    check_unique(cases, path)
    if opts.split != "all":
        cases = [c for c in cases if c.metadata["split"] == opts.split]
        digest.update(b"\0split=" + opts.split.encode())  # the hash of the file's bytes and the split
    return LoadedDataset(cases=cases, content_hash="sha256:" + digest.hexdigest(), source=str(path))
