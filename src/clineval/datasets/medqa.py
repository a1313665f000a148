"""MedQA (USMLE, 4 options) JSONL loader: `question`, `options` {A..D}, `answer_idx`, `answer`, `meta_info`.

Jin et al. 2020, "What disease does this patient have?" Case id: the record's ``id`` if present, else the
0-based line number (so MIRAGE's "0007" is case "7"; join with ``numeric_ids: true``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clineval.core import Case, CaseInput, LoadedDataset, Reference
from clineval.core.errors import DataFileError
from clineval.datasets._io import require
from clineval.datasets.cases import case_id_for
from clineval.datasets.hf import SourceOptions, jsonl_source_dataset, source_bytes


def load_medqa(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    src = source_bytes(SourceOptions.model_validate(options), base_dir, "medqa")
    path = src.path

    def make_case(row: dict[str, Any], number: int) -> Case:
        question = require(row, "question", path, number)
        choices = require(row, "options", path, number, dict)
        gold = require(row, "answer_idx", path, number)
        if gold not in choices:
            raise DataFileError(
                f"answer_idx {gold!r} is not one of the options {sorted(choices)}", path=path, line=number
            )
        return Case(
            id=case_id_for(row, number),
            input=CaseInput(question=question, options={str(k): str(v) for k, v in choices.items()}),
            reference=Reference(answer=gold, answer_text=row.get("answer")),
            metadata={"meta_info": row["meta_info"]} if "meta_info" in row else {},
        )

    return jsonl_source_dataset(src, make_case)
