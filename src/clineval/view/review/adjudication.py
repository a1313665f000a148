"""Clinician adjudication of automated verdicts: what can be reviewed on a case, recording a review
(validated, append-only), reading the reviews back, and metrics with the corrections applied.

A *review item* is one automated verdict of one stored :class:`~clineval.core.CaseResult`:

==================  ==========================================  =============================================
``item_kind``       ``item_key``                                corrected value
==================  ==========================================  =============================================
``mcq``             ``<scorer>``                                the letter the answer chose, or ``unparsed``
``ddx_pair``        ``<scorer>|<ground truth>|<system name>``   ``true`` / ``false``: the two names are
                                                                equivalent (a matched pair, or an unmatched
                                                                ground truth x unmatched system name)
``check``           ``<scorer>`` (a tier-1 check)               ``pass`` / ``fail``
``rule``            ``<scorer>:<rule id>`` (tier 3)             ``pass`` (adherent) / ``fail``
``judge_dimension`` ``<scorer>:<dimension>``                    an integer 1-5
``label``           ``<scorer>`` (any other correct/incorrect)  ``correct`` / ``incorrect``
==================  ==========================================  =============================================

``automated_value`` stores what the scorer said, ``{"value": <in the same domain>, ...context}`` (for MCQ
``gold`` and ``label``; for a judge dimension its ``samples``), taken from the stored result when the
review is recorded, never from the form. Rows are only ever inserted: the newest row (highest id) per
(run, task, case, item, reviewer) is that reviewer's current verdict; the automated scores never change.
The *adjudicated* value of an item is the newest current verdict of any reviewer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Text, insert, select, type_coerce

from clineval.core import CaseResult, UserInputError
from clineval.store import ResultStore
from clineval.store.tables import adjudications, case_results, loads, utc, utcnow
from clineval.view.review.items import UNPARSED, VERDICTS, ReviewItem, items_for


class AdjudicationError(UserInputError):
    """A review that cannot be recorded (no reviewer, unknown item, a value invalid for its kind)."""


# What a review's free text may be: a name and a comment a person typed. Longer is refused, never cut; a
# control character other than tab and newline is refused (PostgreSQL text cannot hold NUL at all).
LIMITS = {"reviewer": 200, "comment": 10_000}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check_text(field_name: str, value: str) -> str:
    """``value`` stripped, or :class:`AdjudicationError` when it is too long or holds a control character."""
    value = value.strip()
    limit = LIMITS[field_name]
    if len(value) > limit:
        raise AdjudicationError(f"the {field_name} is {len(value):,} characters: at most {limit:,}")
    if bad := _CONTROL.search(value):
        raise AdjudicationError(f"the {field_name} holds a control character (U+{ord(bad.group()):04X})")
    return value


@dataclass(frozen=True)
class Adjudication:
    """One stored review (a row of ``adjudications``)."""

    id: int
    run_id: str
    task_id: str
    case_id: str
    item_kind: str
    item_key: str
    automated_value: dict[str, Any]
    verdict: str
    corrected_value: Any
    reviewer: str
    comment: str
    created_at: datetime | None = field(default=None)

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["created_at"] = self.created_at.isoformat() if self.created_at else None
        return out


# -- validation and recording -----------------------------------------------------------------------


def parse_value(kind: str, raw: Any) -> Any:
    """A corrected value from a form string or JSON value, in its kind's domain (not yet range-checked)."""
    if kind == "ddx_pair":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "yes", "1", "equivalent"):
            return True
        if text in ("false", "no", "0", "not_equivalent"):
            return False
        raise AdjudicationError(f"a DDx pair correction is true or false, got {raw!r}")
    if kind == "judge_dimension":
        if isinstance(raw, bool):
            raise AdjudicationError(f"a judge grade is an integer 1-5, got {raw!r}")
        try:
            return int(str(raw).strip())
        except ValueError:
            raise AdjudicationError(f"a judge grade is an integer 1-5, got {raw!r}") from None
    text = str(raw).strip()
    return text.upper() if kind == "mcq" and len(text) == 1 else text.lower() if kind != "mcq" else text


def validate(item: ReviewItem, verdict: str, corrected: Any, reviewer: str) -> Any:
    """The corrected value to store, or :class:`AdjudicationError`. ``agree`` stores the automated value
    (a given one must equal it); ``disagree`` needs a valid value different from the automated one."""
    if not reviewer.strip():
        raise AdjudicationError("a review needs the reviewer's name")
    if verdict not in VERDICTS:
        raise AdjudicationError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    empty = corrected is None or (isinstance(corrected, str) and not corrected.strip())
    value = item.value if empty else parse_value(item.kind, corrected)
    if value not in item.choices or (item.kind == "judge_dimension" and isinstance(value, bool)):
        shown = ", ".join(str(c) for c in item.choices)
        raise AdjudicationError(f"{value!r} is not a valid value for {item.key} (one of: {shown})")
    if verdict == "agree" and value != item.value:
        raise AdjudicationError(f"agreeing with {item.value!r} but correcting to {value!r}: choose disagree")
    if verdict == "disagree" and value == item.value:
        raise AdjudicationError(f"disagreeing needs a corrected value other than {item.value!r}")
    return value


def load_case(store: ResultStore, run_id: str, task_id: str, case_id: str) -> CaseResult:
    """One stored case result (one query), or :class:`AdjudicationError`."""
    text = type_coerce(case_results.c.result, Text)
    query = select(text).where(
        case_results.c.run_id == run_id, case_results.c.task_id == task_id, case_results.c.case_id == case_id
    )
    with store.engine.connect() as conn:
        row = conn.execute(query).first()
    if row is None:
        raise AdjudicationError(f"no case {task_id}/{case_id} in run {run_id}")
    raw = row[0]
    return CaseResult.model_validate(loads(raw) if isinstance(raw, str | bytes) else raw)


def record(
    store: ResultStore,
    run_id: str,
    task_id: str,
    case_id: str,
    *,
    item_key: str,
    verdict: str,
    reviewer: str,
    corrected_value: Any = None,
    comment: str = "",
    options: Sequence[str] | None = None,
    now: datetime | None = None,
) -> Adjudication:
    """Validate and append one review of the item ``item_key`` of a stored case; returns the stored row."""
    reviewer, comment = check_text("reviewer", reviewer), check_text("comment", comment)
    if not reviewer:
        raise AdjudicationError("a review needs the reviewer's name")
    items = {i.key: i for i in items_for(load_case(store, run_id, task_id, case_id), options)}
    item = items.get(item_key)
    if item is None:
        raise AdjudicationError(f"case {task_id}/{case_id} has no reviewable item {item_key!r}")
    value = validate(item, verdict, corrected_value, reviewer)
    row = {
        "run_id": run_id,
        "task_id": task_id,
        "case_id": case_id,
        "item_kind": item.kind,
        "item_key": item.key,
        "automated_value": item.automated,
        "verdict": verdict,
        "corrected_value": value,
        "reviewer": reviewer,
        "comment": comment,
        "created_at": utc(now) or utcnow(),
    }
    with store.engine.begin() as conn:
        new_id = conn.execute(insert(adjudications).returning(adjudications.c.id), row).scalar_one()
    return Adjudication(id=int(new_id), **row)


def history(
    store: ResultStore, run_id: str, task_id: str | None = None, case_id: str | None = None
) -> list[Adjudication]:
    """Every stored review of a run (or of one case), oldest first."""
    query = select(adjudications).where(adjudications.c.run_id == run_id)
    if task_id is not None:
        query = query.where(adjudications.c.task_id == task_id)
    if case_id is not None:
        query = query.where(adjudications.c.case_id == case_id)
    with store.engine.connect() as conn:
        rows = conn.execute(query.order_by(adjudications.c.id)).mappings().all()
    return [Adjudication(**{**dict(r), "created_at": utc(r["created_at"])}) for r in rows]


ItemId = tuple[str, str, str]  # (task_id, case_id, item_key)


def current(rows: Iterable[Adjudication]) -> dict[tuple[str, str, str, str], Adjudication]:
    """Each reviewer's current verdict: the newest row per (task, case, item, reviewer)."""
    latest: dict[tuple[str, str, str, str], Adjudication] = {}
    for row in sorted(rows, key=lambda r: r.id):
        latest[(row.task_id, row.case_id, row.item_key, row.reviewer)] = row
    return latest


def adjudicated(rows: Iterable[Adjudication]) -> dict[ItemId, Adjudication]:
    """The adjudicated verdict of each reviewed item: the newest current verdict of any reviewer."""
    out: dict[ItemId, Adjudication] = {}
    for row in sorted(current(rows).values(), key=lambda r: r.id):
        out[(row.task_id, row.case_id, row.item_key)] = row
    return out


def reviewed_cases(store: ResultStore, run_id: str) -> set[tuple[str, str]]:
    """``(task_id, case_id)`` of every case of the run with at least one review."""
    query = select(adjudications.c.task_id, adjudications.c.case_id).where(adjudications.c.run_id == run_id)
    with store.engine.connect() as conn:
        return {(r[0], r[1]) for r in conn.execute(query.distinct())}


# -- metrics with the corrections applied -------------------------------------------------------------


@dataclass(frozen=True)
class AdjudicatedMetric:
    """A metric computed from the automated verdicts and again with the adjudicated ones substituted."""

    task_id: str
    metric: str
    automated: float
    adjudicated: float
    n: int
    n_reviewed: int
    n_changed: int


def numeric(item_kind: str, automated: Mapping[str, Any], value: Any) -> float | None:
    """An item value as a number for a metric: MCQ 1 if the letter is the gold one (unparsed 0),
    check/rule 1 for pass, label 1 for correct, a judge grade itself; None for a DDx pair."""
    if item_kind == "mcq":
        return 1.0 if value != UNPARSED and value == automated.get("gold") else 0.0
    if item_kind in ("check", "rule"):
        return 1.0 if value == "pass" else 0.0
    if item_kind == "label":
        return 1.0 if value == "correct" else 0.0
    if item_kind == "judge_dimension":
        return float(value)
    return None


def _metric_name(item: ReviewItem) -> str:
    if item.kind == "mcq":
        return f"{item.scorer}:accuracy"
    if item.kind in ("check", "label"):
        return f"{item.scorer}:{'pass_rate' if item.kind == 'check' else 'accuracy'}"
    suffix = item.key.split(":", 1)[1]
    return f"{item.scorer}:adherence_{suffix}" if item.kind == "rule" else f"{item.scorer}:mean_{suffix}"


def adjudicated_metrics(store: ResultStore, run_id: str) -> list[AdjudicatedMetric]:
    """Per task: MCQ accuracy (a failed system call counts 0, as in ``accuracy``), tier-1 check pass rate,
    per-rule adherence, mean judge grade per dimension and label accuracy, each as (1/n) Σ v_i over the
    items, once with the automated v_i and once with each reviewed item's adjudicated v_i."""
    decided = adjudicated(history(store, run_id))
    sums: dict[tuple[str, str], list[float]] = {}  # (task, metric) -> [auto, adjud, n, reviewed, changed]
    for result in store.load_results(run_id):
        for name, score in result.scores.items():
            if score.label == "failed" and "extracted" in score.breakdown:  # an MCQ scorer, failed call
                acc = sums.setdefault((result.task_id, f"{name}:accuracy"), [0.0] * 5)
                acc[2] += 1
        for item in items_for(result):
            auto = numeric(item.kind, item.automated, item.value)
            if auto is None:
                continue
            row = decided.get((result.task_id, result.case_id, item.key))
            value = row.corrected_value if row is not None else item.value
            acc = sums.setdefault((result.task_id, _metric_name(item)), [0.0] * 5)
            acc[0] += auto
            acc[1] += numeric(item.kind, item.automated, value) or 0.0
            acc[2] += 1
            acc[3] += row is not None
            acc[4] += row is not None and value != item.value
    return [
        AdjudicatedMetric(task, metric, a / n, b / n, int(n), int(r), int(c))
        for (task, metric), (a, b, n, r, c) in sorted(sums.items())
        if n
    ]


# -- export -----------------------------------------------------------------------------------------------


def export_records(store: ResultStore, run_id: str) -> list[dict[str, Any]]:
    """Every stored review of the run, oldest first, as JSON-ready dicts (one JSONL line each)."""
    return [row.as_dict() for row in history(store, run_id)]


def vocabulary_document(rows: Iterable[Adjudication], version: str = "adjudications") -> dict[str, Any]:
    """The DDx equivalence corrections as a diagnosis vocabulary (``clineval.text.names.diagnosis_vocab``): an
    adjudicated pair the scorer did not match but the reviewer called equivalent joins a synonym group
    (groups sharing a name are merged); a matched pair the reviewer called not equivalent becomes a
    ``distinct`` pair (dropped if the groups put both names together)."""
    parent: dict[str, str] = {}

    def find(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    distinct: list[list[str]] = []
    for row in adjudicated(rows).values():
        if row.item_kind != "ddx_pair" or row.verdict != "disagree":
            continue
        gt, system = str(row.automated_value["ground_truth"]), str(row.automated_value["system"])
        if gt == system:
            continue
        if row.corrected_value is True:
            parent[find(system)] = find(gt)
        else:
            distinct.append([gt, system])
    members: dict[str, list[str]] = {}
    for name in sorted(parent):
        members.setdefault(find(name), []).append(name)
    groups = sorted(sorted(g) for g in members.values() if len(g) > 1)
    kept = [p for p in distinct if p[0] not in parent or p[1] not in parent or find(p[0]) != find(p[1])]
    doc: dict[str, Any] = {"version": version, "note": "exported from clinician adjudications"}
    if groups:
        doc["groups"] = groups
    if kept:
        doc["distinct"] = sorted(kept)
    return doc
