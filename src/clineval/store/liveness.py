"""Is a ``running`` run still being run? Its owner (pid and host) and the heartbeat its writer keeps.

The process running a run stores its pid and host name with the run, and its result writer refreshes
``heartbeat_at`` every :data:`HEARTBEAT_S` seconds. A run stored as ``running`` is shown as
``interrupted`` when its process is gone:

- its owner is a process of this host that no longer exists (``kill -9``, a crash: known at once), or
- its heartbeat is older than :data:`STALE_AFTER_S` (another host, or a pid reused since).

A live owner keeps a fresh heartbeat, so a second process refuses to ``--resume`` it.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime

from clineval.store.tables import utc, utcnow

HEARTBEAT_S = 10.0
# Three missed beats. A beat can be delayed by SQLite's 10 s busy timeout, never by the event loop (the
# writer's own thread sends it), so a live run is not declared dead by one slow write.
STALE_AFTER_S = 3 * HEARTBEAT_S
HOST = socket.gethostname()[:255]
# Runs whose writer is open in this process (and ``finalize:<run id>`` for a finalization it holds,
# clineval.store.finalizing): the pid test cannot tell them from a run this process started and then gave
# up (a failed write, Ctrl-C in a library caller), so they are tracked here.
_ACTIVE_HERE: set[str] = set()


@dataclass(frozen=True)
class Owner:
    """Who runs a run, as stored with it."""

    pid: int | None
    host: str | None
    heartbeat_at: datetime | None

    def describe(self, now: datetime | None = None) -> str:
        """``pid 123 on host-a, heartbeat 4 s ago`` (for messages)."""
        parts = []
        if self.pid is not None:
            parts.append(f"pid {self.pid}" + (f" on {self.host}" if self.host else ""))
        if self.heartbeat_at is not None:
            age = ((now or utcnow()) - self.heartbeat_at).total_seconds()
            parts.append(f"heartbeat {max(0.0, age):.0f} s ago")
        return ", ".join(parts) or "no owner recorded"


def current_owner() -> Owner:
    return Owner(pid=os.getpid(), host=HOST, heartbeat_at=utcnow())


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    except OSError:  # a platform without signal 0: fall back on the heartbeat
        return True
    return True


def mark_active(run_id: str, active: bool) -> None:
    """Called by the result writer as it opens (True) and closes (False)."""
    if active:
        _ACTIVE_HERE.add(run_id)
    else:
        _ACTIVE_HERE.discard(run_id)


def is_alive(owner: Owner, run_id: str, now: datetime | None = None) -> bool:
    """Whether the process that owns a ``running`` run is (as far as can be told) still running it."""
    beat = utc(owner.heartbeat_at)
    if beat is None:
        return False  # written before heartbeats existed, or never started: nothing keeps it alive
    if owner.host == HOST and owner.pid == os.getpid():
        return run_id in _ACTIVE_HERE
    if owner.host == HOST and owner.pid is not None and not _pid_exists(owner.pid):
        return False
    return ((now or utcnow()) - beat).total_seconds() <= STALE_AFTER_S


def shown_status(status: str, owner: Owner, run_id: str, now: datetime | None = None) -> str:
    """The status to show: a ``running`` run whose process died is ``interrupted``."""
    if status == "running" and not is_alive(owner, run_id, now):
        return "interrupted"
    return status
