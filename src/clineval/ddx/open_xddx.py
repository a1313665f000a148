"""Open-XDDx loader (Zhou et al. 2025, npj Health Systems 2:12): 570 expert-annotated DDx cases.

One JSON object per line: ``index`` (1-based int), ``patient_info`` (the vignette), ``specialty``,
``disease_num``, ``rationale_num`` and ``ground_truth`` {diagnosis: [findings quoted from the vignette]}.
Case id = ``str(index)`` (LDDx result files ``ddx_results_Case_<index>_*.json`` join on it, see
``clineval.ddx.lddx``). ``reference.differential`` keeps the annotators' order of the ground-truth keys;
``reference.findings`` the supporting findings. The vignette is also the ``question`` so MCQ-style prompt
templates work unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clineval.core import Case, CaseInput, LoadedDataset, Reference
from clineval.core.errors import DataFileError
from clineval.datasets._io import require, resolve
from clineval.datasets.cases import PathOptions, jsonl_dataset

METADATA_FIELDS = ("specialty", "disease_num")


def parse_findings(
    value: Any, path: Path, line: int | None, field: str = "ground_truth"
) -> dict[str, list[str]]:
    """``{diagnosis: [finding, ...]}`` (a finding list may also be one string); order kept."""
    if not isinstance(value, dict) or not value:
        raise DataFileError(
            f"field {field!r} should be a non-empty object {{diagnosis: [findings]}}", path=path, line=line
        )
    findings: dict[str, list[str]] = {}
    for name, items in value.items():
        if not str(name).strip():
            raise DataFileError(f"field {field!r} has an empty diagnosis name", path=path, line=line)
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise DataFileError(
                f"field {field!r}: findings of {name!r} should be a list of strings", path=path, line=line
            )
        findings[str(name)] = list(items)
    return findings


def load_open_xddx(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    path = resolve(PathOptions.model_validate(options).path, base_dir)

    def make_case(row: dict[str, Any], number: int) -> Case:
        index = require(row, "index", path, number, int)
        vignette = require(row, "patient_info", path, number)
        findings = parse_findings(require(row, "ground_truth", path, number, dict), path, number)
        data = {"rationale_num": row["rationale_num"]} if row.get("rationale_num") is not None else {}
        return Case(
            id=str(index),
            input=CaseInput(question=vignette, vignette=vignette),
            reference=Reference(differential=list(findings), findings=findings, data=data),
            metadata={key: row[key] for key in METADATA_FIELDS if row.get(key) is not None},
        )

    return jsonl_dataset(path, make_case)
