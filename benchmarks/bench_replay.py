"""Replaying published chain-of-thought outputs at scale: MedMCQA dev cycled to N cases (issue 26).

    .venv/bin/python benchmarks/bench_replay.py [--sizes 30000,300000] [--workers 1[,2]] [--repeat 1]
        [--cache /tmp/clineval-replay] [--profile OUT.prof]

The 4,183 MedMCQA dev questions (``../shared/data/medmcqa_dev/dev.json``) and the published GPT-4 CoT
answers to them (MIRAGE, ``medmcqa__cot__gpt-4-32k.jsonl``, ~640 bytes a line) are cycled to N cases:
copy ``k`` of question ``q`` has the id ``<q's id>-<k>`` in both files, so every case is distinct and
its answer is the published one. The suite is the MIRAGE task (``format: medmcqa``, ``predictions`` with
``output_field: raw_output``, ``scorers: [mcq]``, ``stratify: [subject_name]``). The files are built once
and cached under ``--cache``.

Each measurement is ``clineval --quiet run SUITE --no-cache --store sqlite:///<fresh file>`` (plus
``--workers W`` when W is not 1) in a wrapper process: wall time and peak RSS
(``getrusage(RUSAGE_CHILDREN).ru_maxrss``: the largest single process, not the sum over workers) of the
one command. ``--repeat R`` runs each row R times and prints the best wall time; the load average
(``os.getloadavg``) is printed beside each row, since the machine is shared.

``--profile OUT.prof`` instead runs the first size once in this process under cProfile (no wrapper; the
store writer thread is not profiled, only waited for) and prints the 30 largest cumulative entries.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
DEV = DATA / "medmcqa_dev" / "dev.json"
ANSWERS = DATA / "mirage_medrag_predictions" / "medmcqa__cot__gpt-4-32k.jsonl"

_WRAPPER = """
import json, resource, subprocess, sys, time
started = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - started
rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": proc.returncode, "wall": wall, "rss_mb": rss_kb / 1024, "stderr": proc.stderr}))
"""

SUITE = """name: medmcqa-replay
tasks:
  - id: medmcqa-cot-gpt-4-32k
    dataset: {format: medmcqa, path: dev.jsonl}
    system: {type: predictions, path: answers.jsonl, output_field: raw_output}
    scorers: [mcq]
    stratify: [subject_name]
"""


def cycled(cache: Path, cases: int) -> Path:
    """The suite of ``cases`` cycled cases (built once under ``cache``)."""
    folder = cache / f"medmcqa-{cases}"
    suite = folder / "suite.yaml"
    if suite.exists():
        return suite
    folder.mkdir(parents=True, exist_ok=True)
    questions = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]
    answers = {}
    for line in ANSWERS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            answers[row["id"]] = row
    asked = [q for q in questions if q["id"] in answers]
    with (folder / "dev.jsonl").open("w") as qf, (folder / "answers.jsonl").open("w") as af:
        for i in range(cases):
            copy, question = divmod(i, len(asked))
            row = dict(asked[question])
            answer = dict(answers[row["id"]])
            row["id"] = answer["id"] = f"{row['id']}-{copy}"
            qf.write(json.dumps(row) + "\n")
            af.write(json.dumps(answer) + "\n")
    suite.write_text(SUITE)
    return suite


def measure(suite: Path, workers: str) -> dict[str, object]:
    folder = suite.parent
    store = folder / f"{uuid.uuid4().hex}.db"
    args = ["run", str(suite), "--no-cache", "--store", f"sqlite:///{store}"]
    if workers != "1":
        args += ["--workers", workers]
    cli = [sys.executable, "-m", "clineval", "--quiet", *args]
    try:
        done = subprocess.run(
            [sys.executable, "-c", _WRAPPER, *cli], cwd=folder, capture_output=True, text=True, check=True
        )
    finally:
        for leftover in folder.glob(f"{store.name}*"):
            leftover.unlink()
    result: dict[str, object] = json.loads(done.stdout)
    if result["rc"] not in (0, 1):  # 1: a degraded or failing run still measured
        raise SystemExit(f"clineval {' '.join(args)} failed ({result['rc']}): {result['stderr']}")
    return result


def profile(suite: Path, out: Path) -> None:
    import cProfile
    import pstats

    from clineval.runs import run as api

    store = suite.parent / f"{uuid.uuid4().hex}.db"
    request = api.RunRequest(suite_path=suite, store_url=f"sqlite:///{store}", cache_path=None)
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    api.run_suite(request)
    profiler.disable()
    print(f"{time.perf_counter() - started:.2f} s under cProfile, load {os.getloadavg()[0]:.2f}")
    profiler.dump_stats(str(out))
    pstats.Stats(str(out)).sort_stats("cumulative").print_stats(30)
    for leftover in suite.parent.glob(f"{store.name}*"):
        leftover.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="30000,300000")
    parser.add_argument("--workers", default="1")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/clineval-replay"))
    parser.add_argument("--profile", type=Path, default=None)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.profile is not None:
        profile(cycled(args.cache, sizes[0]), args.profile)
        return
    rows = []
    for cases in sizes:
        suite = cycled(args.cache, cases)
        for workers in args.workers.split(","):
            best: dict[str, object] | None = None
            for _ in range(args.repeat):
                load = os.getloadavg()[0]
                got = measure(suite, workers)
                got["load"] = load
                print(
                    json.dumps({k: v for k, v in got.items() if k != "stderr"}), file=sys.stderr, flush=True
                )
                if best is None or float(str(got["wall"])) < float(str(best["wall"])):
                    best = got
            assert best is not None
            rows.append((cases, workers, best))
    print("\n| cases | workers | run s | µs/case | peak RSS MB | load (1 min) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for cases, workers, row in rows:
        wall = float(str(row["wall"]))
        print(
            f"| {cases:,} | {workers} | {wall:.2f} | {wall / cases * 1e6:.0f} "
            f"| {float(str(row['rss_mb'])):.0f} | {float(str(row['load'])):.2f} |"
        )


if __name__ == "__main__":
    main()
