"""A run that stops early: what it tells the user, in one line, with the command that completes it.

Two ways a stored run stops before its last case: Ctrl-C (:class:`RunInterrupted`, stored as
``interrupted``) and a store that refuses a write mid-run: disk full, read-only, permissions
(:func:`store_write_error`). Both name the real ``clineval run SUITE --resume ID`` command: every case
that finished before is stored, and ``--resume`` runs only the others. Neither message holds case text
or model output (a SQLAlchemy error holds both in its SQL parameters; only a reason is kept).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from clineval.store import ResultStore, display_url
from clineval.store.engine import sqlite_path
from clineval.store.errors import StoreWriteError

# reason -> what to do before resuming
_REMEDY = {
    "disk full": "free space",
    "disk quota exceeded": "free space",
    "file too large": "free space",
    "read-only file system": "make it writable",
    "read-only": "make it writable",
    "read-only transaction": "make it writable",
    "permission denied": "make it writable",
}


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a stored run: carries the command that completes it."""

    def __init__(self, run_id: str, resume_command: str) -> None:
        super().__init__(run_id)
        self.run_id = run_id
        self.resume_command = resume_command


def resume_command(suite_path: Path, run_id: str, store_url: str, default_store: str) -> str:
    """``clineval run SUITE --resume ID`` (with ``--store`` when it is not the default; password masked)."""
    words = ["clineval", "run", shlex.quote(str(suite_path)), "--resume", run_id]
    if store_url != default_store:
        words += ["--store", shlex.quote(_where(store_url))]
    return " ".join(words)


def _where(store_url: str) -> str:
    path = sqlite_path(store_url)
    return f"sqlite:///{path}" if path is not None else display_url(store_url)


def store_write_error(
    store: ResultStore, run_id: str | None, reason: str, command: str | None
) -> StoreWriteError:
    """The one-line error for a store that refused a write (``reason`` from ``write_failure_reason``)."""
    path = sqlite_path(store.url)
    where = str(path) if path is not None else store.display_url
    remedy = _REMEDY.get(reason, "fix the store")
    if run_id is None or command is None:
        return StoreWriteError(
            f"the store {where} cannot be written ({reason}): no run was started",
            hint=f"{remedy} and run again",
        )
    try:
        stored = f"{len(store.finished_keys(run_id))} finished cases are stored"
    except Exception:  # the store may not even be readable now
        stored = "the finished cases committed before are stored"
    return StoreWriteError(
        f"the store {where} cannot be written ({reason}): {stored}",
        hint=f"{remedy} and complete the run with: {command}",
    )
