"""The clinicians' labels file of ``clineval judge qualify --labels FILE``: JSON Lines, one label a line.

=========  ==============================================  ============================================
kind       keys                                            value
=========  ==============================================  ============================================
grade      ``case_id``, ``dimension``, ``grade``           an integer 1-5 (a tier-4 dimension grade)
met        ``case_id``, ``criterion``, ``met``             a JSON boolean (a rubric criterion)
same       ``a``, ``b``, ``same``                          a JSON boolean (an equivalence-judge question:
                                                           is ``a``, the system's name, the same entity as
                                                           ``b``, the reference's? ordered as the judge
                                                           asks it)
=========  ==============================================  ============================================

Optional on every line: ``reviewer`` (a non-empty string; a line without one is the unnamed reviewer ``""``,
so a file from one clinician needs none) and ``comment`` (a string, ignored). Blank lines are skipped. The
kinds may be mixed in one file.

Refused, each as one line ``FILE:LINE: problem`` (:class:`~.errors.LabelsError`): a line that is not a
JSON object; none or several of ``grade`` / ``met`` / ``same``; a missing or empty key; a key not listed
above (a typo such as ``grades`` must not pass silently); a grade that is not an integer 1-5 (``4.0`` is
accepted as 4, ``"4"``, ``true`` and ``3.5`` are not: clinicians grade in whole points, half grades arise
only as medians); ``met`` / ``same`` not a JSON boolean (``"yes"`` is refused, as the judge's own replies
are); a dimension not among ``dimensions`` when given; the same item labelled twice by the same reviewer
(the message names both lines: a file is one round of labelling, corrections are edits); a file with no
label. ``case_id`` may be a string or an integer (read as its decimal string).

``labels_hash``: sha256 of the canonical form (sorted ``[kind, item, reviewer, value]`` as compact JSON),
so reordering lines, comments or whitespace do not change it and any change of a label does. It goes into
the qualification record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NoReturn

from clineval.judging.qualification.errors import LabelsError

Kind = Literal["grade", "met", "same"]
KEYS: dict[Kind, tuple[str, str]] = {
    "grade": ("case_id", "dimension"),
    "met": ("case_id", "criterion"),
    "same": ("a", "b"),
}
OPTIONAL = ("reviewer", "comment")
Fail = Callable[[str], NoReturn]


@dataclass(frozen=True)
class Label:
    kind: Kind
    item: tuple[str, str]  # (case_id, dimension) | (case_id, criterion) | (a, b)
    value: int | bool
    reviewer: str
    line: int


@dataclass(frozen=True)
class LabelSet:
    path: str
    labels: tuple[Label, ...]

    @property
    def labels_hash(self) -> str:
        rows = sorted([lab.kind, list(lab.item), lab.reviewer, lab.value] for lab in self.labels)
        text = json.dumps(rows, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def of_kind(self, kind: Kind) -> dict[tuple[str, str], dict[str, int | bool]]:
        """``{item: {reviewer: value}}`` for the labels of one kind."""
        out: dict[tuple[str, str], dict[str, int | bool]] = {}
        for lab in self.labels:
            if lab.kind == kind:
                out.setdefault(lab.item, {})[lab.reviewer] = lab.value
        return out

    @property
    def kinds(self) -> list[Kind]:
        return [k for k in KEYS if any(lab.kind == k for lab in self.labels)]


def _text(obj: dict[str, Any], key: str, fail: Fail) -> str:
    value = obj.get(key)
    if key == "case_id" and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        fail(f"{key!r} must be a non-empty string, got {value!r}" if key in obj else f"missing {key!r}")
    return str(value)


def _value(kind: Kind, raw: Any, fail: Fail) -> int | bool:
    if kind != "grade":
        if not isinstance(raw, bool):
            fail(f"{kind!r} must be a JSON boolean (true or false), got {raw!r}")
        return bool(raw)
    integral = isinstance(raw, int) or (isinstance(raw, float) and raw.is_integer())
    if isinstance(raw, bool) or not integral or not 1 <= raw <= 5:
        fail(f"'grade' must be an integer 1-5, got {raw!r}")
    return int(raw)


def parse_line(text: str, *, path: str, line: int, dimensions: Collection[str] | None = None) -> Label:
    """One label from one line of the file (LabelsError naming ``path:line`` otherwise)."""

    def fail(problem: str) -> NoReturn:
        raise LabelsError(problem, path=path, line=line)

    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise LabelsError(f"not valid JSON ({err.msg} at column {err.colno})", path=path, line=line) from None
    if not isinstance(obj, dict):
        fail(f"a label is a JSON object, got {type(obj).__name__}")
    kinds = [k for k in KEYS if k in obj]
    if len(kinds) != 1:
        fail("a label has exactly one of 'grade', 'met', 'same'" + (f"; got {kinds}" if kinds else ""))
    kind = kinds[0]
    allowed = (*KEYS[kind], kind, *OPTIONAL)
    if unknown := sorted(k for k in obj if k not in allowed):
        fail(
            f"unknown key(s) {', '.join(map(repr, unknown))} in a {kind!r} label"
            f" (allowed: {', '.join(allowed)})"
        )
    item = (_text(obj, KEYS[kind][0], fail), _text(obj, KEYS[kind][1], fail))
    if kind == "grade" and dimensions is not None and item[1] not in dimensions:
        fail(f"unknown dimension {item[1]!r} (the task's judge grades: {', '.join(sorted(dimensions))})")
    reviewer = obj.get("reviewer", "")
    if not isinstance(reviewer, str) or ("reviewer" in obj and not reviewer.strip()):
        fail(f"'reviewer' must be a non-empty string, got {reviewer!r}")
    if "comment" in obj and not isinstance(obj["comment"], str):
        fail(f"'comment' must be a string, got {obj['comment']!r}")
    return Label(kind, item, _value(kind, obj[kind], fail), reviewer.strip(), line)


def parse_labels(text: str, *, path: str, dimensions: Collection[str] | None = None) -> LabelSet:
    """Every label of a file's text; duplicates and an empty file refused (module docstring)."""
    labels: list[Label] = []
    seen: dict[tuple[Kind, tuple[str, str], str], int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        label = parse_line(raw, path=path, line=number, dimensions=dimensions)
        key = (label.kind, label.item, label.reviewer)
        if key in seen:
            who = f"reviewer {label.reviewer!r}" if label.reviewer else "the unnamed reviewer"
            raise LabelsError(
                f"{label.kind} of {label.item[0]!r} / {label.item[1]!r} by {who} is already on line"
                f" {seen[key]}",
                path=path,
                line=number,
            )
        seen[key] = number
        labels.append(label)
    if not labels:
        raise LabelsError("the labels file holds no label", path=path)
    return LabelSet(path, tuple(labels))


def read_labels(path: str | Path, *, dimensions: Collection[str] | None = None) -> LabelSet:
    """The labels of a file (UTF-8 JSON Lines)."""
    shown = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LabelsError("no such labels file", path=shown) from None
    except UnicodeDecodeError as err:
        raise LabelsError(f"not UTF-8 text (byte {err.start})", path=shown) from None
    except OSError as err:
        raise LabelsError(f"cannot read the labels file ({err.strerror})", path=shown) from None
    return parse_labels(text, path=shown, dimensions=dimensions)
