"""``clineval run SUITE --workers N``: one run as N local processes over the shard partition (issue 26).

The parent plans once (suite loaded and checked, the run stored as a sharded run of N shards, named by
``--run-id`` or a new id), then forks N workers: worker K runs the cases of shard K
(:func:`clineval.runs.shards.shard_suite`) through :func:`~clineval.runs.execute.execute` into the same
store, with its own connection and writer, exactly as ``--shard K/N`` would, but without loading the suite
again (the forked workers share the parent's dataset and prediction indexes). The parent relays the workers'
progress to the caller's hooks, summed per task and in the suite's task order, waits for all of them, and
finalizes the run once. Per-case results are the same as one process gives (each case is scored alone); only
the order of the rows in the store differs.

A live endpoint's ``--concurrency`` is divided across the workers (each worker gets ``ceil(C / N)``), so the
endpoint sees about the same number of calls in flight as with one process.

Ctrl-C reaches every worker (they are in the terminal's process group): each stores its shard as
``interrupted`` and exits; the parent then prints one command, ``clineval run SUITE --workers N --run-id
NAME``, which resumes every shard (each runs only its cases not stored yet) and finalizes. A worker that
fails stops the run with its one-line error; the same command resumes it. ``fork`` is needed (Linux, macOS).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import selectors
import struct
import sys
import traceback
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from clineval.analysis.usage import load_prices
from clineval.config import BuiltSuite, load_suite
from clineval.core import CaseResult, RunResult, SystemOutput
from clineval.core.errors import UserInputError
from clineval.datasets.lazy_cases import case_ids
from clineval.runner.engine import TaskStats
from clineval.runs.execute import execute, unmatched_predictions
from clineval.runs.finalize import finalize_run
from clineval.runs.interrupts import RunInterrupted, resume_command
from clineval.runs.judge_status import judge_qualification
from clineval.runs.plan import check_inputs, new_run_info
from clineval.runs.request import DEFAULT_STORE, ProgressHooks, RunRequest
from clineval.runs.shards import check_same_run, shard_suite
from clineval.store import ResultStore
from clineval.store.shards import shard_run_id

RELAY_EVERY = 256  # cases a worker reports at once (a message per case would cost the parent a core)
_HEADER = struct.Struct("!I")


def workers_command(request: RunRequest, name: str) -> str:
    """The one command that resumes every worker of the run and finalizes it."""
    command = resume_command(request.suite_path, "RUN", request.store_url, DEFAULT_STORE, request.out)
    return command.replace("--resume RUN", f"--workers {request.workers} --run-id {name}", 1)


def run_workers(request: RunRequest, hooks: ProgressHooks | None, on_start: Any = None) -> RunResult:
    """Plan, fork ``request.workers`` workers, relay their progress, finalize once (module docstring)."""
    if not hasattr(os, "fork"):
        raise UserInputError(
            "--workers needs fork (Linux or macOS)", hint="run shards: --shard K/N --run-id R"
        )
    of = request.workers
    name = request.run_id or uuid.uuid4().hex
    prices = load_prices(request.prices) if request.prices is not None else None
    store = ResultStore(request.store_url)
    run_id, started = shard_run_id(name), False
    try:
        seed = 0 if request.seed is None else request.seed
        suite = load_suite(request.suite_path, limit=request.limit, seed=seed)
        check_inputs(suite, request)
        judge = judge_qualification(store, suite.spec, datetime.now(UTC))
        store.create_run_if_absent(new_run_info(suite, request, run_id, shards=of, run_name=name, **judge))
        check_same_run(store.get_run(run_id), suite, of)
        done = store.finished_keys(run_id)
        started = True
        if on_start is not None:
            on_start(run_id)
        share = replace(request, concurrency=-(-request.concurrency // of))  # ceil: the endpoint's total kept
        store.engine.dispose()  # no pooled connection crosses the fork
        outcome = _fork_all(suite, share, run_id, done, of, hooks)
        if suite.spec.limit is None and not done and not outcome.errors and not outcome.interrupted:
            outcome.warnings.extend(_unmatched(suite))
        del suite, done
        if outcome.interrupted:
            raise KeyboardInterrupt
        if outcome.errors:
            raise UserInputError(
                f"{len(outcome.errors)} of {of} workers failed: {outcome.errors[0]}",
                hint=f"fix it, then resume every worker: {workers_command(request, name)}",
            )
        extra = {"warnings": outcome.warnings, "timings": outcome.timings(), "workers": of}
        run = store.finalize_once(  # forced: the parent is the run's one finalizer (a re-run: same numbers)
            run_id,
            lambda: finalize_run(store, run_id, extra, request.degraded_threshold, prices),
            force=True,
        )
        assert run is not None  # a forced claim is always this process's
        return run
    except KeyboardInterrupt:
        if not started:
            raise
        raise RunInterrupted(run_id, workers_command(request, name)) from None
    finally:
        store.close()


def _unmatched(suite: BuiltSuite) -> list[str]:
    """The whole run's replayed predictions no case asked for (each worker asked for its shard's only)."""
    found: list[str] = []
    for task in suite.tasks:
        mark = getattr(task.system, "mark_used", None)
        if callable(mark):
            mark(case_ids(task.cases))
            found.extend(unmatched_predictions(task))
    return found


@dataclass
class _Outcome:
    stats: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # task -> each worker's TaskStats
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    interrupted: bool = False

    def timings(self) -> dict[str, dict[str, Any]]:
        """Per task: the workers' counts summed, and the longest worker's seconds."""
        summed: dict[str, dict[str, Any]] = {}
        for task, each in self.stats.items():
            total = {key: sum(s[key] for s in each) for key in each[0]}
            total["seconds"] = max(s["seconds"] for s in each)
            summed[task] = total
        return summed


def _send(fd: int, message: Any) -> None:
    data = pickle.dumps(message)
    os.write(fd, _HEADER.pack(len(data)))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Relay:
    """A worker's progress hooks: batches of (task, error kind, cached, attempts) sent to the parent."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending: list[tuple[str, str | None, bool, int]] = []

    def flush(self) -> None:
        if self.pending:
            _send(self.fd, ("cases", self.pending))
            self.pending = []

    def task_started(self, task_id: str, total: int, already_done: int) -> None:
        _send(self.fd, ("start", task_id, total, already_done))

    def case_finished(self, task_id: str, result: CaseResult) -> None:
        output = result.output
        kind = output.error.kind if output.error is not None else None
        self.pending.append((task_id, kind, output.cached, output.attempts))
        if len(self.pending) >= RELAY_EVERY:
            self.flush()

    def task_finished(self, task_id: str, stats: TaskStats) -> None:
        self.flush()
        _send(self.fd, ("end", task_id, vars(stats)))


def _worker(
    suite: BuiltSuite,
    request: RunRequest,
    run_id: str,
    done: set[tuple[str, str]],
    shard: int,
    of: int,
    fd: int,
) -> int:
    """Worker ``shard``'s whole life (in the forked child); its exit code."""
    store = ResultStore(request.store_url)
    relay = _Relay(fd)
    try:
        mine = shard_suite(suite, shard, of)
        store.shards.start(run_id, shard, of)
        try:
            stats, warnings = asyncio.run(execute(mine, store, run_id, done, request, relay, unmatched=False))
        except KeyboardInterrupt:
            with contextlib.suppress(Exception):
                store.shards.finish(run_id, shard, cases=0, status="interrupted")
            _send(fd, ("interrupted",))
            return 130
        keys = {(t.spec.id, c) for t in mine.tasks for c in case_ids(t.cases)}
        store.shards.finish(run_id, shard, cases=len(keys & store.finished_keys(run_id)))
        _send(fd, ("done", {task: vars(s) for task, s in stats.items()}, warnings))
        return 0
    except BaseException as err:  # one line to the parent; the traceback only to the log's debug level
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        with contextlib.suppress(Exception):
            _send(fd, ("error", f"worker {shard}/{of}: {message}", traceback.format_exc()))
        return 1
    finally:
        with contextlib.suppress(Exception):
            store.close()


def _fork_all(
    suite: BuiltSuite,
    request: RunRequest,
    run_id: str,
    done: set[tuple[str, str]],
    of: int,
    hooks: ProgressHooks | None,
) -> _Outcome:
    """Fork the workers, relay their messages until every pipe closes, reap them."""
    pipes: dict[int, int] = {}  # read end -> worker
    pids: list[int] = []
    sys.stdout.flush()
    sys.stderr.flush()
    for shard in range(of):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(read)
            code = 1
            try:
                code = _worker(suite, request, run_id, done, shard, of, write)
            finally:
                os.close(write)
                os._exit(code)
        os.close(write)
        pipes[read] = shard
        pids.append(pid)
    outcome = _Outcome()
    progress = _Progress([t.spec.id for t in suite.tasks], of, hooks)
    try:
        _read_all(pipes, outcome, progress)
    except KeyboardInterrupt:
        outcome.interrupted = True
        with contextlib.suppress(KeyboardInterrupt):
            _read_all(pipes, outcome, progress)  # the workers store their shards as interrupted
    finally:
        for fd in list(pipes):  # left open only if reading failed: a worker blocked writing then stops
            with contextlib.suppress(OSError):
                os.close(fd)
        for pid in pids:
            _reap(pid, outcome)
    return outcome


def _reap(pid: int, outcome: _Outcome) -> None:
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except KeyboardInterrupt:
            outcome.interrupted = True
            continue
        except ChildProcessError:
            return
        code = os.waitstatus_to_exitcode(status)
        if code == 130 or code == -2:
            outcome.interrupted = True
        elif code != 0 and not outcome.errors:
            outcome.errors.append(f"a worker exited with status {code}")
        return


def _read_all(pipes: dict[int, int], outcome: _Outcome, progress: _Progress) -> None:
    buffers = {fd: b"" for fd in pipes}
    with selectors.DefaultSelector() as selector:
        for fd in pipes:
            if fd in buffers:
                selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            for key, _ in selector.select():
                fd = int(key.fd)
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    selector.unregister(fd)
                    os.close(fd)
                    del pipes[fd]
                    continue
                buffers[fd] += chunk
                buffers[fd] = _messages(buffers[fd], outcome, progress)


def _messages(data: bytes, outcome: _Outcome, progress: _Progress) -> bytes:
    """Handle every whole message in ``data``; the rest (a message still arriving) is returned."""
    while len(data) >= _HEADER.size:
        (size,) = _HEADER.unpack_from(data)
        if len(data) < _HEADER.size + size:
            break
        message = pickle.loads(data[_HEADER.size : _HEADER.size + size])  # our own fork
        data = data[_HEADER.size + size :]
        kind = message[0]
        if kind == "done":
            for task, stats in message[1].items():
                outcome.stats.setdefault(task, []).append(stats)
            outcome.warnings.extend(w for w in message[2] if w not in outcome.warnings)
        elif kind == "error":
            outcome.errors.append(message[1])
        elif kind == "interrupted":
            outcome.interrupted = True
        else:
            progress.event(message)
    return data


class _Progress:
    """The workers' progress, summed per task and shown in the suite's task order: a task starts for the
    caller once every worker started it, and finishes once every worker finished it."""

    def __init__(self, order: list[str], of: int, hooks: ProgressHooks | None) -> None:
        self.order = order
        self.of = of
        self.hooks = hooks
        self.started: dict[str, list[tuple[int, int]]] = {t: [] for t in order}
        self.finished: dict[str, list[dict[str, Any]]] = {t: [] for t in order}
        self.cases: dict[str, list[tuple[str, str | None, bool, int]]] = {t: [] for t in order}
        self.current = 0  # index in ``order`` of the task shown now
        self.shown_start = False
        self._results: dict[tuple[str, str | None, bool, int], CaseResult] = {}

    def event(self, message: tuple[Any, ...]) -> None:
        if self.hooks is None:
            return
        kind = message[0]
        if kind == "start":
            self.started[message[1]].append((message[2], message[3]))
        elif kind == "cases":
            for case in message[1]:
                self.cases[case[0]].append(case)
        elif kind == "end":
            self.finished[message[1]].append(message[2])
        self._show()

    def _result(self, case: tuple[str, str | None, bool, int]) -> CaseResult:
        """A stand-in result holding what the hooks read (failed, error kind, cached, attempts); one per
        distinct tuple, so relaying costs no model construction per case."""
        found = self._results.get(case)
        if found is None:
            task, kind, cached, attempts = case
            output = SystemOutput(cached=cached, attempts=attempts)
            if kind is not None:
                output = SystemOutput.failure(kind, "", attempts=attempts).model_copy(
                    update={"cached": cached}
                )
            found = self._results[case] = CaseResult(task_id=task, case_id="", output=output)
        return found

    def _show(self) -> None:
        assert self.hooks is not None
        while self.current < len(self.order):
            task = self.order[self.current]
            if not self.shown_start:
                if len(self.started[task]) < self.of:
                    return
                total = sum(t for t, _ in self.started[task])
                self.hooks.task_started(task, total, sum(a for _, a in self.started[task]))
                self.shown_start = True
            for case in self.cases[task]:
                self.hooks.case_finished(task, self._result(case))
            self.cases[task] = []
            if len(self.finished[task]) < self.of:
                return
            each = self.finished[task]
            summed = {key: sum(s[key] for s in each) for key in each[0]}
            summed["seconds"] = max(s["seconds"] for s in each)
            self.hooks.task_finished(task, TaskStats(**summed))
            self.current += 1
            self.shown_start = False
