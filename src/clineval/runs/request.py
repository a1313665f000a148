"""What the caller asks for: a :class:`RunRequest` (suite, store, limits, shard, policy) and its own checks.

The first step of a run's lifecycle (request -> plan -> execute -> finalize, ``clineval.runs``): nothing here
reads a suite or a store; an inconsistent request is refused before anything else happens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from clineval.analysis import degradation
from clineval.core import CaseResult, RunInfo, RunType
from clineval.core.errors import UserInputError
from clineval.runner.engine import TaskStats
from clineval.runner.policy import CallPolicy
from clineval.runs.interrupts import resume_command

DEFAULT_STORE = "sqlite:///.clineval/clineval.db"
DEFAULT_CACHE = Path(".clineval/cache.sqlite")


class ProgressHooks(Protocol):
    def task_started(self, task_id: str, total: int, already_done: int) -> None: ...
    def case_finished(self, task_id: str, result: CaseResult) -> None: ...
    def task_finished(self, task_id: str, stats: TaskStats) -> None: ...


@dataclass
class RunRequest:
    suite_path: Path
    store_url: str = DEFAULT_STORE
    limit: int | None = None
    seed: int | None = None  # None: 0 for a new run, the stored seed on --resume
    concurrency: int = 16
    resume: str | None = None
    cache_path: Path | None = DEFAULT_CACHE
    retry_failed: bool = False
    policy: CallPolicy = field(default_factory=CallPolicy)
    tenant_id: str = "default"
    run_type: RunType = "adhoc"
    degraded_threshold: float = degradation.DEFAULT_THRESHOLD  # see clineval.analysis.degradation
    prices: Path | None = None  # ``--prices``: a price table priced token usage (clineval.analysis.usage)
    shard: tuple[int, int] | None = None  # (K, N): only the cases of shard K of N (clineval.store.shards)
    run_id: str | None = None  # the shared run a shard writes into (required with ``shard``)
    out: Path | None = None  # where the CLI writes the reports: kept in the printed resume command
    preflight: bool = False  # check every live endpoint first (clineval.systems.preflight); the CLI's default
    workers: int = 1  # ``--workers N``: N local processes over the shard partition (clineval.runs.workers)

    def __post_init__(self) -> None:
        _check_shard_options(self)
        if not 0.0 <= self.degraded_threshold <= 1.0:
            raise UserInputError(
                f"degraded threshold {self.degraded_threshold} is not a fraction",
                hint="use a number from 0 to 1, e.g. 0.2 for 20% of a task's cases",
            )


def _check_shard_options(request: RunRequest) -> None:
    if request.workers < 1:
        raise UserInputError(f"--workers {request.workers}: at least 1", hint="e.g. --workers 2, or auto")
    if request.workers > 1 and (request.shard is not None or request.resume is not None):
        flag = "--shard" if request.shard is not None else "--resume"
        raise UserInputError(
            f"--workers does not take {flag}",
            hint="resume a run of workers with the command it printed: --workers N --run-id NAME",
        )
    if request.workers > 1 and request.run_id is not None and not 0 < len(request.run_id) <= 64:
        raise UserInputError(f"--run-id {request.run_id!r} must be 1 to 64 characters")
    if request.workers == 1 and (request.shard is None) != (request.run_id is None):
        raise UserInputError(
            "--shard and --run-id go together",
            hint="every shard of a run names the same run id: --shard K/N --run-id R",
        )
    if request.shard is not None:
        k, n = request.shard
        if n < 1 or not 0 <= k < n:
            raise UserInputError(f"--shard {k}/{n}: K must be 0..N-1", hint="e.g. --shard 0/4 .. 3/4")
        if request.resume is not None:
            raise UserInputError(
                "--resume does not take --shard",
                hint="re-run the shard's own command: it runs only its pending cases",
            )
        if not request.run_id or len(request.run_id) > 64:
            raise UserInputError(f"--run-id {request.run_id!r} must be 1 to 64 characters")


def check_resume_options(info: RunInfo, request: RunRequest) -> None:
    """``--resume`` with a ``--limit`` or ``--seed`` other than the stored run's would sample other cases."""
    stored_given = (("limit", info.suite.limit, request.limit), ("seed", info.suite.seed, request.seed))
    for option, stored, given in stored_given:
        if given is not None and given != stored:
            shown = "none" if stored is None else stored
            raise UserInputError(
                f"--resume {info.run_id[:12]}: the run was made with --{option} {shown},"
                f" not --{option} {given}",
                hint=f"omit --{option} (the stored one is used), or start a new run",
            )


def request_resume_command(request: RunRequest, run_id: str) -> str:
    return resume_command(request.suite_path, run_id, request.store_url, DEFAULT_STORE, request.out)
