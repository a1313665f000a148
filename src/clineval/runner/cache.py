"""ResponseCache: system outputs by cache key in one SQLite file, so a re-run makes zero calls.

Only successes are cached: a failed call (any error kind, ``circuit_open`` included) is never written, and
an entry that holds a failure (written by clineval before issue 23) reads as a miss. So a re-run, or a new
run of the same suite after an outage, calls every case that failed again, with no flag.

WAL mode with ``synchronous=NORMAL``: each ``put`` commits at once (nothing is lost when a run is killed)
without an fsync per write, which keeps a put in the tens of microseconds on the event loop thread
(see benchmarks/bench_live.py). Only keys and outputs are stored: keys are hashes built without secrets.

A cache that cannot be written (disk full, read-only, no permission), whether at open or mid-run, is not
an error of the run: writing stops at the first failure, :attr:`ResponseCache.write_error` says why, and
the run reports that once (not once per case) and goes on without caching.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from types import TracebackType

from clineval.core.errors import DataFileError
from clineval.core.output import SystemOutput

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS responses"
    " (key TEXT PRIMARY KEY, output TEXT NOT NULL, created_at REAL NOT NULL)"
)


def _reason(exc: BaseException) -> str:
    """SQLite's or the OS's words for the failure (they name the condition, never the data)."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


class ResponseCache:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.write_error: str | None = None  # set at the first failed write: caching is off from then on
        self._db: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.OperationalError) as exc:
            self.write_error = _reason(exc)
            return
        try:
            db.execute("PRAGMA busy_timeout=5000")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
        except sqlite3.OperationalError as exc:  # full, read-only, cannot be opened: run without it
            db.close()
            self.write_error = _reason(exc)
            return
        except sqlite3.DatabaseError as exc:  # not a SQLite file: a wrong path the user should fix
            db.close()
            raise DataFileError(
                f"not a usable response cache ({exc})",
                path=self.path,
                hint="delete the file or choose another cache path",
            ) from None
        self._db = db

    def get(self, key: str) -> SystemOutput | None:
        if self._db is None:
            return None
        row = self._db.execute("SELECT output FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        output = SystemOutput.model_validate_json(row[0])
        return None if output.failed else output  # an old cache's failure: a miss, never replayed

    def put(self, key: str, output: SystemOutput) -> None:
        """Store (or replace) one successful output; committed before returning. ``cached`` is not stored.

        A failure is not stored (see the module docstring); after a failed write (see :attr:`write_error`)
        this does nothing.
        """
        if self._db is None or self.write_error is not None or output.failed:
            return
        payload = output.model_dump_json(exclude={"cached"})
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, output, created_at) VALUES (?, ?, ?)",
                (key, payload, time.time()),
            )
        except sqlite3.OperationalError as exc:
            self.write_error = _reason(exc)

    def __len__(self) -> int:
        if self._db is None:
            return 0
        row = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
