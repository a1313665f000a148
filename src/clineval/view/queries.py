"""What the pages read from the store, in SQL: run rows without their cases, and one page of cases.

A 100,000-case run must page in well under a second, so nothing here loads every case result: the cases
table selects 50 rows (keyset on the row id, or an offset), filters are JSON path expressions evaluated by
the database (``JSON_EXTRACT`` on SQLite, ``->`` / ``#>>`` on PostgreSQL), and only counts are aggregated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Text,
    and_,
    case,
    cast,
    func,
    or_,
    select,
    type_coerce,
)

from clineval.core import CaseResult, SuiteSpec
from clineval.store.case_reads import read_counts
from clineval.store.keys import case_key
from clineval.store.tables import case_results, is_tagged, loads, runs

PAGE_SIZE = 50
TOTAL_CAP = 10_000  # a filtered count stops here: counting every match is a scan of the whole run


@dataclass(frozen=True)
class RunRow:
    """One stored run as the runs page lists it (its case results are not loaded)."""

    run_id: str
    suite: SuiteSpec
    status: str
    created_at: Any
    tenant_id: str
    run_type: str
    provenance: dict[str, Any]
    overall: dict[str, Any]
    aggregates: dict[str, Any]
    n_cases: int = 0
    n_failed: int = 0


@dataclass(frozen=True)
class CaseFilter:
    """The cases page's filters (all optional). ``label`` is ``scorer:label``; ``stratum`` ``key=value``."""

    task: str | None = None
    label: str | None = None
    stratum: str | None = None
    failure: str | None = None
    text: str | None = None
    case_ids: tuple[str, ...] | None = None  # extra ids matched on their input (the dataset cache)

    def as_params(self) -> dict[str, str]:
        names = ("task", "label", "stratum", "failure", "text")
        return {n: str(getattr(self, n)) for n in names if getattr(self, n)}


@dataclass
class CasePage:
    rows: list[tuple[int, CaseResult]]
    total: int
    page: int
    next_after: int | None
    has_previous: bool = False
    capped: bool = False  # more than TOTAL_CAP cases match: ``total`` is TOTAL_CAP
    failure_kinds: list[str] = field(default_factory=list)


def parse_result(raw: Any) -> CaseResult:
    """A stored ``result`` (JSON text, or already parsed by the driver) as a CaseResult."""
    if not isinstance(raw, str | bytes):
        return CaseResult.model_validate(raw)
    text = raw if isinstance(raw, str) else raw.decode()
    return CaseResult.model_validate(loads(text)) if is_tagged(text) else CaseResult.model_validate_json(text)


def run_rows(engine: Engine, run_id: str | None = None) -> list[RunRow]:
    """Every run (or one), newest first, with its case counts (one grouped query)."""
    from clineval.store.liveness import Owner, shown_status
    from clineval.store.tables import utc

    query = select(runs).order_by(runs.c.created_at.desc(), runs.c.run_id.desc())
    if run_id is not None:
        query = query.where(runs.c.run_id == run_id)
    with engine.connect() as conn:
        rows = conn.execute(query).all()
        counts = _case_counts(conn, [row.run_id for row in rows])
    found = []
    for row in rows:
        owner = Owner(pid=row.owner_pid, host=row.owner_host, heartbeat_at=utc(row.heartbeat_at))
        n, n_failed = counts.get(row.run_id, (0, 0))
        found.append(
            RunRow(
                run_id=row.run_id,
                suite=SuiteSpec.model_validate(row.suite_spec),
                status=shown_status(row.status, owner, row.run_id),
                created_at=utc(row.created_at),
                tenant_id=row.tenant_id,
                run_type=row.run_type,
                provenance=row.provenance or {},
                overall=row.overall or {},
                aggregates=row.aggregates or {},
                n_cases=n,
                n_failed=n_failed,
            )
        )
    return found


def _case_counts(conn: Connection, run_ids: list[str]) -> dict[str, tuple[int, int]]:
    """``run -> (cases, failed cases)``: from the run's sums (``run_counts``, ``store.case_reads``) where they
    hold, else counted from its cases (a run stored before the sums)."""
    found: dict[str, tuple[int, int]] = {}
    for run_id in run_ids:
        sums = read_counts(conn, run_id)
        if sums is not None:
            found[run_id] = (sums.n, sums.failed)
    rest = [r for r in run_ids if r not in found]
    if rest:
        failed = func.sum(case((case_results.c.status == "failed", 1), else_=0))
        counts_q = select(case_results.c.run_id, func.count(), failed).group_by(case_results.c.run_id)
        counts_q = counts_q.where(case_results.c.run_id.in_(rest))
        found.update({r[0]: (int(r[1]), int(r[2] or 0)) for r in conn.execute(counts_q)})
    return found


def _path(*keys: str) -> ColumnElement[Any]:
    return case_results.c.result[keys].as_string()  # type: ignore[index,no-any-return]


def _conditions(run_id: str, flt: CaseFilter) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = [case_results.c.run_id == run_id]
    if flt.task:
        where.append(case_results.c.task_id == flt.task)
    if flt.label:
        scorer, _, label = flt.label.partition(":")
        where.append(_path("scores", scorer, "label") == label)
    if flt.stratum:
        key, _, value = flt.stratum.partition("=")
        where.append(_path("metadata", key) == value)
    if flt.failure:  # only a failed case has an error: its status (a column) is tested before its JSON
        where.append(case_results.c.status == "failed")
        where.append(_path("output", "error", "kind") == flt.failure)
    if flt.text:
        needle = f"%{escape_like(flt.text)}%"
        text_match = or_(
            case_results.c.case_id.ilike(needle, escape="\\"),
            cast(case_results.c.result, Text).ilike(needle, escape="\\"),  # a real cast: json on PostgreSQL
        )
        if flt.case_ids:
            text_match = or_(text_match, case_results.c.case_id.in_(flt.case_ids))
        where.append(text_match)
    return where


def escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def case_page(
    engine: Engine, run_id: str, flt: CaseFilter, *, page: int = 1, after: int | None = None
) -> CasePage:
    """One page of cases in insertion order: keyset (``after`` = the last row id seen) or page number."""
    where = _conditions(run_id, flt)
    raw = type_coerce(case_results.c.result, Text)
    query = select(case_results.c.id, raw).where(and_(*where)).order_by(case_results.c.id)
    skipped = (max(page, 1) - 1) * PAGE_SIZE
    if after is not None:
        query = query.where(case_results.c.id > after)
    elif skipped and len(where) == 1:  # unfiltered: skip entries of the (run_id, id) index, not whole rows
        first = select(case_results.c.id).where(*where).order_by(case_results.c.id).offset(skipped).limit(1)
        query = query.where(case_results.c.id >= first.scalar_subquery())
    else:
        query = query.offset(skipped)
    with engine.connect() as conn:
        total = _summed(conn, run_id, flt)
        rows = [] if total == 0 else conn.execute(query.limit(PAGE_SIZE + 1)).all()
        total = _count(conn, where) if total is None else total
    shown = [(int(r[0]), parse_result(r[1])) for r in rows[:PAGE_SIZE]]
    next_after = shown[-1][0] if len(rows) > PAGE_SIZE and shown else None
    return CasePage(
        rows=shown,
        total=min(total, TOTAL_CAP),
        page=page,
        next_after=next_after,
        has_previous=page > 1 or after is not None,
        capped=total > TOTAL_CAP,
    )


def _summed(conn: Connection, run_id: str, flt: CaseFilter) -> int | None:
    """The number of cases a label or failure filter (alone, or with a task) matches, from the run's sums
    (``run_counts``): exact, and a filter nothing matches reads no row. None when not known that way."""
    if flt.stratum or flt.text or flt.case_ids or bool(flt.label) == bool(flt.failure):
        return None
    scorer, _, label = (flt.label or "").partition(":")
    if flt.label and label == "None":  # the sums name a missing label "None"; the filter compares text
        return None
    sums = read_counts(conn, run_id)
    if sums is None:
        return None
    tasks = [flt.task] if flt.task else list({*sums.labels, *sums.failures})
    if flt.label:
        return sum(sums.labels.get(t, {}).get(scorer, {}).get(label, 0) for t in tasks)
    return sum(sums.failures.get(t, {}).get(str(flt.failure), 0) for t in tasks)


def _count(conn: Connection, where: list[ColumnElement[bool]]) -> int:
    """Matching cases, exact without filters (the run's index), else up to TOTAL_CAP + 1."""
    if len(where) == 1:
        return int(conn.execute(select(func.count()).select_from(case_results).where(*where)).scalar_one())
    matches = select(case_results.c.id).where(and_(*where)).limit(TOTAL_CAP + 1).subquery()
    return int(conn.execute(select(func.count()).select_from(matches)).scalar_one())


def failure_kinds(engine: Engine, run_id: str) -> dict[str, dict[str, int]]:
    """``task -> error kind -> n`` over the run's failed cases (the failed rows only are read)."""
    kind = _path("output", "error", "kind")
    query = (
        select(case_results.c.task_id, kind, func.count())
        .where(case_results.c.run_id == run_id, case_results.c.status == "failed")
        .group_by(case_results.c.task_id, kind)
        .order_by(func.count().desc())
    )
    found: dict[str, dict[str, int]] = {}
    with engine.connect() as conn:
        sums = read_counts(conn, run_id)
        if sums is not None:
            return sums.failures
        for task, name, n in conn.execute(query):
            found.setdefault(task, {})[str(name)] = int(n)
    return found


def label_counts(
    engine: Engine, run_id: str, scorers: Mapping[str, list[str]]
) -> dict[str, dict[str, dict[str, int]]]:
    """``task -> scorer -> label -> n``: how often each scorer gave each label (one query per scorer)."""
    found: dict[str, dict[str, dict[str, int]]] = {}
    with engine.connect() as conn:
        sums = read_counts(conn, run_id)
        if sums is not None:
            return {
                task: {name: sums.labels.get(task, {}).get(name, {}) for name in dict.fromkeys(names)}
                for task, names in scorers.items()
            }
        for task, names in scorers.items():
            for name in dict.fromkeys(names):
                label = _path("scores", name, "label")
                query = (
                    select(label, func.count())
                    .where(case_results.c.run_id == run_id, case_results.c.task_id == task)
                    .group_by(label)
                    .order_by(func.count().desc())
                )
                found.setdefault(task, {})[name] = {str(k): int(n) for k, n in conn.execute(query)}
    return found


def storable(engine: Engine, *ids: str) -> bool:
    """Whether the store can hold these ids: PostgreSQL text cannot hold NUL, so no id stored there has one
    (and asking is a database error); SQLite keeps what the dataset said, NUL included."""
    return engine.dialect.name == "sqlite" or not any("\x00" in i for i in ids)


def one_case(engine: Engine, run_id: str, task_id: str, case_id: str) -> CaseResult | None:
    raw = type_coerce(case_results.c.result, Text)
    query = select(raw).where(
        case_results.c.run_id == run_id,
        case_results.c.case_key == case_key(task_id, case_id),  # the unique key: an index look-up, no scan
        case_results.c.task_id == task_id,
        case_results.c.case_id == case_id,
    )
    with engine.connect() as conn:
        row = conn.execute(query).first()
    return parse_result(row[0]) if row is not None else None


def scorer_names(engine: Engine, run_id: str, task_ids: list[str]) -> dict[str, list[str]]:
    """``task -> scorer names`` as stored (the score keys of the task's first result)."""
    raw = type_coerce(case_results.c.result, Text)
    found: dict[str, list[str]] = {}
    with engine.connect() as conn:
        for task in task_ids:
            query = (
                select(raw).where(case_results.c.run_id == run_id, case_results.c.task_id == task).limit(1)
            )
            row = conn.execute(query).first()
            if row is not None:
                found[task] = list(parse_result(row[0]).scores)
    return found
