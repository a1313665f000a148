"""ResultStore: runs and their per-case results in any SQLAlchemy database (SQLite file by default)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import Row, Text, case, func, insert, select, tuple_, type_coerce, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError, NoSuchModuleError

from clineval.core import (
    CaseResult,
    MetricValue,
    RunInfo,
    RunNotFoundError,
    RunResult,
    SuiteSpec,
    TaskAggregate,
    UserInputError,
)
from clineval.store.engine import DRIVER_PACKAGES, display_url, make_engine, sqlite_path, unsupported_dialect
from clineval.store.eval_results import EvalResultStore
from clineval.store.liveness import Owner, current_owner, is_alive, shown_status
from clineval.store.migrate import upgrade
from clineval.store.tables import (
    FINAL_STATUSES,
    RUN_STATUSES,
    case_results,
    is_tagged,
    loads,
    runs,
    utc,
    utcnow,
)

if TYPE_CHECKING:
    from clineval.store.shards import ShardStore
    from clineval.store.writer import ResultWriter

DEFAULT_URL = "sqlite:///./.clineval/clineval.db"
_NO_DATABASE = re.compile(r'database "[^"]*" does not exist')
_HINT = "list runs with `clineval runs`"


def _owner_values(owner: Owner) -> dict[str, Any]:
    return {"owner_pid": owner.pid, "owner_host": owner.host, "heartbeat_at": owner.heartbeat_at}


def _run_values(info: RunInfo) -> dict[str, Any]:
    if info.status not in RUN_STATUSES:
        raise ValueError(f"run status must be one of {RUN_STATUSES}, got {info.status!r}")
    return {
        "run_id": info.run_id,
        "suite_name": info.suite.name,
        "suite_spec": info.suite.model_dump(mode="json"),
        "suite_hash": info.suite.spec_hash,
        "status": info.status,
        "created_at": utc(info.created_at),
        "finished_at": utc(info.finished_at),
        "provenance": info.provenance,
        "overall": None,
        "aggregates": None,
        "tenant_id": info.tenant_id,
        "run_type": info.run_type,
        **_owner_values(current_owner()),
    }


class RunSummary(NamedTuple):
    """A run and how many case results are stored for it (``clineval runs``)."""

    info: RunInfo
    n_cases: int
    n_failed: int


def _owner(row: Row[Any]) -> Owner:
    return Owner(pid=row.owner_pid, host=row.owner_host, heartbeat_at=utc(row.heartbeat_at))


def _info(row: Row[Any]) -> RunInfo:
    return RunInfo(
        run_id=row.run_id,
        suite=SuiteSpec.model_validate(row.suite_spec),
        status=shown_status(row.status, _owner(row), row.run_id),
        created_at=utc(row.created_at),
        finished_at=utc(row.finished_at),
        provenance=row.provenance or {},
        tenant_id=row.tenant_id,
        run_type=row.run_type,
    )


def _case_result(raw: Any) -> CaseResult:
    """From the stored JSON text (or an already parsed value, as some drivers return)."""
    if not isinstance(raw, str | bytes):
        return CaseResult.model_validate(raw)
    if is_tagged(raw if isinstance(raw, str) else raw.decode()):
        return CaseResult.model_validate(loads(raw))
    return CaseResult.model_validate_json(raw)


def _open_failure(err: BaseException) -> str:
    """The first line of the driver's message (a connection or file error: it holds no case data)."""
    text = str(getattr(err, "orig", None) or err).strip().splitlines()
    return " ".join(text[0].split()) if text else type(err).__name__


class ResultStore:
    """Persistent runs. Safe to share between threads; every method runs its own short transaction."""

    def __init__(self, url: str = DEFAULT_URL, *, must_exist: bool = False) -> None:
        """Open (creating and migrating if needed) the store at ``url``.

        ``must_exist``: for commands that only read. A SQLite file that does not exist is then an error
        instead of a new empty database, which would hide a mistyped ``--store`` behind "no runs".
        """
        self.url = url
        try:
            self.display_url = display_url(url)
            parsed = make_url(url)
        except ArgumentError:
            raise UserInputError(
                f"--store {url.split('@')[-1]!r} is not a SQLAlchemy URL",
                hint="e.g. sqlite:///runs.db or postgresql+psycopg://user@host/db",
            ) from None
        unsupported = unsupported_dialect(parsed)
        if unsupported is not None:
            raise UserInputError(
                f"cannot use the store {self.display_url}: {unsupported}",
                hint="use sqlite:///PATH or postgresql+psycopg://user@host/db",
            )
        path = sqlite_path(parsed)
        if must_exist and path is not None and not path.expanduser().exists():
            raise UserInputError(f"no store at {path}", hint="run `clineval run` first or pass --store")
        try:
            self.engine = make_engine(url)
            upgrade(self.engine)
        except ImportError as err:  # a URL naming a driver that is not installed (psycopg)
            module = (err.name or "").split(".")[0]
            install = DRIVER_PACKAGES.get(module, f"install the {module or parsed.drivername} driver")
            raise UserInputError(
                f"cannot open the store {self.display_url}: its driver {module or parsed.drivername!r}"
                " is not installed",
                hint=install,
            ) from None
        except (ArgumentError, NoSuchModuleError, DBAPIError, OSError) as err:
            if parsed.get_backend_name() == "postgresql" and _NO_DATABASE.search(_open_failure(err)):
                raise UserInputError(
                    f"no PostgreSQL database {parsed.database!r} at {self.display_url}",
                    hint=f"create it (createdb {parsed.database}) or pass --store",
                ) from None
            raise UserInputError(
                f"cannot open the store {self.display_url}: {_open_failure(err)}",
                hint="check --store (a SQLAlchemy URL, e.g. sqlite:///runs.db or postgresql+psycopg://...)",
            ) from None

    # -- runs ---------------------------------------------------------------------------------------
    def create_run(self, info: RunInfo) -> None:
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(runs), _run_values(info))
        except IntegrityError as err:
            raise ValueError(f"run {info.run_id!r} already exists in {self.display_url}") from err

    def create_run_if_absent(self, info: RunInfo) -> bool:
        """Store the run unless its id is stored already (two shards starting run R at once: one
        inserts, neither fails); True if this call stored it."""
        from clineval.store.shards import insert_if_absent

        return insert_if_absent(self.engine, _run_values(info))

    @property
    def shards(self) -> ShardStore:
        """The ``run_shards`` rows of this database (sharded runs)."""
        from clineval.store.shards import ShardStore

        return ShardStore(self.engine)

    def claim_run(self, run_id: str) -> RunInfo:
        """Take over a stored run to complete it (``--resume``): refused while its process is alive.

        The update is conditional on the owner read just before, so of two processes resuming the same
        dead run at once only one wins; the other is told the run is running.
        """
        row = self._run_row(run_id)
        owner = _owner(row)
        if row.status == "running" and is_alive(owner, row.run_id):
            raise UserInputError(
                f"run {row.run_id} is still running ({owner.describe()})",
                hint="wait for it to finish, or stop that process before resuming",
            )
        same_owner = (
            (runs.c.owner_pid == row.owner_pid) if row.owner_pid is not None else runs.c.owner_pid.is_(None)
        )
        same_beat = (
            (runs.c.heartbeat_at == row.heartbeat_at)
            if row.heartbeat_at is not None
            else runs.c.heartbeat_at.is_(None)
        )
        values = {"status": "running", "finished_at": None, **_owner_values(current_owner())}
        with self.engine.begin() as conn:
            done = conn.execute(
                update(runs).where(runs.c.run_id == row.run_id, same_owner, same_beat).values(**values)
            )
        if done.rowcount != 1:
            raise UserInputError(
                f"run {row.run_id} was resumed by another process just now",
                hint="list runs with `clineval runs`",
            )
        return self.get_run(row.run_id)

    def mark_interrupted(self, run_id: str) -> None:
        """Store ``interrupted`` for a run this process was running (Ctrl-C): resumable, not finished."""
        query = update(runs).where(
            runs.c.run_id == run_id, runs.c.status == "running", runs.c.owner_pid == os.getpid()
        )
        with self.engine.begin() as conn:
            conn.execute(query.values(status="interrupted"))

    def resolve_run_id(self, run_id: str) -> str:
        """The full id of the run ``run_id`` names exactly or as a unique prefix."""
        return str(self._run_row(run_id).run_id)

    def get_run(self, run_id: str) -> RunInfo:
        return _info(self._run_row(run_id))

    def _run_row(self, run_id: str) -> Row[Any]:
        with self.engine.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.run_id == run_id)).first()
            if row is None and run_id:
                query = select(runs).where(runs.c.run_id.startswith(run_id, autoescape=True))
                rows = conn.execute(query.order_by(runs.c.run_id).limit(11)).all()
                if len(rows) > 1:
                    shown = ", ".join(r.run_id for r in rows[:10]) + (", ..." if len(rows) > 10 else "")
                    raise RunNotFoundError(
                        f"run id prefix {run_id!r} is ambiguous: it matches {shown}",
                        hint="give more characters of the run id",
                    )
                row = rows[0] if rows else None
        if row is None:
            raise RunNotFoundError(f"no run {run_id!r} in {self.display_url}", hint=_HINT)
        return row

    def list_runs(self, limit: int = 50) -> list[RunInfo]:
        """The newest ``limit`` runs, newest first."""
        query = select(runs).order_by(runs.c.created_at.desc(), runs.c.run_id.desc()).limit(limit)
        with self.engine.connect() as conn:
            return [_info(row) for row in conn.execute(query)]

    def case_counts(self, run_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        """``run_id -> (cases stored, of which failed)``; runs without results are absent."""
        ids = list(run_ids)
        failed = func.sum(case((case_results.c.status == "failed", 1), else_=0))
        query = (
            select(case_results.c.run_id, func.count(), failed)
            .where(case_results.c.run_id.in_(ids))
            .group_by(case_results.c.run_id)
        )
        with self.engine.connect() as conn:
            return {row[0]: (int(row[1]), int(row[2] or 0)) for row in conn.execute(query)}

    def list_runs_with_counts(self, limit: int = 50) -> list[RunSummary]:
        infos = self.list_runs(limit)
        counts = self.case_counts(info.run_id for info in infos)
        return [RunSummary(info, *counts.get(info.run_id, (0, 0))) for info in infos]

    def finish_run(
        self,
        run_id: str,
        aggregates: Mapping[str, TaskAggregate],
        overall: Mapping[str, MetricValue],
        status: str = "finished",
    ) -> None:
        """Store the aggregates and mark the run ``finished`` (or ``partial`` / ``failed``)."""
        if status not in FINAL_STATUSES:
            raise ValueError(f"finish status must be one of {FINAL_STATUSES}, got {status!r}")
        values = {
            "status": status,
            "finished_at": utcnow(),
            "overall": dict(overall),
            "aggregates": {task: agg.model_dump(mode="json") for task, agg in aggregates.items()},
        }
        with self.engine.begin() as conn:
            done = conn.execute(update(runs).where(runs.c.run_id == run_id).values(**values))
        if done.rowcount == 0:
            raise RunNotFoundError(f"no run {run_id!r} in {self.display_url}", hint=_HINT)

    def update_provenance(self, run_id: str, extra: Mapping[str, Any]) -> None:
        """Merge ``extra`` into the run's provenance (top-level keys replaced), in one transaction."""
        with self.engine.begin() as conn:
            current = conn.execute(select(runs.c.provenance).where(runs.c.run_id == run_id)).first()
            if current is None:
                raise RunNotFoundError(f"no run {run_id!r} in {self.display_url}", hint=_HINT)
            merged = {**(current[0] or {}), **extra}
            conn.execute(update(runs).where(runs.c.run_id == run_id).values(provenance=merged))

    # -- case results -------------------------------------------------------------------------------
    def writer(self, run_id: str, summarize: Callable[[CaseResult], str] | None = None) -> ResultWriter:
        """A background writer appending CaseResults of ``run_id`` (which must exist); ``summarize``
        gives each result's case summary (JSON text), stored beside it."""
        from clineval.store.writer import ResultWriter  # only runs write: read commands start faster

        return ResultWriter(self.engine, self.resolve_run_id(run_id), summarize)

    def finished_keys(self, run_id: str) -> set[tuple[str, str]]:
        """``(task_id, case_id)`` of every stored result of the run (failed ones included)."""
        query = select(case_results.c.task_id, case_results.c.case_id).where(case_results.c.run_id == run_id)
        with self.engine.connect() as conn:
            return {(row[0], row[1]) for row in conn.execute(query)}

    def load_results(self, run_id: str) -> list[CaseResult]:
        """Every stored result of the run, in insertion order."""
        raw = type_coerce(case_results.c.result, Text)  # the JSON text: parsed and validated in one step
        query = select(raw).where(case_results.c.run_id == run_id).order_by(case_results.c.id)
        with self.engine.connect() as conn:
            return [_case_result(row[0]) for row in conn.execute(query)]

    def iter_results(self, run_id: str, batch: int = 1000) -> Iterator[CaseResult]:
        """Every stored result of the run, in insertion order, read ``batch`` rows at a time (a server-side
        cursor where the driver has one): for writing them out without holding them all."""
        raw = type_coerce(case_results.c.result, Text)
        query = select(raw).where(case_results.c.run_id == run_id).order_by(case_results.c.id)
        with self.engine.connect() as conn:
            rows = conn.execution_options(yield_per=batch).execute(query)
            for row in rows:
                yield _case_result(row[0])

    def iter_summaries(self, run_id: str, batch: int = 5000) -> Iterator[tuple[str, str, str | None]]:
        """``(task_id, case_id, summary JSON or None)`` of every stored result, in insertion order, read
        ``batch`` rows at a time; None for results stored before summaries were (read them in full)."""
        cols = case_results.c
        query = (
            select(cols.task_id, cols.case_id, cols.summary).where(cols.run_id == run_id).order_by(cols.id)
        )
        with self.engine.connect() as conn:
            for row in conn.execution_options(yield_per=batch).execute(query):
                yield row[0], row[1], row[2]

    def results_for(self, run_id: str, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], CaseResult]:
        """The stored results of the given ``(task_id, case_id)`` keys (those stored), read in full."""
        wanted = list(dict.fromkeys(keys))
        raw = type_coerce(case_results.c.result, Text)
        found: dict[tuple[str, str], CaseResult] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                key = tuple_(case_results.c.task_id, case_results.c.case_id)
                query = select(raw).where(case_results.c.run_id == run_id, key.in_(chunk))
                for row in conn.execute(query):
                    result = _case_result(row[0])
                    found[(result.task_id, result.case_id)] = result
        return found

    def results_slice(self, run_id: str, start: int, stop: int) -> list[CaseResult]:
        """The stored results at positions ``start`` to ``stop`` (exclusive) in insertion order."""
        raw = type_coerce(case_results.c.result, Text)
        query = select(raw).where(case_results.c.run_id == run_id).order_by(case_results.c.id)
        query = query.offset(start).limit(max(0, stop - start))
        with self.engine.connect() as conn:
            return [_case_result(row[0]) for row in conn.execute(query)]

    def count_results(self, run_id: str) -> int:
        query = select(func.count()).select_from(case_results).where(case_results.c.run_id == run_id)
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def load_run(self, run_id: str, *, results: Sequence[CaseResult] | None = None) -> RunResult:
        """Info, results and stored aggregates (empty while the run is unfinished).

        ``results``: the run's results as :meth:`load_results` returns them, already read by the caller
        (``finalize_run``): used as they are instead of reading and validating every one again."""
        row = self._run_row(run_id)
        aggregates = {task: TaskAggregate.model_validate(agg) for task, agg in (row.aggregates or {}).items()}
        return RunResult(
            info=_info(row),
            results=self.load_results(row.run_id) if results is None else list(results),
            aggregates=aggregates,
            overall=row.overall or {},
        )

    @property
    def eval_results(self) -> EvalResultStore:
        """The ``eval_results`` rows of this database."""
        return EvalResultStore(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
