"""The run loop: for each task, call the system on every pending case (bounded concurrency), score, store.

Calls go through ``call_system`` (timeouts, retries, cache); each finished case is handed to the writer at
once, so a crash loses nothing that finished, and a resumed run skips what the store already holds.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from clineval.core import Case, CaseResult, Score, Scorer, ScoringContext, System, SystemOutput
from clineval.runner.cache import ResponseCache
from clineval.runner.calls import call_system
from clineval.runner.judging import JudgeStep
from clineval.runner.policy import CallPolicy
from clineval.runner.selection import SelectionStep

# A replayed system answers without suspending, so one worker would never give the event loop a turn: the
# loop then never drops the cancelled timers of every call's timeout (~200 bytes a case, 200 MB at 1M).
YIELD_EVERY = 1000


RUN_GC_THRESHOLD = (100_000, 50, 1000)


@contextmanager
def run_gc() -> Iterator[None]:
    """The garbage collector tuned for a run's loop (restored after): what was loaded before it (cases,
    indexes, modules) is frozen out of every collection, and the young generation is collected every
    100,000 allocations instead of 700. A call makes dozens of short-lived acyclic objects, so default
    collections cost ~30 us a call at concurrency 500 (benchmarks/bench_live.py --client-cpu)."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*RUN_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


class ResultSink(Protocol):
    """Where finished results go (the store's writer); ``put`` must not block the event loop."""

    def put(self, result: CaseResult) -> None: ...


@dataclass
class RunSettings:
    concurrency: int = 16
    policy: CallPolicy = field(default_factory=CallPolicy)
    cache: ResponseCache | None = None
    retry_failed: bool = False

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")


@dataclass
class TaskStats:
    done: int = 0
    failed: int = 0
    cached: int = 0
    calls: int = 0
    seconds: float = 0.0
    judge_pairs: int = 0
    judge_calls: int = 0
    judge_errors: int = 0


def score_case(
    task_id: str,
    case: Case,
    output: SystemOutput,
    scorers: Sequence[Scorer],
    extras: dict[str, Any] | None = None,
) -> CaseResult:
    """Every scorer on one case; ``extras`` (e.g. the judge's ``judgments``) reach them in the context."""
    ctx = ScoringContext(case=case, output=output, task_id=task_id, extras=dict(extras or {}))
    scores: dict[str, Score] = {}
    for scorer in scorers:
        try:
            scores[scorer.name] = scorer(ctx)
        except Exception as err:  # a scorer bug on one case is recorded, never kills the run
            scores[scorer.name] = Score(
                value=float("nan"), label="scorer_error", explanation=f"{type(err).__name__}: {err}"
            )
    return CaseResult(
        task_id=task_id,
        case_id=case.id,
        output=output,
        scores=scores,
        metadata=dict(case.metadata),
        reference=case.reference.answer,
    )


async def run_task(
    task_id: str,
    cases: Iterable[Case],
    system: System,
    scorers: Sequence[Scorer],
    sink: ResultSink,
    settings: RunSettings,
    on_result: Callable[[CaseResult], None] | None = None,
    selection: SelectionStep | None = None,
    judge: JudgeStep | None = None,
) -> TaskStats:
    """Run one task over ``cases`` (already filtered to the pending ones)."""
    stats = TaskStats()
    pending = iter(cases)
    live = system.live or selection is not None or judge is not None
    workers = settings.concurrency if live else 1

    async def worker() -> None:
        for taken, case in enumerate(pending):  # a shared iterator: each case is taken by exactly one worker
            if not live and taken % YIELD_EVERY == YIELD_EVERY - 1:
                await asyncio.sleep(0)  # see YIELD_EVERY
            output = await call_system(
                system, case, settings.policy, settings.cache, retry_failed=settings.retry_failed
            )
            if selection is not None:
                output = await selection.run(
                    case, output, settings.policy, settings.cache, retry_failed=settings.retry_failed
                )
            extras: dict[str, Any] = {}
            if judge is not None:
                output, extras = await judge.run(
                    task_id,
                    case,
                    output,
                    scorers,
                    settings.policy,
                    settings.cache,
                    retry_failed=settings.retry_failed,
                )
            result = score_case(task_id, case, output, scorers, extras)
            sink.put(result)
            stats.done += 1
            stats.failed += output.failed
            stats.cached += output.cached
            stats.calls += 0 if output.cached or not system.live else output.attempts
            if on_result is not None:
                on_result(result)

    steps: list[System | JudgeStep] = [system] if selection is None else [system, selection.system]
    if judge is not None:
        steps.append(judge)
    for step in steps:
        await step.start(settings.concurrency)
    try:
        await asyncio.gather(*(worker() for _ in range(workers)))
    finally:
        for step in steps:
            await step.close()
    if judge is not None:
        stats.judge_pairs, stats.judge_calls = judge.stats.pairs, judge.stats.calls
        stats.judge_errors = judge.stats.errors
    return stats
