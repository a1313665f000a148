"""Live-system overhead: 1,000 MedQA cases through the ``openai`` system at concurrency 50 vs inspect_ai.

The scripted server runs as a subprocess with a fixed 50 ms latency, so the ideal wall time is
ceil(N / concurrency) x latency (1.0 s for the defaults) and anything above it is client overhead.

    .venv/bin/python benchmarks/bench_live.py [--n 1000] [--concurrency 50] [--latency 0.05] [--no-inspect]

``run_clineval`` measures the whole runner path of `clineval run`: system call, MCQ scoring, store commit.

``--client-cpu`` measures the client's CPU per call instead (issue 16 target: <= 0.2 ms), by default over
100,000 calls at concurrency 500 (MedQA questions cycled, distinct case ids): this process's user + system
CPU time (``getrusage(RUSAGE_SELF)``, the store writer thread included; the server is another process and
is not counted) over the number of calls, with the server's own CPU beside it to show whether it kept up.

    .venv/bin/python benchmarks/bench_live.py --client-cpu [--n 100000] [--concurrency 500] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import aiohttp

from clineval.analysis.case_summary import SummaryPlan
from clineval.core import Case, CaseInput, Reference, RunInfo, SuiteSpec, SystemOutput
from clineval.mcq.scorer import MCQScorer
from clineval.metrics.aggregate import breakdown_plan
from clineval.runner.cache import ResponseCache
from clineval.runner.engine import RunSettings, TaskStats, run_gc, run_task
from clineval.runner.policy import CallPolicy
from clineval.store import ResultStore
from clineval.systems import build_system
from clineval.testing import Script, running_server_process

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MEDQA = SHARED_DATA / "medqa_usmle_4opt" / "phrases_no_exclude_test.jsonl"


def load_cases(n: int, path: Path = MEDQA) -> list[Case]:
    """``n`` MedQA-USMLE 4-option test questions as cases, id = the 0-based index. Beyond the file's 1,273
    questions they cycle (case ``i`` asks question ``i % 1273``), so ``n`` is not capped; the cycled cases
    share their (frozen) input and reference objects."""
    rows: list[tuple[CaseInput, Reference, str]] = []
    with path.open(encoding="utf-8") as fh:
        for _, line in zip(range(n), fh, strict=False):
            row = json.loads(line)
            case_input = CaseInput(question=row["question"], options=row["options"])
            reference = Reference(answer=row["answer_idx"], answer_text=row["answer"])
            rows.append((case_input, reference, row["meta_info"]))
    cases = []
    for index in range(n):
        case_input, reference, meta_info = rows[index % len(rows)]
        cases.append(
            Case(id=str(index), input=case_input, metadata={"meta_info": meta_info}, reference=reference)
        )
    return cases


async def _run_engine(
    cases: list[Case], base_url: str, concurrency: int, store: ResultStore, run_id: str
) -> TaskStats:
    system = build_system("openai", {"base_url": base_url, "model": "scripted-model"}, Path("."))
    settings = RunSettings(concurrency=concurrency, policy=CallPolicy(), cache=None)
    scorers = [MCQScorer()]
    # as `clineval run` does (api.execute): each result's case summary stored beside it, the GC tuned
    plan = SummaryPlan({"medqa": breakdown_plan(scorers)}, {"medqa": ("meta_info", "split")})
    with run_gc(), store.writer(run_id, summarize=plan.encode) as writer:
        return await run_task("medqa", cases, system, scorers, writer, settings)


def run_clineval(cases: list[Case], base_url: str, concurrency: int) -> float:
    """Wall seconds for all ``cases`` through the full runner: openai system, retries policy, MCQ scoring
    and every result committed to a SQLite store (no response cache), i.e. what `clineval run` does."""
    with tempfile.TemporaryDirectory() as folder:
        store = ResultStore(f"sqlite:///{folder}/bench.db")
        run_id = uuid.uuid4().hex
        spec = SuiteSpec(name="bench", tasks=[])
        store.create_run(RunInfo(run_id=run_id, suite=spec, status="running", created_at=datetime.now(UTC)))
        started = time.perf_counter()
        stats = asyncio.run(_run_engine(cases, base_url, concurrency, store, run_id))
        wall = time.perf_counter() - started
        stored = len(store.finished_keys(run_id))
        store.close()
    if stats.done != len(cases) or stats.failed or stored != len(cases):
        raise RuntimeError(f"{stats.failed} failed calls, {stored} stored of {len(cases)}")
    return wall


def run_bare_aiohttp(cases: list[Case], base_url: str, concurrency: int) -> float:
    """Reference floor: the same requests with a bare aiohttp loop (no prompt template, policy or models)."""

    async def go() -> None:
        pending = iter(cases)
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def worker() -> None:
                for case in pending:
                    body = {
                        "model": "scripted-model",
                        "temperature": 0.0,
                        "messages": [{"role": "user", "content": case.input.question}],
                    }
                    async with session.post(f"{base_url}/chat/completions", json=body) as resp:
                        await resp.json()

            await asyncio.gather(*(worker() for _ in range(concurrency)))

    started = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - started


def run_inspect(cases: list[Case], base_url: str, concurrency: int) -> float:
    """Wall seconds for the same cases through inspect_ai (multiple_choice solver, choice scorer)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import choice
    from inspect_ai.solver import multiple_choice

    samples = [
        Sample(
            id=c.id,
            input=c.input.question or "",
            choices=list(c.input.options.values()),
            target=c.reference.answer or "A",
        )
        for c in cases
    ]
    task = Task(dataset=MemoryDataset(samples), solver=multiple_choice(), scorer=choice())
    os.environ.setdefault("SCRIPTED_API_KEY", "not-needed")
    with tempfile.TemporaryDirectory() as log_dir:
        started = time.perf_counter()
        [log] = inspect_eval(
            task,
            model="openai-api/scripted/scripted-model",
            model_base_url=base_url,
            max_connections=concurrency,
            display="none",
            log_dir=log_dir,
            score_display=False,
        )
        wall = time.perf_counter() - started
        completed = log.results.completed_samples if log.results else 0  # read before log_dir goes away
    if log.status != "success" or completed != len(cases):
        raise RuntimeError(f"inspect_ai run status {log.status}, {completed} samples: {log.error}")
    return wall


def pin_cpus(server_pid: int) -> str:
    """Server on the last CPU, this client on the others, so neither steals the other's core mid-run
    (with 2 CPUs: one each). Returns what was done, for the table's caption."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return "not pinned (1 CPU)"
    os.sched_setaffinity(server_pid, {cpus[-1]})
    os.sched_setaffinity(0, set(cpus[:-1]))
    return f"server pinned to CPU {cpus[-1]}, client to CPU(s) {','.join(map(str, cpus[:-1]))}"


def measure(fn: Callable[[], float]) -> tuple[float, float]:
    """(wall seconds as returned by fn, CPU seconds of this process while it ran)."""
    cpu = time.process_time()
    wall = fn()
    return wall, time.process_time() - cpu


def _own_cpu() -> float:
    """User + system CPU seconds of this process, every thread included (the store writer's too)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _process_cpu(pid: int) -> float:
    """User + system CPU seconds of another process so far (Linux /proc; NaN where unreadable)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def client_cpu(
    name: str, run: Callable[[], float], calls: int, server_pid: int
) -> tuple[str, float, float, float, float]:
    """(name, wall s, client CPU s, server CPU s, calls) of one run of ``run``."""
    own, server = _own_cpu(), _process_cpu(server_pid)
    wall = run()
    return name, wall, _own_cpu() - own, _process_cpu(server_pid) - server, calls


def main_client_cpu(args: argparse.Namespace) -> None:
    """The ``--client-cpu`` table: client CPU ms per call of the full runner path, and of a bare aiohttp loop
    (the floor of the HTTP client alone), with the server's CPU to show whether it was the bottleneck."""
    n = args.n if args.n is not None else 100_000
    concurrency = args.concurrency if args.concurrency is not None else 500
    repeats = args.repeats if args.repeats is not None else 1
    cases = load_cases(n)
    ideal = math.ceil(n / concurrency) * args.latency
    runs: list[tuple[str, float, float, float, float]] = []
    with running_server_process(Script(latency_s=args.latency)) as server:
        pinned = pin_cpus(server.pid)
        run_clineval(cases[: concurrency * 2], server.base_url, concurrency)  # warm up imports, connections
        server.reset()
        for _ in range(repeats):
            runs.append(
                client_cpu(
                    "clineval (runner path)",
                    lambda: run_clineval(cases, server.base_url, concurrency),
                    n,
                    server.pid,
                )
            )
            if not args.no_bare:
                runs.append(
                    client_cpu(
                        "bare aiohttp loop (floor)",
                        lambda: run_bare_aiohttp(cases, server.base_url, concurrency),
                        n,
                        server.pid,
                    )
                )
        expected = n * repeats * (1 if args.no_bare else 2)
        if server.stats["total"] != expected:
            raise RuntimeError(f"server saw {server.stats['total']} calls, expected {expected}")
    print(
        f"\n{n:,} calls (MedQA questions cycled), concurrency {concurrency}, server latency "
        f"{args.latency * 1000:g} ms in another process ({pinned}); ideal wall = ceil({n}/{concurrency}) x "
        f"{args.latency:g} s = {ideal:.1f} s; client CPU = getrusage(RUSAGE_SELF) user + system of this "
        f"process (store writer thread included), server CPU from /proc (server busy = server CPU / wall)\n"
    )
    header = (
        "client",
        "calls",
        "concurrency",
        "latency ms",
        "wall s",
        "calls/s",
        "client CPU s",
        "client CPU ms/call",
        "server CPU s",
        "server busy",
    )
    table = [
        (
            name,
            f"{calls:,.0f}",
            str(concurrency),
            f"{args.latency * 1000:g}",
            f"{wall:.1f}",
            f"{calls / wall:,.0f}",
            f"{cpu:.1f}",
            f"{cpu / calls * 1000:.3f}",
            f"{server_cpu:.1f}",
            f"{server_cpu / wall:.0%}",
        )
        for name, wall, cpu, server_cpu, calls in runs
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    for row in table:
        print("| " + " | ".join(row) + " |")
    ours = [
        (cpu / calls, server_cpu / wall)
        for name, wall, cpu, server_cpu, calls in runs
        if name.startswith("clineval")
    ]
    per_call_ms = statistics.median(c for c, _ in ours) * 1000
    busy = statistics.median(b for _, b in ours)
    verdict = "OK" if per_call_ms <= 0.2 else "ABOVE TARGET"
    print(f"\ntarget client CPU <= 0.2 ms per call: {verdict} ({per_call_ms:.3f} ms)")
    if busy >= 0.9:
        print(f"the server was busy {busy:.0%} of the wall time: it, not the client, bounds calls/s")


def bench_cache(n: int = 2000) -> tuple[float, float]:
    """Microseconds per ResponseCache.put (committed) and .get, for a typical chat output."""
    output = SystemOutput(
        text='{"step_by_step_thinking": "' + "x" * 800 + '", "answer_choice": "B"}', latency_s=0.8, attempts=1
    )
    with tempfile.TemporaryDirectory() as folder, ResponseCache(Path(folder) / "cache.sqlite") as cache:
        started = time.perf_counter()
        for i in range(n):
            cache.put(f"{i:064x}", output)
        put_us = (time.perf_counter() - started) / n * 1e6
        started = time.perf_counter()
        for i in range(n):
            cache.get(f"{i:064x}")
        get_us = (time.perf_counter() - started) / n * 1e6
    return put_us, get_us


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, help="calls (default 1000; 100000 with --client-cpu)")
    parser.add_argument("--concurrency", type=int, help="default 50; 500 with --client-cpu")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, help="default 5; 1 with --client-cpu")
    parser.add_argument("--no-inspect", action="store_true")
    parser.add_argument("--client-cpu", action="store_true", help="client CPU per call (see above)")
    parser.add_argument("--no-bare", action="store_true", help="--client-cpu without the bare aiohttp row")
    args = parser.parse_args()
    if args.client_cpu:
        main_client_cpu(args)
        return
    args.n = 1000 if args.n is None else args.n
    args.concurrency = 50 if args.concurrency is None else args.concurrency
    args.repeats = 5 if args.repeats is None else args.repeats
    cases = load_cases(args.n)
    ideal = math.ceil(args.n / args.concurrency) * args.latency
    rows: list[tuple[str, str, str, str, str, str]] = []
    with running_server_process(Script(latency_s=args.latency)) as server:
        pinned = pin_cpus(server.pid)
        run_clineval(cases[: args.concurrency * 2], server.base_url, args.concurrency)  # warm up imports/JIT
        server.reset()
        runs, bare = [], []
        for _ in range(args.repeats):  # interleaved, so both see the same machine noise
            runs.append(measure(lambda: run_clineval(cases, server.base_url, args.concurrency)))
            bare.append(measure(lambda: run_bare_aiohttp(cases, server.base_url, args.concurrency)))
        if server.stats["total"] != 2 * args.n * args.repeats:
            expected = 2 * args.n * args.repeats
            raise RuntimeError(f"server saw {server.stats['total']} calls, expected {expected}")
        tracemalloc.start()
        run_clineval(cases, server.base_url, args.concurrency)
        peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        rows.append(
            (
                "clineval (aiohttp)",
                f"{wall:.3f}",
                f"{wall / ideal:.2f}x",
                f"{args.n / wall:.0f}",
                f"{cpu / args.n * 1e6:.0f}",
                f"{peak_mb:.1f} / {rss_mb:.0f}",
            )
        )
        print(
            f"clineval runs (wall s): {', '.join(f'{w:.3f}' for w, _ in runs)}; "
            f"bare aiohttp: {', '.join(f'{w:.3f}' for w, _ in bare)}",
            file=sys.stderr,
        )
        bare_wall, bare_cpu = statistics.median(w for w, _ in bare), statistics.median(c for _, c in bare)
        rows.append(
            (
                "bare aiohttp loop (floor)",
                f"{bare_wall:.3f}",
                f"{bare_wall / ideal:.2f}x",
                f"{args.n / bare_wall:.0f}",
                f"{bare_cpu / args.n * 1e6:.0f}",
                "-",
            )
        )
        inspect_note = "skipped (--no-inspect)"
        if not args.no_inspect:
            try:
                inspect_wall, inspect_cpu = measure(
                    lambda: run_inspect(cases, server.base_url, args.concurrency)
                )
                rows.append(
                    (
                        "inspect_ai",
                        f"{inspect_wall:.3f}",
                        f"{inspect_wall / ideal:.2f}x",
                        f"{args.n / inspect_wall:.0f}",
                        f"{inspect_cpu / args.n * 1e6:.0f}",
                        "-",
                    )
                )
                inspect_note = f"inspect_ai / clineval wall time = {inspect_wall / wall:.1f}x"
            except Exception as exc:  # report why, keep the clineval numbers
                inspect_note = f"inspect_ai could not run: {type(exc).__name__}: {exc}"
    put_us, get_us = bench_cache()
    print(
        f"\n{args.n} MedQA cases, concurrency {args.concurrency}, "
        f"server latency {args.latency * 1000:.0f} ms (subprocess; {pinned}); "
        f"ideal = ceil({args.n}/{args.concurrency}) x {args.latency:g} s = {ideal:.3f} s; "
        f"median of {args.repeats}\n"
    )
    header = ("system", "wall s", "vs ideal", "calls/s", "CPU us/call", "peak MB (tracemalloc / maxrss)")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    target = "OK" if wall / ideal <= 1.15 else "ABOVE TARGET"
    print(
        f"\ntarget clineval <= 1.15x ideal: {target} ({wall / bare_wall:.2f}x the bare aiohttp floor "
        f"on this machine, {os.cpu_count()} CPUs shared with the server); {inspect_note}"
    )
    print(f"ResponseCache: put {put_us:.0f} us (committed, WAL, synchronous=NORMAL), get {get_us:.0f} us")


if __name__ == "__main__":
    main()
