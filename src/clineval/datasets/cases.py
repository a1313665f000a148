"""Case-id rules shared by the loaders."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from clineval.core import Case, LoadedDataset
from clineval.core.errors import DataFileError


class PathOptions(BaseModel):
    """Options of a loader that takes only a file."""

    model_config = ConfigDict(extra="forbid")
    path: str


def case_id_for(row: dict[str, Any], line_number: int) -> str:
    """The record's ``id`` field if it has one, else the 0-based line number as a decimal string."""
    value = row.get("id")
    if value is None or value == "":
        return str(line_number - 1)
    return str(value)


def check_unique(cases: Sequence[Case], path: Path) -> None:
    seen: dict[str, int] = {}
    for index, case in enumerate(cases):
        if case.id in seen:
            raise DataFileError(
                f"duplicate case id {case.id!r} (records {seen[case.id] + 1} and {index + 1})",
                path=path,
                hint="case ids must be unique",
            )
        seen[case.id] = index


def jsonl_dataset(path: Path, make_case: Callable[[dict[str, Any], int], Case]) -> LoadedDataset:
    """Cases from a JSONL file, one per line: ``make_case(record, 1-based line number)``, read from the
    file when used (``datasets.lazy_cases``)."""
    from clineval.datasets.lazy_cases import JsonlCases  # it imports this module's neighbours

    cases, content_hash = JsonlCases.load(path, make_case)
    return LoadedDataset(cases=cases, content_hash=content_hash, source=str(path))
