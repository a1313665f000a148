"""Time and memory of comparing two stored 100,000-case runs (``clineval compare BASE CANDIDATE``).

    .venv/bin/python benchmarks/bench_compare.py [--cases 100000] [--strata 10] [--repeats 3]
        [--text-chars 300] [--db PATH] [--profile] [--dump FILE]

Builds two runs of one task in a fresh SQLite store in a temp dir (or reuses ``--db`` when it already
holds them), stratified by ``condition`` (``--strata`` values, Zipf-like frequencies): an MCQ scorer
(binary: A right 55-85 % by condition, B keeps 92 % of A's right answers and fixes enough wrong ones to
move accuracy by +4 to -2 points by condition) and a clinical-accuracy scorer (continuous, all values
distinct, the worst case for the bootstrap: A ~ Beta(4, 2), B = clip(A + N(mu, 0.08)), mu from +0.02 to
-0.01 by condition), ~0.5 % failed outputs and ~1 % unscorable (NaN) clinical-accuracy cases, outputs of
``--text-chars`` characters. Results go through ``ResultStore.writer`` with their case summaries, as
``clineval run`` stores them (``SummaryPlan.encode``, the plan's fingerprint in the run's provenance
under ``stored_runs.PLAN_KEY``); the aggregates are the library's own (``api.finalize_run``).

Everything runs in fresh child processes (so each one's max RSS is its own). Timed, median of
``--repeats`` (min-max), wall and CPU seconds (``time.perf_counter`` / ``time.process_time``; on a
shared machine CPU time is the steadier one): (1) ``releases.compare_runs`` end to end; (2) its phases
one after the other as ``compare_runs`` runs them, with the garbage collector paused as it pauses it
(``analysis.compare.gc_paused``): read both runs column-wise (``stored_runs.open_run`` of each in one
``ResultStore``: the case summaries folded into ``TaskColumns``, no CaseResult loaded), restrict to the
common cases and re-aggregate both (``releases._restricted``: ``TaskColumns.take`` and
``aggregate_columns``), paired statistics (``compare_columns``: per-case pairing, changed cases,
bootstrap CIs, McNemar / permutation tests, win/tie/loss, Holm). Every child asserts that the runs are
read from their summaries: ``ResultStore.iter_results`` (the full results, read when summaries are
missing or made under another plan) raises there. Memory: tracemalloc peak of the end-to-end call and of
each phase above what was allocated when the phase began (one more child, untimed: tracemalloc slows
Python down), and max RSS (``resource.getrusage``) after imports, after each phase and after
``compare_runs``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from clineval.analysis.case_summary import SummaryPlan
from clineval.analysis.compare import compare_columns, gc_paused
from clineval.core import (
    CaseResult,
    ComponentSpec,
    RunInfo,
    RunResult,
    Score,
    SuiteSpec,
    SystemOutput,
    TaskAggregate,
    TaskSpec,
)
from clineval.core.comparison import RunComparison, TaskComparison
from clineval.core.helpers.columns import TaskColumns
from clineval.core.output import Usage
from clineval.releases import gate as releases
from clineval.runs import run as api
from clineval.runs.stored import PLAN_KEY, columns_of_run, open_run, scorers_for
from clineval.store import ResultStore

TASK = "medqa_cds"
CONDITIONS = [
    "pneumonia",
    "chf",
    "copd",
    "pe",
    "mi",
    "sepsis",
    "dka",
    "stroke",
    "afib",
    "uti",
    "asthma",
    "gi_bleed",
    "cellulitis",
    "aki",
    "hyperkalemia",
]
FILLER = (
    "The presentation is most consistent with the leading diagnosis given the history, examination and "
    "the initial laboratory results; the alternatives are less likely because the timeline, the vital "
    "signs and the imaging do not fit them. Management follows the current guideline recommendations. "
)


def suite(cases: int, strata: int) -> SuiteSpec:
    return SuiteSpec(
        name="bench-compare",
        tasks=[
            TaskSpec(
                id=TASK,
                dataset=ComponentSpec(type="jsonl", args={"path": f"bench-{cases}-{strata}.jsonl"}),
                system=ComponentSpec(type="predictions", args={"path": "predictions.jsonl"}),
                scorers=[ComponentSpec(type="mcq"), ComponentSpec(type="clinical_accuracy")],
                stratify=["condition"],
            )
        ],
    )


def run_ids(cases: int, strata: int) -> tuple[str, str]:
    # v3: stored with case summaries (a --db built by an older version holds v2 runs without them)
    return f"bench-v3-base-{cases}-{strata}", f"bench-v3-cand-{cases}-{strata}"


def _results(
    conditions: list[str],
    mcq: np.ndarray,
    ca: np.ndarray,
    failed: np.ndarray,
    golds: np.ndarray,
    text_chars: int,
    seed: int,
) -> list[CaseResult]:
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, len(FILLER), size=len(conditions))
    wrong = rng.integers(1, 4, size=len(conditions))
    filler = FILLER * (2 + text_chars // len(FILLER))
    out: list[CaseResult] = []
    for i, condition in enumerate(conditions):
        gold = "ABCD"[golds[i]]
        case_id = f"case-{i:06d}"
        meta = {"condition": condition, "source": "bench", "difficulty": ("easy", "medium", "hard")[i % 3]}
        if failed[i]:
            output = SystemOutput.failure("timeout", "no answer within 60 s", attempts=3, latency_s=60.0)
            scores = {
                "mcq": Score(value=0.0, label="failed", explanation="no answer within 60 s"),
                "clinical_accuracy": Score(value=0.0, label="failed", breakdown={"error": "timeout"}),
            }
        else:
            letter = gold if mcq[i] == 1.0 else "ABCD"[(golds[i] + wrong[i]) % 4]
            text = f"Answer: {letter}. " + filler[starts[i] : starts[i] + text_chars]
            output = SystemOutput(
                text=text,
                latency_s=round(float(0.5 + (i % 97) / 10.0), 3),
                usage=Usage(prompt_tokens=600 + i % 300, completion_tokens=80 + i % 120),
            )
            mcq_label = "correct" if mcq[i] == 1.0 else "incorrect"
            breakdown = {"extracted": letter, "method": "answer_prefix", "span": [8, 9], "gold": gold}
            ca_value = float(ca[i])
            scores = {
                "mcq": Score(value=float(mcq[i]), label=mcq_label, breakdown=breakdown),
                "clinical_accuracy": (
                    Score(value=math.nan, label="no_reference", explanation="the case has no reference text")
                    if math.isnan(ca_value)
                    else Score(value=ca_value, label="entities", breakdown={"method": "entities"})
                ),
            }
        out.append(
            CaseResult(
                task_id=TASK, case_id=case_id, output=output, scores=scores, metadata=meta, reference=gold
            )
        )
    return out


def build(url: str, cases: int, strata: int, text_chars: int, seed: int = 0) -> tuple[str, str]:
    """Two finished runs of ``cases`` cases each in the store at ``url``; their run ids."""
    rng = np.random.default_rng(seed)
    names = [
        CONDITIONS[k % len(CONDITIONS)] + (f"_{k // len(CONDITIONS)}" if k >= len(CONDITIONS) else "")
        for k in range(strata)
    ]
    weights = 1.0 / np.arange(1, strata + 1) ** 0.7  # Zipf-like: the commonest ~4x the rarest of 10
    idx = rng.choice(strata, size=cases, p=weights / weights.sum())
    conditions = [names[k] for k in idx]
    golds = rng.integers(0, 4, size=cases)
    share = idx / max(1, strata - 1)  # 0 for the commonest condition, 1 for the rarest
    p_right = 0.55 + 0.3 * share
    delta = 0.04 - 0.06 * share  # B - A accuracy: +4 points down to -2 across conditions
    fix = (delta + 0.08 * p_right) / (1.0 - p_right)  # B keeps 92 % of A's right answers
    mcq_a = (rng.random(cases) < p_right).astype(np.float64)
    keep, fixed = rng.random(cases) < 0.92, rng.random(cases) < fix
    mcq_b = np.where(mcq_a == 1.0, keep, fixed).astype(np.float64)
    ca_a = rng.beta(4.0, 2.0, size=cases)
    ca_b = np.clip(ca_a + rng.normal(0.02 - 0.03 * share, 0.08, size=cases), 0.0, 1.0)
    no_ref = rng.random(cases) < 0.01  # the same cases lack a reference in both runs
    ca_a[no_ref] = ca_b[no_ref] = math.nan
    failed_a, failed_b = rng.random(cases) < 0.005, rng.random(cases) < 0.005
    spec = suite(cases, strata)
    plan = SummaryPlan.for_suite(spec, scorers_for(spec))  # what clineval run stores beside each result
    store = ResultStore(url)
    try:
        for run_id, mcq, ca, failed, s in zip(
            run_ids(cases, strata), (mcq_a, mcq_b), (ca_a, ca_b), (failed_a, failed_b), (1, 2), strict=True
        ):
            store.create_run(
                RunInfo(
                    run_id=run_id,
                    suite=spec,
                    status="running",
                    created_at=datetime.now(UTC),
                    provenance={
                        "task_sizes": {TASK: cases},
                        "benchmark": "bench_compare",
                        PLAN_KEY: plan.fingerprint,
                    },
                )
            )
            with store.writer(run_id, summarize=plan.encode) as writer:
                for result in _results(conditions, mcq, ca, failed, golds, text_chars, seed + s):
                    writer.put(result)
            api.finalize_run(store, run_id)
    finally:
        store.close()
    return run_ids(cases, strata)


# -- the measured work (child processes) -----------------------------------------------------------------
def _no_full_results(self: ResultStore, run_id: str, batch: int = 1000) -> Iterator[CaseResult]:
    raise AssertionError(
        f"run {run_id}: compare read the full results (ResultStore.iter_results), not the case summaries: "
        "the runs must be stored with summaries under the current SummaryPlan"
    )


def _forbid_full_results() -> None:
    """Make ``read_totals``' slow path (summaries missing or made under another plan) fail the benchmark."""
    ResultStore.iter_results = _no_full_results  # type: ignore[method-assign]


def _read(url: str, a: str, b: str) -> tuple[RunResult, RunResult]:
    store = ResultStore(url, must_exist=True)
    try:
        ra, rb = (open_run(store, store.get_run(r).run_id) for r in (a, b))
    finally:
        store.close()
    assert ra.columns is not None and rb.columns is not None
    return ra, rb


Restricted = tuple[TaskAggregate, TaskColumns, TaskAggregate, TaskColumns]


def _aggregate(ra: RunResult, rb: RunResult) -> Restricted:
    rows_a, rows_b, _, _ = releases.common_rows(columns_of_run(ra)[TASK], columns_of_run(rb)[TASK])
    agg_a, cols_a = releases._restricted(ra, TASK, rows_a)  # the phase compare_runs runs
    agg_b, cols_b = releases._restricted(rb, TASK, rows_b)
    return agg_a, cols_a, agg_b, cols_b


def _paired(restricted: Restricted) -> TaskComparison:
    agg_a, cols_a, agg_b, cols_b = restricted
    return compare_columns(TASK, agg_a, agg_b, cols_a, cols_b)


def _max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _timed(found: dict[str, float], key: str, fn: Callable[[], Any]) -> Any:
    """Run ``fn``; record its wall and CPU seconds and the max RSS so far under ``key``."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    found[f"{key}_s"] = time.perf_counter() - wall
    found[f"{key}_cpu_s"] = time.process_time() - cpu
    found[f"{key}_rss_mib"] = _max_rss_mib()
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def dump(comparison: RunComparison, path: Path) -> None:
    """The comparison's overall deltas, McNemar counts and paired tests as JSON (to diff two versions)."""
    tasks = [
        {
            "task": t.task_id,
            "n": t.n,
            "n_changes": len(t.changes),
            "overall": [asdict(d) for d in t.overall],
            "tests": [asdict(m) for m in t.tests],
            "paired": [asdict(p) for p in t.paired],
        }
        for t in comparison.tasks
    ]
    path.write_text(json.dumps(_jsonable(tasks), indent=1) + "\n")


def worker(mode: str, url: str, a: str, b: str, extra: str) -> dict[str, float]:
    """One job in this (fresh) process: ``total``, ``phases``, ``memory``, ``profile`` or ``dump``."""
    found: dict[str, float] = {"imports_rss_mib": _max_rss_mib()}
    _forbid_full_results()
    if mode == "total":
        _timed(found, "total", lambda: releases.compare_runs(url, a, b))
    elif mode == "phases":
        with gc_paused():
            ra, rb = _timed(found, "read", lambda: _read(url, a, b))
            restricted = _timed(found, "aggregate", lambda: _aggregate(ra, rb))
            _timed(found, "paired", lambda: _paired(restricted))
    elif mode == "memory":
        tracemalloc.start()
        releases.compare_runs(url, a, b)
        found["total_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
        held: list[Any] = []
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("read", lambda: _read(url, a, b)),
            ("aggregate", lambda: _aggregate(*held[0])),
            ("paired", lambda: _paired(held[1])),
        ]
        for name, step in steps:
            with gc_paused():
                before = tracemalloc.get_traced_memory()[0]
                tracemalloc.reset_peak()
                held.append(step())
                found[f"{name}_peak_mib"] = (tracemalloc.get_traced_memory()[1] - before) / 2**20
        tracemalloc.stop()
    elif mode == "profile":
        profiler = cProfile.Profile()
        profiler.runcall(releases.compare_runs, url, a, b)
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
    elif mode == "dump":
        dump(releases.compare_runs(url, a, b), Path(extra))
    else:
        raise ValueError(f"unknown mode {mode!r}")
    return found


def _child(mode: str, url: str, a: str, b: str, extra: str = "") -> dict[str, float]:
    """Run ``worker(mode, ...)`` in a fresh interpreter; its stderr (a profile, errors) passes through."""
    cmd = [sys.executable, __file__, "--worker", mode, "--url", url, "--run-a", a, "--run-b", b]
    done = subprocess.run([*cmd, "--extra", extra], stdout=subprocess.PIPE, text=True, check=True)
    found: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _build_child(url: str, cases: int, strata: int, text_chars: int) -> None:
    cmd = [sys.executable, __file__, "--worker", "build", "--url", url, "--cases", str(cases)]
    subprocess.run([*cmd, "--strata", str(strata), "--text-chars", str(text_chars)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--strata", type=int, default=10, help="values of the stratification key")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--text-chars", type=int, default=300, help="length of each output text")
    parser.add_argument("--db", type=Path, help="SQLite file to build once and reuse (default: a temp dir)")
    parser.add_argument("--profile", action="store_true", help="cProfile compare_runs, print the top 30")
    parser.add_argument("--dump", type=Path, help="write the comparison's tests as JSON to this file")
    modes = ("build", "total", "phases", "memory", "profile", "dump")
    parser.add_argument("--worker", choices=modes, help=argparse.SUPPRESS)
    for hidden in ("--url", "--run-a", "--run-b", "--extra"):
        parser.add_argument(hidden, default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "build":
        start = time.perf_counter()
        build(args.url, args.cases, args.strata, args.text_chars)
        print(f"built 2 runs x {args.cases:,} cases in {time.perf_counter() - start:.1f} s")
        return
    if args.worker:
        print(json.dumps(worker(args.worker, args.url, args.run_a, args.run_b, args.extra)))
        return
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        db = args.db or Path(tmp) / "store.db"
        url = f"sqlite:///{db}"
        a, b = run_ids(args.cases, args.strata)
        store = ResultStore(url)
        try:
            have = {r.run_id for r in store.list_runs(1000)} >= {a, b}
        finally:
            store.close()
        if not have:
            _build_child(url, args.cases, args.strata, args.text_chars)
        print(f"store: {db} ({db.stat().st_size / 2**20:.0f} MiB)")
        if args.profile:
            _child("profile", url, a, b)
        if args.dump:
            _child("dump", url, a, b, str(args.dump))
        totals = [_child("total", url, a, b) for _ in range(args.repeats)]
        phases = [_child("phases", url, a, b) for _ in range(args.repeats)]
        memory = _child("memory", url, a, b)

    def med(rows: list[dict[str, float]], key: str) -> str:
        values = sorted(r[key] for r in rows)
        if key.endswith("_rss_mib"):
            return f"{statistics.median(values):.0f}"
        text = f"{statistics.median(values):.2f}"
        return f"{text} ({values[0]:.2f}-{values[-1]:.2f})" if len(values) > 1 else text

    print(f"\ntwo runs x {args.cases:,} cases, {args.strata} strata; median of {args.repeats} (min-max)\n")
    print("| phase | wall s | CPU s | tracemalloc peak MiB | max RSS MiB (so far) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| (imports) | | | | {med(phases, 'imports_rss_mib')} |")
    for label, key in (
        ("read both runs column-wise (open_run)", "read"),
        ("restrict + re-aggregate both (_restricted)", "aggregate"),
        ("paired statistics (compare_columns)", "paired"),
    ):
        print(
            f"| {label} | {med(phases, key + '_s')} | {med(phases, key + '_cpu_s')} "
            f"| {memory[key + '_peak_mib']:.0f} | {med(phases, key + '_rss_mib')} |"
        )
    print(
        f"| **compare_runs end to end** | {med(totals, 'total_s')} | {med(totals, 'total_cpu_s')} "
        f"| {memory['total_peak_mib']:.0f} | {med(totals, 'total_rss_mib')} |"
    )


if __name__ == "__main__":
    main()
