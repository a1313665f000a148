"""Wall time and peak RSS of ``clineval run``, ``report`` and ``compare`` at 10k, 100k (and 1M) cases.

    .venv/bin/python benchmarks/bench_scale.py [--sizes 10000,100000[,1000000]] [--cache /tmp/clineval-scale]

For each size a replayed MCQ suite (synthetic MedQA-format questions, 4 options, a predictions JSONL with
~70 % correct answers; ``benchmarks/bench_shards.make_suite``) is built once and cached under ``--cache``.
On a fresh SQLite store, measured each in a fresh wrapper process (so ``RUSAGE_CHILDREN`` sees only the
one command):

- **run**: ``clineval run SUITE --no-cache`` (twice: the second run is the other side of ``compare``;
  the first one is reported);
- **report**: ``clineval report RUN --out DIR`` (report.json/.md/.html and results.jsonl);
- **compare**: ``clineval compare RUN_A RUN_B``.

Peak RSS is ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` of the wrapper after the command exits.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_shards import make_suite

_WRAPPER = """
import json, resource, subprocess, sys, time
started = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - started
rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": proc.returncode, "wall": wall, "rss_mb": rss_kb / 1024, "stderr": proc.stderr}))
"""
_RUN_ID = re.compile(r"\brun ([0-9a-f]{32})\b")


def cached_suite(cache: Path, cases: int) -> Path:
    folder = cache / f"mcq-{cases}"
    suite = folder / "suite.yaml"
    if not suite.exists():
        folder.mkdir(parents=True, exist_ok=True)
        make_suite(folder, cases)
    return suite


def measure(args: list[str], cwd: Path) -> dict[str, object]:
    cli = [sys.executable, "-m", "clineval", "--quiet", *args]
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *cli], cwd=cwd, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    if result["rc"] != 0:
        raise SystemExit(f"clineval {' '.join(args)} failed ({result['rc']}): {result['stderr']}")
    return result


def run_id(measured: dict[str, object]) -> str:
    found = _RUN_ID.search(str(measured["stderr"]))
    if found is None:
        raise SystemExit(f"no run id in: {measured['stderr']}")
    return found.group(1)


def bench(cache: Path, cases: int) -> dict[str, dict[str, object]]:
    suite = cached_suite(cache, cases)
    folder = suite.parent
    store = f"sqlite:///{folder}/{uuid.uuid4().hex}.db"
    try:
        run = measure(["run", str(suite), "--no-cache", "--store", store], folder)
        other = measure(["run", str(suite), "--no-cache", "--store", store], folder)
        a, b = run_id(run), run_id(other)
        report = measure(["report", a, "--out", str(folder / "report"), "--store", store], folder)
        compare = measure(["compare", a, b, "--store", store], folder)
    finally:
        db = store.removeprefix("sqlite:///")
        for suffix in ("", "-wal", "-shm", ".migrate.lock"):
            Path(db + suffix).unlink(missing_ok=True)
    return {"run": run, "report": report, "compare": compare}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated case counts")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/clineval-scale"))
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, SQLite store; wall seconds / peak RSS MB")
    print(
        f"{'cases':>9} | {'run s':>7} {'run MB':>7} | {'report s':>8} {'report MB':>9} | "
        f"{'compare s':>9} {'compare MB':>10}"
    )
    for cases in (int(s) for s in args.sizes.split(",")):
        rows = bench(args.cache, cases)
        cells = " | ".join(
            f"{float(rows[name]['wall']):>{w}.2f} {float(rows[name]['rss_mb']):>{m}.0f}"  # type: ignore[arg-type]
            for name, w, m in (("run", 7, 7), ("report", 8, 9), ("compare", 9, 10))
        )
        print(f"{cases:>9,} | {cells}", flush=True)


if __name__ == "__main__":
    main()
