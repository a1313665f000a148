"""Run the real `clineval` command in this process with a storage fault injected (tests only).

    python tests/store_faults.py FAULT K -- clineval arguments...

FAULT is one of:
- ``store_full`` / ``store_readonly``: the result writer commits exactly K results, then every insert
  fails as SQLAlchemy reports SQLite's "database or disk is full" / "attempt to write a readonly
  database". The error carries the SQL parameters (case text and model output), as the real one does, so a
  test can check that none of it reaches the console.
- ``store_erofs``: the same, raised as the OS error EROFS (a file system remounted read-only).
- ``cache_full``: the response cache stores K outputs, then every write fails with "database or disk is
  full".
- ``finalize_kill``: the process is killed (SIGKILL) as it is about to store the run's aggregates, after it
  claimed the finalization (K is ignored): a shard dying between the claim and the aggregates.
"""

from __future__ import annotations

import errno
import os
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy.exc import OperationalError

from clineval.core import CaseResult
from clineval.runner import cache as cache_module
from clineval.store.writer import ResultWriter

SQLITE_MESSAGES = {
    "store_full": "database or disk is full",
    "store_readonly": "attempt to write a readonly database",
}


def _store_error(fault: str, batch: list[CaseResult]) -> BaseException:
    if fault == "store_erofs":
        return OSError(errno.EROFS, "Read-only file system")
    params = [{"result_json": r.model_dump_json(), "case_id": r.case_id} for r in batch]
    return OperationalError(
        "INSERT INTO case_results (run_id, task_id, case_id, status, result) VALUES (?, ?, ?, ?, ?)",
        params,
        sqlite3.OperationalError(SQLITE_MESSAGES[fault]),
    )


def inject_store_fault(fault: str, keep: int) -> None:
    original = ResultWriter._insert
    stored = [0]

    def failing_insert(self: ResultWriter, batch: list[CaseResult]) -> None:
        room = keep - stored[0]
        if room > 0:
            original(self, batch[:room])
            stored[0] += min(room, len(batch))
        if len(batch) > max(room, 0):
            raise _store_error(fault, batch)

    ResultWriter._insert = failing_insert  # type: ignore[method-assign]


class _FullAfter(sqlite3.Connection):
    keep = 0
    inserts = 0

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        if sql.lstrip().upper().startswith("INSERT"):
            type(self).inserts += 1
            if type(self).inserts > self.keep:
                raise sqlite3.OperationalError("database or disk is full")
        return super().execute(sql, *args)


class _CacheSqlite3:
    """``sqlite3`` as the cache module sees it: connections that fill up (the store's are untouched)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(sqlite3, name)

    @staticmethod
    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        return sqlite3.connect(*args, factory=_FullAfter, **kwargs)


def inject_cache_fault(keep: int) -> None:
    _FullAfter.keep = keep
    cache_module.sqlite3 = _CacheSqlite3()  # type: ignore[assignment]


def inject_finalize_kill() -> None:
    from clineval.store import ResultStore

    def killed(*_args: Any, **_kwargs: Any) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    ResultStore.finish_run = killed  # type: ignore[method-assign]


def main() -> None:
    fault, keep, sep, *args = sys.argv[1:]
    assert sep == "--", "usage: store_faults.py FAULT K -- ARGS..."
    if fault == "finalize_kill":
        inject_finalize_kill()
    elif fault == "cache_full":
        inject_cache_fault(int(keep))
    else:
        inject_store_fault(fault, int(keep))
    from clineval.cli.main import app

    app(args, prog_name="clineval")


if __name__ == "__main__":
    main()
