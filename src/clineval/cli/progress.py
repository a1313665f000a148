"""Progress of a run, driven by the runner's hooks: a rich bar per task on a terminal, plain lines in a log.

A CI log is not a terminal, so the bar never shows there and a long nightly run would look hung until it
ends; there a line is written every ``interval_s`` seconds (``--progress-interval`` or
``CLINEVAL_PROGRESS_INTERVAL``, default 10), and one when each task ends::

    progress medqa: 412/1273 (32.4%) 41.2 cases/s, failed 3 (timeout 2, http_500 1), retries 5, cache hits 0

``--quiet`` turns both off. Counts come from each finished case's output (its error kind, its attempts,
whether it came from the cache), so retries of a case are counted once the case is done.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from types import TracebackType
from typing import IO, TYPE_CHECKING, Annotated

import typer
from rich.console import Console

if TYPE_CHECKING:  # the CLI's start-up stays light: the runner (and rich's progress bar) only to run
    from rich.progress import TaskID

    from clineval.core import CaseResult
    from clineval.runner.engine import TaskStats

DEFAULT_INTERVAL_S = 10.0

QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="No progress and no summary on stdout; errors and warnings still on stderr."
    ),
]
IntervalOpt = Annotated[
    float,
    typer.Option(
        "--progress-interval",
        envvar="CLINEVAL_PROGRESS_INTERVAL",
        min=0.05,
        help="Seconds between progress lines when stderr is not a terminal (a CI log).",
    ),
]


@dataclass
class ProgressSettings:
    quiet: bool = False
    interval_s: float = DEFAULT_INTERVAL_S


SETTINGS = ProgressSettings()  # set once per process by the global options (cli.main's callback)


def set_quiet(stdout: Console, quiet: bool = True) -> None:
    """``--quiet``: no progress, and nothing from ``stdout`` (summary tables); stderr is left alone. The
    global options set it on every invocation and reset it when the command ends, so a command run in the
    same process after a quiet one (tests, notebooks) prints again."""
    SETTINGS.quiet = quiet
    stdout.quiet = quiet


class RichProgress:
    def __init__(self, console: Console) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = console
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self._ids: dict[str, TaskID] = {}
        self._failed: dict[str, int] = {}

    def __enter__(self) -> RichProgress:
        self.progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.progress.stop()

    def task_started(self, task_id: str, total: int, already_done: int) -> None:
        self._failed[task_id] = 0
        self._ids[task_id] = self.progress.add_task(task_id, total=total, completed=already_done, failed=0)
        if already_done:
            self.console.print(
                f"[dim]{task_id}: {already_done} cases already stored, resuming the rest[/dim]"
            )

    def case_finished(self, task_id: str, result: CaseResult) -> None:
        self._failed[task_id] += result.failed
        self.progress.update(self._ids[task_id], advance=1, failed=self._failed[task_id])

    def task_finished(self, task_id: str, stats: TaskStats) -> None:
        self.progress.update(self._ids[task_id], failed=self._failed[task_id])


@dataclass
class _TaskCounts:
    task_id: str
    total: int
    done: int
    resumed: int  # done before this process started: not part of the rate
    started: float
    failures: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    cache_hits: int = 0

    def line(self, now: float, *, final: bool = False) -> str:
        elapsed = max(now - self.started, 1e-9)
        share = f"{100 * self.done / self.total:.1f}%" if self.total else "n/a"
        by_count = sorted(self.failures.items(), key=lambda kv: (-kv[1], kv[0]))
        kinds = ", ".join(f"{kind} {n}" for kind, n in by_count)
        failed = sum(self.failures.values())
        text = (
            f"progress {self.task_id}: {self.done}/{self.total} ({share}) "
            f"{(self.done - self.resumed) / elapsed:.1f} cases/s, failed {failed}"
            + (f" ({kinds})" if kinds else "")
            + f", retries {self.retries}, cache hits {self.cache_hits}"
        )
        return text + (f", done in {elapsed:.1f} s" if final else "")


class LineProgress:
    """Plain progress lines on ``stream`` from a background thread, for a stderr that is not a terminal."""

    def __init__(self, stream: IO[str], interval_s: float = DEFAULT_INTERVAL_S) -> None:
        self.stream = stream
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._current: _TaskCounts | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="clineval-progress", daemon=True)

    def __enter__(self) -> LineProgress:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval_s):
            with self._lock:
                line = self._current.line(time.monotonic()) if self._current is not None else None
            if line is not None:
                self._write(line)

    def task_started(self, task_id: str, total: int, already_done: int) -> None:
        with self._lock:
            self._current = _TaskCounts(task_id, total, already_done, already_done, time.monotonic())
        if already_done:
            self._write(f"{task_id}: {already_done} cases already stored, resuming the rest")

    def case_finished(self, task_id: str, result: CaseResult) -> None:
        output = result.output
        with self._lock:
            counts = self._current
            if counts is None or counts.task_id != task_id:
                return
            counts.done += 1
            if output.error is not None:
                counts.failures[output.error.kind] += 1
            if output.cached:
                counts.cache_hits += 1
            else:
                counts.retries += max(0, output.attempts - 1)

    def task_finished(self, task_id: str, stats: TaskStats) -> None:
        with self._lock:
            counts, self._current = self._current, None
        if counts is not None and counts.task_id == task_id:
            self._write(counts.line(time.monotonic(), final=True))


def progress_hooks(console: Console) -> AbstractContextManager[RichProgress | LineProgress | None]:
    """The hooks for a run reported on ``console`` (stderr): none when quiet, a bar on a terminal,
    else plain lines."""
    if SETTINGS.quiet:
        return nullcontext(None)
    if console.is_terminal:
        return RichProgress(console)
    return LineProgress(console.file, SETTINGS.interval_s)
