"""Whole-process live run: the wall time of `clineval run` (start to exit) vs inspect_ai on the same run.

1,000 MedQA questions, concurrency 50, a scripted OpenAI-compatible server answering after 50 ms in ANOTHER
process (clineval.testing.openai_server). The ideal wall time is ceil(N / concurrency) x latency = 1.0 s;
anything above it is client overhead: interpreter start, imports, suite building, provenance hashing, the
store, scoring and reports. Target (issue 26): `clineval run` <= 1.3x the ideal.

    .venv/bin/python benchmarks/bench_live_process.py [--n 1000] [--concurrency 50] [--latency 0.05]
        [--repeats 3] [--no-inspect] [--profile FILE.prof]

The fixed cost of a small run (what a CI gate pays every time; issue 26 targets: <= 0.6 s on an existing
store, <= 0.9 s on a new one):

    .venv/bin/python benchmarks/bench_live_process.py --n 10 --repeats 5 --no-inspect

Best and median of the repeats are printed, wall and CPU, with the load average before and after: on a
shared machine the best is the figure to compare, CPU beside wall.

inspect_ai (the ``bench`` extra: ``pip install -e '.[bench]'``) runs the same questions in its own process:
``multiple_choice`` solver, ``choice`` scorer, model ``openai-api/scripted/scripted-model`` with its base URL
on the local server, ``max_connections`` = concurrency, no sandbox, logs to a temporary folder.
``--profile`` writes a cProfile of one `clineval run` process (read with ``python -m pstats``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from clineval.testing import Script, running_server_process

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MEDQA = SHARED_DATA / "medqa_usmle_4opt" / "phrases_no_exclude_test.jsonl"
PYTHON = sys.executable
TARGET_RATIO = 1.3  # issue 26 (issue 16's was 1.6)
SMALL_RUN = 10  # at most this many questions: the fixed cost of a run is measured
SMALL_TARGETS = {"clineval run": 0.6, "clineval run, new store (migrations)": 0.9}

SUITE = """name: bench-live-process
tasks:
  - id: medqa
    dataset: {{format: medqa, path: {data}}}
    system: {{type: openai, base_url: "{base_url}", model: scripted-model}}
    scorers: [mcq]
    stratify: [meta_info]
"""

INSPECT_SCRIPT = """
import json, os, sys, time
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

data, base_url, concurrency, log_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(data, encoding="utf-8") as fh:
    rows = [json.loads(line) for line in fh]
samples = [Sample(id=str(i), input=r["question"], choices=list(r["options"].values()), target=r["answer_idx"])
           for i, r in enumerate(rows)]
task = Task(dataset=MemoryDataset(samples), solver=multiple_choice(), scorer=choice())
os.environ.setdefault("SCRIPTED_API_KEY", "not-needed")
[log] = inspect_eval(task, model="openai-api/scripted/scripted-model", model_base_url=base_url,
                     max_connections=concurrency, display="none", log_dir=log_dir, score_display=False)
done = log.results.completed_samples if log.results else 0
if log.status != "success" or done != len(samples):
    sys.exit(f"inspect_ai: status {log.status}, {done} samples: {log.error}")
"""


def pin_cpus(server_pid: int) -> str:
    """Server on the last CPU, the measured processes (children of this one) on the others."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return "not pinned (1 CPU)"
    os.sched_setaffinity(server_pid, {cpus[-1]})
    os.sched_setaffinity(0, set(cpus[:-1]))
    return f"server pinned to CPU {cpus[-1]}, client to CPU(s) {','.join(map(str, cpus[:-1]))}"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one process, from spawn to exit (CPU = user + system, its children included);
    a non-zero exit is an error, not a timing."""
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:4]} exited {done.returncode}: {done.stderr[-2000:]}")
    return seconds, _children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-inspect", action="store_true")
    parser.add_argument("--profile", type=Path, help="write a cProfile of one `clineval run` here")
    args = parser.parse_args()
    load_before = os.getloadavg()
    ideal = math.ceil(args.n / args.concurrency) * args.latency
    rows: list[tuple[str, list[tuple[float, float]]]] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_server_process(Script(latency_s=args.latency)) as server,
    ):
        folder = Path(tmp)
        pinned = pin_cpus(server.pid)
        data = folder / "medqa.jsonl"
        with MEDQA.open(encoding="utf-8") as fh:
            data.write_text(
                "".join(line for _, line in zip(range(args.n), fh, strict=False)), encoding="utf-8"
            )
        suite = folder / "suite.yaml"
        suite.write_text(SUITE.format(data=json.dumps(str(data)), base_url=server.base_url), encoding="utf-8")
        inspect_py = folder / "inspect_run.py"
        inspect_py.write_text(INSPECT_SCRIPT, encoding="utf-8")

        def clineval_run(store: str, *extra: str, prefix: tuple[str, ...] = ()) -> list[str]:
            return [
                *(PYTHON, *prefix, "-m", "clineval", "run", str(suite), "--store", store, "--no-cache"),
                *("--concurrency", str(args.concurrency), *extra),
            ]

        def inspect_run(repeat: int) -> list[str]:
            logs = str(folder / f"logs{repeat}")
            return [PYTHON, str(inspect_py), str(data), server.base_url, str(args.concurrency), logs]

        kept = f"sqlite:///{folder}/kept.db"  # the usual case: the store of earlier runs (.clineval/)
        variants: dict[str, Callable[[int], list[str]]] = {
            "clineval run": lambda r: clineval_run(kept),
            "clineval run --out DIR (4 reports)": lambda r: clineval_run(kept, "--out", str(folder / "out")),
            "clineval run, new store (migrations)": lambda r: clineval_run(f"sqlite:///{folder}/new{r}.db"),
        }
        if not args.no_inspect:
            variants["inspect_ai eval (same questions)"] = inspect_run
        timed(clineval_run(kept), folder)  # creates the kept store; warms the OS file cache and bytecode
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        inspect_error = ""
        for repeat in range(args.repeats):  # interleaved, so all see the same machine noise
            for name, argv in variants.items():
                try:
                    results[name].append(timed(argv(repeat), folder))
                except RuntimeError as exc:  # inspect_ai: report why, keep the clineval numbers
                    if not name.startswith("inspect"):
                        raise
                    inspect_error = str(exc).splitlines()[-1]
        if args.profile:
            prefix = ("-m", "cProfile", "-o", str(args.profile.resolve()))
            timed(clineval_run(kept, prefix=prefix), folder)
        rows = [(name, times) for name, times in results.items() if times]
        calls = server.stats["total"]
    print(
        f"\n{args.n} MedQA questions, concurrency {args.concurrency}, "
        f"server latency {args.latency * 1000:.0f} ms in another process ({pinned}); "
        f"ideal = ceil({args.n}/{args.concurrency}) x {args.latency:g} s = {ideal:.3f} s; "
        f"median of {args.repeats} whole processes (start to exit); server saw {calls} calls\n"
    )
    header = ("process", "wall s (median)", "vs ideal", "wall s (best)", "CPU s (median)", "CPU s (best)")
    table = [
        (
            name,
            f"{statistics.median(w for w, _ in t):.3f}",
            f"{statistics.median(w for w, _ in t) / ideal:.2f}x",
            f"{min(w for w, _ in t):.3f}",
            f"{statistics.median(c for _, c in t):.3f}",
            f"{min(c for _, c in t):.3f}",
        )
        for name, t in rows
    ]
    widths = [max(len(r[i]) for r in [header, *table]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *table]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    load = ", ".join(f"{a:.2f}/{b:.2f}" for a, b in zip(load_before, os.getloadavg(), strict=True))
    print(f"\nload average (1, 5, 15 min) before/after: {load}")
    for name, t in rows:
        print(f"wall s of each run, {name}: {', '.join(f'{w:.2f}' for w, _ in t)}")
    if args.n <= SMALL_RUN:  # the fixed cost of a small run: absolute targets, best of the repeats
        for name, limit in SMALL_TARGETS.items():
            best = min(w for w, _ in results.get(name, [(math.inf, 0.0)]))
            print(f"target {name} <= {limit:g} s: {'OK' if best <= limit else 'ABOVE TARGET'} ({best:.3f} s)")
    else:
        ratio = statistics.median(w for w, _ in rows[0][1]) / ideal
        verdict = "OK" if ratio <= TARGET_RATIO else "ABOVE TARGET"
        print(f"target `clineval run` <= {TARGET_RATIO:g}x ideal: {verdict} ({ratio:.2f}x)")
    if inspect_error:
        print(f"inspect_ai could not run: {inspect_error}")
    if args.profile:
        print(f"profile of one `clineval run`: {args.profile} (python -m pstats {args.profile})")


if __name__ == "__main__":
    main()
