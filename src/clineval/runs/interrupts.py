"""A run that stops early: what it tells the user, in one line, with the command that completes it.

Two ways a stored run stops before its last case: Ctrl-C (:class:`RunInterrupted`, stored as
``interrupted``) and a store that refuses a write mid-run: disk full, read-only, permissions
(:func:`store_write_error`). Both name the real ``clineval run SUITE --resume ID`` command: every case
that finished before is stored, and ``--resume`` runs only the others. Neither message holds case text
or model output (a SQLAlchemy error holds both in its SQL parameters; only a reason is kept).

SIGTERM, what CI runners, Airflow and ``timeout`` send when a job runs out of time, stops a run exactly as
Ctrl-C does (:func:`sigterm_as_interrupt`): stored as ``interrupted``, the resume line printed, but exit
code 143 (128 + SIGTERM, what the caller expects of a terminated process), not Ctrl-C's 130. Before, the
process died at once: exit 143 but no resume line, and the run stored as ``running`` (shown interrupted
only once its process or heartbeat was found gone).
"""

from __future__ import annotations

import shlex
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

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


INTERRUPTED_EXIT = 130  # Ctrl-C: 128 + SIGINT
TERMINATED_EXIT = 143  # SIGTERM: 128 + SIGTERM


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a stored run: carries the command that completes it."""

    exit_code = INTERRUPTED_EXIT

    def __init__(self, run_id: str, resume_command: str) -> None:
        super().__init__(run_id)
        self.run_id = run_id
        self.resume_command = resume_command


class Terminated(KeyboardInterrupt):
    """A KeyboardInterrupt that SIGTERM caused (see :func:`sigterm_as_interrupt`); keeps the resume
    command of the interrupted run, if one was stored."""

    exit_code = TERMINATED_EXIT

    def __init__(self, cause: KeyboardInterrupt) -> None:
        super().__init__(*cause.args)
        self.resume_command: str | None = getattr(cause, "resume_command", None)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block SIGTERM does what Ctrl-C does: it runs the SIGINT handler in place (Python's, which
    raises KeyboardInterrupt, or asyncio's, which cancels the running loop's main task and then raises it),
    so the run stops the same way. A KeyboardInterrupt leaving the block after a SIGTERM leaves it as
    :class:`Terminated` (exit code 143). Only the main thread can set signal handlers: elsewhere the
    block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint):
            on_sigint(signal.SIGINT, frame)
        else:  # SIGINT ignored (a background job of a shell): stop all the same
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    except KeyboardInterrupt as err:
        if not received or isinstance(err, Terminated):
            raise
        raise Terminated(err) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def resume_command(
    suite_path: Path, run_id: str, store_url: str, default_store: str, out: Path | None = None
) -> str:
    """``clineval run SUITE --resume ID`` (with ``--store`` when it is not the default, password masked;
    with ``--out`` when the run was to write its reports there: the resumed run writes them, not nothing)."""
    words = ["clineval", "run", shlex.quote(str(suite_path)), "--resume", run_id]
    if store_url != default_store:
        words += ["--store", shlex.quote(_where(store_url))]
    if out is not None:
        words += ["--out", shlex.quote(str(out))]
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
