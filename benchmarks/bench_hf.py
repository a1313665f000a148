"""Overhead of `dataset: {hf: ...}` vs a local file on MedMCQA dev (issue 15 Measures): load time and memory.

Builds a local repository in openlifescienceai/medmcqa's schema (split `validation`, `cop` 0-based, parquet)
from ../shared/data/medmcqa_dev/dev.json, then loads the 4183 cases each way in a fresh process (median of
--repeat runs). `hf cold` starts from an empty datasets cache (parquet -> arrow cache), `hf warm` reuses it.
Columns: import s (clineval loader, plus `datasets` on the HF path), load s (the loader call), peak RSS MiB
(the process, after the loader) and the Python-heap peak of the load (tracemalloc; arrow buffers not counted).

    .venv/bin/python benchmarks/bench_hf.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "medmcqa_dev" / "dev.json"


def _one(mode: str, repo: str, local: str) -> dict[str, float]:
    started = time.perf_counter()
    from clineval.datasets.medmcqa import load_medmcqa

    if mode != "file":
        import datasets  # type: ignore[import-untyped,unused-ignore]  # noqa: F401  (its import is part of the cost)
    imported = time.perf_counter()
    options = {"path": local} if mode == "file" else {"hf": repo, "revision": "local", "split": "validation"}
    tracemalloc.start()
    began = time.perf_counter()
    loaded = load_medmcqa(options, Path.cwd())
    load_s = time.perf_counter() - began
    heap = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "cases": len(loaded.cases),
        "import_s": imported - started,
        "load_s": load_s,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "heap_mib": heap / 2**20,
    }


def _build_repo(root: Path) -> Path:
    import datasets  # type: ignore[import-untyped,unused-ignore]

    rows = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]
    repo = root / "medmcqa" / "data"
    repo.mkdir(parents=True)
    hf_rows = [{**row, "cop": row["cop"] - 1} for row in rows]
    datasets.Dataset.from_list(hf_rows).to_parquet(str(repo / "validation-00000-of-00001.parquet"))
    return repo.parent


def _run(mode: str, repo: Path, cache: Path) -> dict[str, float]:
    env = {**os.environ, "HF_DATASETS_CACHE": str(cache), "HF_DATASETS_OFFLINE": "1"}
    out = subprocess.run(
        [sys.executable, __file__, "--one", mode, str(repo), str(DEV)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", nargs=3, metavar=("MODE", "REPO", "LOCAL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(*args.one)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = _build_repo(root)
        runs: dict[str, list[dict[str, float]]] = {"file": [], "hf cold": [], "hf warm": []}
        for i in range(args.repeat):
            runs["file"].append(_run("file", repo, root / "unused-cache"))
            runs["hf cold"].append(_run("hf", repo, root / f"cache-{i}"))
            runs["hf warm"].append(_run("hf", repo, root / f"cache-{i}"))
    print(f"MedMCQA dev ({DEV.name}), median of {args.repeat} fresh processes")
    print("| path | cases | import s | load s | peak RSS MiB | load heap peak MiB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for mode, results in runs.items():
        med = {key: statistics.median(r[key] for r in results) for key in results[0]}
        print(
            f"| {mode} | {med['cases']:.0f} | {med['import_s']:.2f} | {med['load_s']:.3f} "
            f"| {med['rss_mib']:.0f} | {med['heap_mib']:.1f} |"
        )


if __name__ == "__main__":
    main()
