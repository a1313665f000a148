"""Which lab rows count, shared by tier 1 (red flags) and tier 3 (guideline rules): one definition each.

A row from a non-blood specimen (its ``specimen``/``sample``/``sample_type`` field or its name names one of
``NON_BLOOD_SPECIMENS``: "pleural fluid pH", urine potassium) is not a blood result, and of the rows of one
analyte only the latest sample counts (``latest``), so a normal repeat supersedes an earlier haemolysed one.
A text row names a lab value when it names one of the patient's labs and gives its value (``names_lab_value``:
tier 1's contraindication specificity and the golden set's evidence grounding).
Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

NON_BLOOD_SPECIMENS: tuple[str, ...] = (
    "pleural", "pleural fluid", "urine", "urinary", "csf", "cerebrospinal", "ascitic", "peritoneal",
    "synovial", "drain", "stool", "faecal", "fecal", "sputum", "dialysate",
)  # fmt: skip


def specimen_text(row: Mapping[str, Any]) -> str:
    """The row's name and specimen, the text in which a non-blood specimen term is looked for."""
    specimen = row.get("specimen") or row.get("sample") or row.get("sample_type") or ""
    return f"{row.get('name', '')} {specimen}"


def latest(rows: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The latest sample: by ``time``/``collected`` when every row has one of one type, else the last."""
    times = [r.get("time", r.get("collected")) for r in rows]
    kinds = {type(t) for t in times}
    if len(rows) > 1 and len(kinds) == 1 and (kinds <= {str} or kinds <= {int, float}):
        return max(zip(times, range(len(rows)), rows, strict=True), key=lambda x: (x[0], x[1]))[2]
    return rows[-1]


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _numbers(text: str) -> list[float]:
    return [float(n) for n in _NUMBER.findall(text)]


def names_lab_value(row_text: str, patient: Mapping[str, Any]) -> bool:
    """The row names a patient lab (whole words) and gives its value."""
    text = f" {' '.join(re.findall(r'[a-z0-9+]+', row_text.lower()))} "
    numbers = _numbers(row_text)
    for lab in patient.get("labs") or []:
        if not isinstance(lab, Mapping) or isinstance(lab.get("value"), bool):
            continue
        name = " ".join(re.findall(r"[a-z0-9+]+", str(lab.get("name", "")).lower()))
        value = lab.get("value")
        if not (name and f" {name} " in text and isinstance(value, int | float)):
            continue
        if any(math.isclose(n, float(value), rel_tol=1e-9, abs_tol=1e-9) for n in numbers):
            return True
    return False
