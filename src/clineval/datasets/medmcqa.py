"""MedMCQA loader (Pal et al. 2022): JSON lines with `opa`..`opd` and a 1-based correct option `cop`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clineval.core import Case, CaseInput, LoadedDataset, Reference
from clineval.core.errors import DataFileError
from clineval.datasets._io import require
from clineval.datasets.cases import case_id_for
from clineval.datasets.hf import SourceOptions, jsonl_source_dataset, source_bytes

LETTERS = "ABCD"
OPTION_FIELDS = ("opa", "opb", "opc", "opd")
METADATA_FIELDS = ("subject_name", "topic_name", "choice_type")


def load_medmcqa(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    src = source_bytes(SourceOptions.model_validate(options), base_dir, "medmcqa")
    path = src.path

    def make_case(row: dict[str, Any], number: int) -> Case:
        question = require(row, "question", path, number)
        choices = {
            letter: str(require(row, field, path, number, object))
            for letter, field in zip(LETTERS, OPTION_FIELDS, strict=True)
        }
        cop = require(row, "cop", path, number, int)
        if not 1 <= cop <= 4:
            raise DataFileError(f"cop must be 1..4 (1-based), got {cop}", path=path, line=number)
        gold = LETTERS[cop - 1]
        return Case(
            id=case_id_for(row, number),
            input=CaseInput(question=question, options=choices),
            reference=Reference(answer=gold, answer_text=choices[gold]),
            metadata={key: row[key] for key in METADATA_FIELDS if row.get(key) is not None},
        )

    return jsonl_source_dataset(src, make_case)
