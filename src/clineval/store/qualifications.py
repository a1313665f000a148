"""Judge qualification records (``judge_qualifications``, migration 0008) and the clinician labels a
qualification can take from a stored run's adjudications.

A record is written once per ``clineval judge qualify`` and never updated (append-only, like
``adjudications``). The qualification that applies to a judge is the newest record with its ``judge_key``
(``clineval.judging.qualification.identity``): a later failed qualification replaces an earlier pass.
Nothing here computes a figure: ``figures`` is the qualification's own JSON (``qualify.as_dict``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select

from clineval.store.store import ResultStore
from clineval.store.tables import adjudications, judge_qualifications, utc


@dataclass(frozen=True)
class QualificationRecord:
    qualification_id: str
    created_at: datetime
    judge_key: str
    judge_model: str
    prompt: str
    prompt_hash: str
    settings: dict[str, Any]
    settings_hash: str
    samples: int
    seed: int
    suite: str
    task_id: str
    labels_hash: str
    labels_source: str  # file | adjudications
    labels_ref: str
    n_labelled: int
    reviewers: int
    thresholds: dict[str, Any]
    figures: list[dict[str, Any]]
    qualified: bool
    reasons: list[str]
    clineval_version: str
    vote_samples: int | None = None
    served_model: str | None = None
    judge_endpoint: str = ""
    tenant_id: str = "default"

    def as_dict(self) -> dict[str, Any]:
        found = dataclasses.asdict(self)
        found["created_at"] = self.created_at.isoformat()
        return found


_FIELDS = [f.name for f in dataclasses.fields(QualificationRecord)]


def _record(row: Any) -> QualificationRecord:
    values = {name: row[name] for name in _FIELDS}
    values["created_at"] = utc(row["created_at"])
    return QualificationRecord(**values)


def add_qualification(store: ResultStore, record: QualificationRecord) -> None:
    with store.engine.begin() as conn:
        conn.execute(insert(judge_qualifications).values(**dataclasses.asdict(record)))


def list_qualifications(
    store: ResultStore, *, model: str | None = None, prompt: str | None = None, limit: int = 50
) -> list[QualificationRecord]:
    """Newest first."""
    table = judge_qualifications
    query = select(table)
    if model is not None:
        query = query.where(table.c.judge_model == model)
    if prompt is not None:
        query = query.where(table.c.prompt == prompt)
    query = query.order_by(table.c.created_at.desc(), table.c.id.desc()).limit(limit)
    with store.engine.connect() as conn:
        return [_record(r) for r in conn.execute(query).mappings()]


def latest_for(store: ResultStore, judge_keys: Iterable[str]) -> dict[str, QualificationRecord]:
    """The newest record per judge key (keys without a record are absent)."""
    keys = sorted(set(judge_keys))
    if not keys:
        return {}
    table = judge_qualifications
    query = select(table).where(table.c.judge_key.in_(keys)).order_by(table.c.created_at, table.c.id)
    found: dict[str, QualificationRecord] = {}
    with store.engine.connect() as conn:
        for row in conn.execute(query).mappings():
            found[row["judge_key"]] = _record(row)
    return found


@dataclass(frozen=True)
class AdjudicatedLabel:
    """One reviewer's current verdict on one item of a stored run (``clineval.view.review.adjudication``:
    the newest row per (task, case, item, reviewer))."""

    task_id: str
    case_id: str
    item_kind: str
    item_key: str
    value: Any
    reviewer: str


def adjudicated_labels(
    store: ResultStore, run_id: str, task_id: str, kinds: Sequence[str] = ("judge_dimension", "ddx_pair")
) -> list[AdjudicatedLabel]:
    """Each reviewer's current corrected value of the run's items of ``kinds`` in ``task_id``."""
    table = adjudications
    query = (
        select(table)
        .where(table.c.run_id == run_id, table.c.task_id == task_id, table.c.item_kind.in_(list(kinds)))
        .order_by(table.c.id)
    )
    latest: dict[tuple[str, str, str], AdjudicatedLabel] = {}
    with store.engine.connect() as conn:
        for row in conn.execute(query).mappings():
            latest[(row["case_id"], row["item_key"], row["reviewer"])] = AdjudicatedLabel(
                row["task_id"],
                row["case_id"],
                row["item_kind"],
                row["item_key"],
                row["corrected_value"],
                row["reviewer"],
            )
    return list(latest.values())
