"""Execute a run (or one shard of it): every pending case of every task through the runner into the store.

Third step of the lifecycle (request -> plan -> execute -> finalize). The same function runs an unsharded run,
a resumed one and a shard: what differs is only which cases are pending (``done`` holds the stored keys).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from clineval.config import BuiltSuite, BuiltTask
from clineval.datasets.lazy_cases import case_ids, where_id
from clineval.runner.cache import ResponseCache
from clineval.runner.engine import RunSettings, TaskStats, run_gc, run_task
from clineval.runs.plan import summary_plan
from clineval.runs.request import ProgressHooks, RunRequest
from clineval.store import ResultStore


async def execute(
    suite: BuiltSuite,
    store: ResultStore,
    run_id: str,
    done: set[tuple[str, str]],
    request: RunRequest,
    hooks: ProgressHooks | None,
    *,
    unmatched: bool = True,
) -> tuple[dict[str, TaskStats], list[str]]:
    """``unmatched``: warn about replayed predictions no case asked for (a worker of a run of workers does
    not: it asked for its shard's only; the parent warns for the whole run, ``unmatched_predictions``)."""
    cache = ResponseCache(request.cache_path) if request.cache_path is not None else None
    settings = RunSettings(
        concurrency=request.concurrency, policy=request.policy, cache=cache, retry_failed=request.retry_failed
    )
    stats: dict[str, TaskStats] = {}
    warnings: list[str] = [w for task in suite.tasks for w in task.warnings]  # raised while loading
    try:
        with run_gc(), store.writer(run_id, summarize=summary_plan(suite).encode) as writer:
            for task in suite.tasks:
                task_id = task.spec.id
                stored = {case_id for t, case_id in done if t == task_id}
                already = sum(1 for case_id in case_ids(task.cases) if case_id in stored) if stored else 0
                # by id: a dataset read from its file stays so (datasets.lazy_cases)
                pending = where_id(task.cases, _absent_from(stored)) if already else task.cases
                if hooks:
                    hooks.task_started(task_id, len(task.cases), already)
                started = time.perf_counter()
                on_result = (lambda r, t=task_id: hooks.case_finished(t, r)) if hooks else None
                stats[task_id] = await run_task(
                    task_id,
                    pending,
                    task.system,
                    task.scorers,
                    writer,
                    settings,
                    on_result,
                    task.selection,
                    task.judge,
                )
                stats[task_id].seconds = round(time.perf_counter() - started, 3)
                if hooks:
                    hooks.task_finished(task_id, stats[task_id])
                if unmatched and suite.spec.limit is None and not done:
                    warnings.extend(unmatched_predictions(task))
    finally:
        if cache is not None:
            cache.close()
    if cache is not None and cache.write_error is not None:  # one warning for the run, not one per case
        warnings.append(
            f"the response cache {cache.path} could not be written ({cache.write_error}): "
            "the run went on without caching, so a re-run will call the system again"
        )
    return stats, warnings


def _absent_from(ids: set[str]) -> Callable[[str], bool]:
    return lambda case_id: case_id not in ids


def unmatched_predictions(task: BuiltTask) -> list[str]:
    """Replayed predictions that joined no case usually mean a wrong id field or id format."""
    unused = getattr(task.system, "unused_ids", None)
    ids: list[str] = unused() if callable(unused) else []
    if not ids:
        return []
    return [
        f"task {task.spec.id}: {len(ids)} predictions match no case (e.g. id {ids[0]!r}); "
        "check the predictions' id field, or set numeric_ids: true"
    ]
