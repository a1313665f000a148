"""DDXPlus loader (Fansi Tchango et al., NeurIPS 2022 Datasets & Benchmarks; CC-BY 4.0): synthetic patients.

Patients CSV (the vendor copy renames the official columns): ``age`` (AGE), ``sex`` (SEX), ``diagnosis``
(PATHOLOGY, the ground truth), ``top5_diagnoses`` (DIFFERENTIAL_DIAGNOSIS: the dataset's own, complete,
ranked ``[[pathology, probability], ...]``), ``features`` (EVIDENCES) and ``feature_id`` (INITIAL_EVIDENCE);
the official upper-case names are accepted too. List cells are Python literals (``ast.literal_eval``).

One case per row, id = 0-based row index. ``reference.differential = [pathology]``; the dataset's
differential is kept in ``reference.data["ddxplus_differential"]`` (replayed by the ``ddxplus_differential``
system). With ``evidences`` (release_evidences.json) the vignette is built from age, sex and the decoded
evidences (English question text + value meaning; deterministic, file order); without it the raw codes are
listed. ``conditions`` (release_conditions.json) is optional: every pathology is then checked against it and
its severity (1..5) kept in ``reference.data``. Data files stay where they are (licence: see the data's
SOURCE.md); nothing is copied into the package.
"""

from __future__ import annotations

import ast
import csv
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from clineval.core import Case, CaseInput, LoadedDataset, Reference
from clineval.core.errors import DataFileError
from clineval.datasets._io import csv_checked, csv_lines, load_json, read_bytes, resolve

# our name -> accepted column names (vendor spelling first, then the official DDXPlus one)
COLUMNS = {
    "age": ("age", "AGE"),
    "sex": ("sex", "SEX"),
    "pathology": ("diagnosis", "PATHOLOGY"),
    "differential": ("top5_diagnoses", "DIFFERENTIAL_DIAGNOSIS"),
    "evidences": ("features", "EVIDENCES"),
    "initial": ("feature_id", "INITIAL_EVIDENCE"),
}
SEX = {"M": "male", "F": "female"}
YES_NO = {"Y": "yes", "N": "no"}


class DdxplusOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    evidences: str | None = None
    conditions: str | None = None


def age_band(age: int) -> str:
    """Stratification band: 0-17, 18-39, 40-64, 65+."""
    return "0-17" if age < 18 else "18-39" if age < 40 else "40-64" if age < 65 else "65+"


def _columns(header: list[str], path: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for ours, names in COLUMNS.items():
        name = next((n for n in names if n in header), None)
        if name is None:
            raise DataFileError(f"no column {' or '.join(repr(n) for n in names)}", path=path, line=1)
        found[ours] = name
    return found


def _literal_list(text: str, column: str, path: Path, line: int) -> list[Any]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise DataFileError(f"column {column!r} is not a Python-literal list", path=path, line=line) from None
    if not isinstance(value, list):
        raise DataFileError(f"column {column!r} should be a list", path=path, line=line)
    return value


def _differential(cell: str, column: str, path: Path, line: int) -> list[list[Any]]:
    pairs = _literal_list(cell, column, path, line)
    for pair in pairs:
        ok = isinstance(pair, list | tuple) and len(pair) == 2 and isinstance(pair[0], str)
        if not ok or isinstance(pair[1], bool) or not isinstance(pair[1], int | float):
            raise DataFileError(
                f"column {column!r}: expected [pathology, probability] pairs", path=path, line=line
            )
    return [[str(name), float(prob)] for name, prob in pairs]


def _value_text(evidence: dict[str, Any], value: str) -> str:
    meaning = evidence.get("value_meaning") or {}
    if value in meaning:
        english = str(meaning[value].get("en", value))
        return YES_NO.get(english, english)
    return value


def describe_evidences(codes: list[str], catalogue: Mapping[str, Any] | None) -> list[str]:
    """One English line per evidence question, in the patient's file order: ``question answer``.

    ``E_x`` (binary) -> "yes"; ``E_x_@_V_y`` -> the value's English meaning (multi-choice values joined with
    ", "); ``E_x_@_n`` -> the number (with "(0-10)" when the question is a 0..10 scale).
    """
    answers: dict[str, list[str]] = {}
    for code in codes:
        name, _, value = str(code).partition("_@_")
        answers.setdefault(name, [])
        if value:
            answers[name].append(value)
    lines = []
    for name, values in answers.items():
        evidence = catalogue.get(name) if catalogue is not None else None
        if evidence is None:
            lines.append(f"{name}: {', '.join(values)}" if values else name)
            continue
        question = str(evidence.get("question_en") or name)
        if not values:
            answer = "yes"
        else:
            answer = ", ".join(_value_text(evidence, v) for v in values)
            if values[0].lstrip("-").isdigit() and list(evidence.get("possible-values") or [])[-1:] == [10]:
                answer += " (0-10)"
        lines.append(f"{question} {answer}")
    return lines


def build_vignette(
    age: int, sex: str, codes: list[str], initial: str | None, catalogue: Mapping[str, Any] | None
) -> str:
    """A readable, deterministic vignette: demographics, the presenting complaint, then the evidences."""
    who = f"{age}-year-old {SEX.get(sex, sex)}"
    parts = [f"Patient: {who}."]
    if initial:
        evidence = catalogue.get(initial) if catalogue is not None else None
        complaint = str(evidence.get("question_en")) if evidence else initial
        parts.append(f"Presenting complaint (initial evidence): {complaint}")
    antecedents = {k for k, v in (catalogue or {}).items() if isinstance(v, dict) and v.get("is_antecedent")}
    symptoms = [c for c in codes if str(c).partition("_@_")[0] not in antecedents]
    history = [c for c in codes if str(c).partition("_@_")[0] in antecedents]
    for title, group in (("Symptoms and findings", symptoms), ("History and risk factors", history)):
        lines = describe_evidences(group, catalogue)
        if lines:
            parts.append(f"{title}:\n" + "\n".join(f"- {line}" for line in lines))
    return "\n".join(parts)


def _catalogue(option: str | None, base_dir: Path, name: str) -> tuple[dict[str, Any] | None, bytes]:
    if option is None:
        return None, b""
    path = resolve(option, base_dir)
    data = read_bytes(path)
    value = load_json(path, data)
    if not isinstance(value, dict):
        raise DataFileError(f"expected a JSON object keyed by {name}", path=path, line=1)
    return value, data


def load_ddxplus(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    opts = DdxplusOptions.model_validate(options)
    path = resolve(opts.path, base_dir)
    evidences, ev_bytes = _catalogue(opts.evidences, base_dir, "evidence code")
    conditions, cond_bytes = _catalogue(opts.conditions, base_dir, "pathology")
    digest = hashlib.sha256()  # the patients file is read as it is parsed: a bad row stops the load there
    reader = csv.DictReader(csv_lines(path, digest))
    rows = csv_checked(iter(reader), path, lambda: reader.reader.line_num)
    try:
        header = list(reader.fieldnames or [])
    except csv.Error as err:
        raise DataFileError(f"malformed CSV: {err}", path=path, line=1) from None
    col = _columns(header, path)
    cases = []
    for index, row in enumerate(rows):
        line = reader.line_num
        pathology = (row.get(col["pathology"]) or "").strip()
        if not pathology:
            raise DataFileError(f"empty {col['pathology']!r}", path=path, line=line)
        differential = _differential(row.get(col["differential"]) or "[]", col["differential"], path, line)
        names = [name for name, _ in differential]
        if conditions is not None:
            unknown = [n for n in [pathology, *names] if n not in conditions]
            if unknown:
                raise DataFileError(
                    f"pathology {unknown[0]!r} is not in the conditions file", path=path, line=line
                )
        try:
            age = int(row.get(col["age"]) or "")
        except ValueError:
            raise DataFileError(f"{col['age']!r} should be an integer", path=path, line=line) from None
        sex = (row.get(col["sex"]) or "").strip()
        codes = [
            str(c) for c in _literal_list(row.get(col["evidences"]) or "[]", col["evidences"], path, line)
        ]
        initial = (row.get(col["initial"]) or "").strip() or None
        vignette = build_vignette(age, sex, codes, initial, evidences)
        ref_data: dict[str, Any] = {"ddxplus_differential": differential, "evidences": codes}
        if conditions is not None:
            ref_data["severity"] = conditions[pathology].get("severity")
        metadata: dict[str, Any] = {"sex": sex, "age_band": age_band(age)}
        if initial:
            metadata["initial_evidence"] = initial
        cases.append(
            Case(
                id=str(index),
                input=CaseInput(question=vignette, vignette=vignette),
                reference=Reference(differential=[pathology], data=ref_data),
                metadata=metadata,
            )
        )
    digest.update(b"\0" + ev_bytes + b"\0" + cond_bytes)  # the three files' bytes, as one hash
    return LoadedDataset(cases=cases, content_hash="sha256:" + digest.hexdigest(), source=str(path))
