"""ResultStore: runs and their per-case results in any SQLAlchemy database (SQLite file by default)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from sqlalchemy import Engine, Row, insert, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError, NoSuchModuleError

from clineval.core import (
    CaseResult,
    EvalMetric,
    MetricValue,
    RunInfo,
    RunNotFoundError,
    RunResult,
    SuiteSpec,
    TaskAggregate,
    UserInputError,
)
from clineval.store.case_reads import CaseResultReads
from clineval.store.engine import (
    DRIVER_PACKAGES,
    display_url,
    make_engine,
    read_only_path,
    sqlite_path,
    unsupported_dialect,
)
from clineval.store.eval_results import EvalResultStore
from clineval.store.finalizing import finalize_once, finish, finish_values
from clineval.store.liveness import Owner, current_owner, is_alive, shown_status
from clineval.store.migrate import current_revision, upgrade
from clineval.store.migrations import HEAD
from clineval.store.tables import (
    RUN_STATUSES,
    runs,
    utc,
)

if TYPE_CHECKING:
    from clineval.store.shards import ShardStore
    from clineval.store.writer import ResultWriter

DEFAULT_URL = "sqlite:///./.clineval/clineval.db"
_NO_DATABASE = re.compile(r'database "[^"]*" does not exist')
_HINT = "list runs with `clineval runs`"
T = TypeVar("T")
OnWait = Callable[[Owner], None]


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
    """A run, how many case results are stored for it, and its stored scores (``clineval runs``)."""

    info: RunInfo
    n_cases: int
    n_failed: int
    overall: Mapping[str, MetricValue] = {}  # read-only: a NamedTuple's default is shared
    task_scores: Mapping[str, Mapping[str, MetricValue]] = {}  # task -> its headline scores


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


def _open_failure(err: BaseException) -> str:
    """The first line of the driver's message (a connection or file error: it holds no case data)."""
    text = str(getattr(err, "orig", None) or err).strip().splitlines()
    return " ".join(text[0].split()) if text else type(err).__name__


def _check_head(engine: Engine, path: Path) -> None:
    """A store that cannot be written cannot be migrated either: it must be at the head revision."""
    with engine.connect() as conn:
        revision = current_revision(conn)
    if revision != HEAD:
        raise UserInputError(
            f"the store {path} is read-only and at schema revision {revision or 'none'}, older than this "
            f"clineval's ({HEAD})",
            hint="copy it to a writable folder and run `clineval db upgrade --store sqlite:///COPY` there",
        )


class ResultStore(CaseResultReads):
    """Persistent runs. Safe to share between threads; every method runs its own short transaction."""

    def __init__(self, url: str = DEFAULT_URL, *, must_exist: bool = False, read_only: bool = False) -> None:
        """Open (creating and migrating if needed) the store at ``url``.

        ``must_exist``: for commands that only read. A SQLite file that does not exist is then an error
        instead of a new empty database, which would hide a mistyped ``--store`` behind "no runs".
        ``read_only`` (implies ``must_exist``): for commands that never write. A SQLite file whose folder
        cannot be written (read-only media) is then opened strictly read-only, with no migration and no
        migration lock: it must be at the schema's head revision already.
        """
        must_exist = must_exist or read_only
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
            self.engine = make_engine(url, read_only=read_only)
            frozen = read_only_path(parsed) if read_only else None
            if frozen is None:
                upgrade(self.engine)
            else:
                _check_head(self.engine, frozen)
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

    def list_runs_with_counts(self, limit: int = 50) -> list[RunSummary]:
        """The newest ``limit`` runs, newest first, with their case counts and stored scores."""
        infos = self.list_runs(limit)
        counts = self.case_counts(info.run_id for info in infos)
        scores = self.run_scores([info.run_id for info in infos])
        return [
            RunSummary(info, *counts.get(info.run_id, (0, 0)), *scores.get(info.run_id, ({}, {})))
            for info in infos
        ]

    def run_scores(
        self, run_ids: Sequence[str]
    ) -> dict[str, tuple[dict[str, MetricValue], dict[str, dict[str, MetricValue]]]]:
        """``run_id -> (overall, task -> scores)`` as each run stored them when it finished (strata left
        out, nothing validated: a listing reads a few numbers of each run)."""
        query = select(runs.c.run_id, runs.c.overall, runs.c.aggregates).where(runs.c.run_id.in_(run_ids))
        with self.engine.connect() as conn:
            return {
                row.run_id: (
                    dict(row.overall or {}),
                    {task: dict(agg.get("scores") or {}) for task, agg in (row.aggregates or {}).items()},
                )
                for row in conn.execute(query)
            }

    def finish_run(
        self,
        run_id: str,
        aggregates: Mapping[str, TaskAggregate],
        overall: Mapping[str, MetricValue],
        status: str = "finished",
        *,
        extra_provenance: Mapping[str, Any] | None = None,
        metrics: Iterable[EvalMetric] | None = None,
        finished_at: datetime | None = None,
    ) -> None:
        """Store the aggregates and mark the run ``finished`` (or ``partial`` / ``failed``); with
        ``extra_provenance`` merged into its provenance and ``metrics`` replacing its ``eval_results`` rows,
        all in one transaction (:mod:`clineval.store.finalizing`)."""
        values = finish_values(aggregates, overall, status, finished_at)
        if not finish(self.engine, run_id, values, extra_provenance, metrics):
            raise RunNotFoundError(f"no run {run_id!r} in {self.display_url}", hint=_HINT)

    def finalize_once(
        self, run_id: str, finalize: Callable[[], T], *, force: bool = False, on_wait: OnWait | None = None
    ) -> T | None:
        """``finalize()`` unless another process finalizes the run (sharded runs; see
        :func:`clineval.store.finalizing.finalize_once`): waits for a live claimant, takes over a dead one."""
        return finalize_once(self.engine, run_id, finalize, force=force, on_wait=on_wait)

    def update_provenance(self, run_id: str, extra: Mapping[str, Any]) -> None:
        """Merge ``extra`` into the run's provenance (top-level keys replaced), in one transaction."""
        with self.engine.begin() as conn:
            current = conn.execute(select(runs.c.provenance).where(runs.c.run_id == run_id)).first()
            if current is None:
                raise RunNotFoundError(f"no run {run_id!r} in {self.display_url}", hint=_HINT)
            merged = {**(current[0] or {}), **extra}
            conn.execute(update(runs).where(runs.c.run_id == run_id).values(provenance=merged))

    # -- case results -------------------------------------------------------------------------------
    def writer(
        self,
        run_id: str,
        summarize: Callable[[CaseResult], str] | None = None,
        *,
        retry_s: float | None = None,
    ) -> ResultWriter:
        """A background writer appending CaseResults of ``run_id`` (which must exist); ``summarize``
        gives each result's case summary (JSON text), stored beside it; ``retry_s``: how long a commit is
        retried through a store outage (default ``$CLINEVAL_STORE_RETRY_S`` or 30 s)."""
        from clineval.store.writer import ResultWriter  # only runs write: read commands start faster

        return ResultWriter(self.engine, self.resolve_run_id(run_id), summarize, retry_s=retry_s)

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
