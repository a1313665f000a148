"""Importers for published per-variant answer files (one row per question, one answer column per variant).

Shape (as in AMQA's released ``Results/AMQA_Benchmark_Answer_<model>.jsonl``, Xiao et al. 2025)::

    {"question_id": "17", "answer_idx": "D",
     "test_model_answer_original_question": "D", "test_model_answer_desensitized_question": "D",
     "test_model_answer_white": "D", "test_model_answer_black": "C", ...}

``import_per_variant_answers(rows)`` turns each row into one record per answer column::

    {"id": "17:black", "group": "17", "variant": "black", "answer": "C", "gold": "D", "correct": False}

ready for ``paired.outcomes_from_records`` / ``counterfactual_analysis``. Column names after the
``answer_prefix`` are the variant names, renamed by ``rename`` (default: ``original_question`` ->
``reference``, the unmodified vignette; ``desensitized_question`` -> ``neutral``). Answers and the gold are
compared after stripping and upper-casing (``"d "`` equals ``"D"``). A column present with ``null`` or ``""``
means the model gave no usable answer: ``answer`` is ``""`` and ``correct`` False (``missing="wrong"``), or
the case is left out (``missing="skip"``). A column absent from a row yields no case for that variant.

``read_answer_file(path)`` reads JSON Lines (``.jsonl`` / ``.json``) or CSV/TSV (``.csv`` / ``.tsv``, header
row), the only I/O here. No third-party data ship with this module: the tests write small files of this shape.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

DEFAULT_RENAME = {"original_question": "reference", "desensitized_question": "neutral"}


def _norm(value: Any) -> str:
    return str(value).strip().upper()


def import_per_variant_answers(
    rows: Iterable[Mapping[str, Any]],
    *,
    id_field: str = "question_id",
    gold_field: str = "answer_idx",
    answer_prefix: str = "test_model_answer_",
    rename: Mapping[str, str] | None = None,
    variants: Iterable[str] | None = None,
    missing: Literal["wrong", "skip"] = "wrong",
) -> list[dict[str, Any]]:
    """Per-case records from per-question rows (module docstring). ``variants`` keeps only those (after
    renaming). Raises ``ValueError`` naming the row for a missing id or gold, or a duplicate id."""
    if missing not in ("wrong", "skip"):
        raise ValueError(f"missing must be 'wrong' or 'skip', got {missing!r}")
    names = dict(DEFAULT_RENAME if rename is None else rename)
    keep = set(variants) if variants is not None else None
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        qid, gold = row.get(id_field), row.get(gold_field)
        if qid is None or str(qid).strip() == "":
            raise ValueError(f"row {number}: no {id_field!r}")
        if gold is None or str(gold).strip() == "":
            raise ValueError(f"row {number}: no {gold_field!r}")
        group = str(qid).strip()
        if group in seen:
            raise ValueError(f"row {number}: duplicate {id_field} {group!r}")
        seen.add(group)
        for column, value in row.items():
            if not column.startswith(answer_prefix):
                continue
            raw_name = column[len(answer_prefix) :]
            variant = names.get(raw_name, raw_name)
            if keep is not None and variant not in keep:
                continue
            empty = value is None or str(value).strip() == ""
            if empty and missing == "skip":
                continue
            answer = "" if empty else _norm(value)
            out.append(
                {
                    "id": f"{group}:{variant}",
                    "group": group,
                    "variant": variant,
                    "answer": answer,
                    "gold": _norm(gold),
                    "correct": (not empty) and answer == _norm(gold),
                }
            )
    return out


def read_answer_file(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSON Lines or CSV/TSV answer file; ``ValueError`` names a bad line."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        rows = []
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        return rows
    if suffix in (".csv", ".tsv"):
        with path.open(encoding="utf-8", newline="") as handle:
            return [dict(r) for r in csv.DictReader(handle, delimiter="\t" if suffix == ".tsv" else ",")]
    raise ValueError(f"{path}: expected .jsonl, .json, .csv or .tsv")
