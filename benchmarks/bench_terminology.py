"""Load time and size of the packaged Disease Ontology terminology (clineval.text.names.terminology).

    .venv/bin/python benchmarks/bench_terminology.py [--runs 5]

Each run is a fresh interpreter (nothing cached) timing ``load_terminology()`` alone (the import of the module
is timed apart). Prints the median of the runs, the number of concepts, names by scope, keys and ambiguous
keys, and the artefact's size on disk (it ships in the wheel). Target: load < 100 ms.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import subprocess
import sys
from collections import Counter
from importlib import resources

from clineval.text.names.terminology import ARTEFACT, parse_terminology

_PROBE = """
import time
t0 = time.perf_counter()
from clineval.text.names.terminology import load_terminology
t1 = time.perf_counter()
load_terminology()
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def _fresh_timings(runs: int) -> tuple[list[float], list[float]]:
    imports, loads = [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
        imp, load = (float(x) for x in out.stdout.split())
        imports.append(imp)
        loads.append(load)
    return imports, loads


def _counts() -> tuple[int, dict[str, Counter[str]]]:
    path = resources.files("clineval.text.names") / "data" / "terminology" / ARTEFACT
    blob = path.read_bytes()
    term = parse_terminology(blob)
    names = [(cid, n) for cid, entries in term._names.items() for n in entries]
    scopes: Counter[str] = Counter()
    for cid, (key, *_rest) in names:
        source = term.name_source(key, cid)
        scopes[f"{source.scope} {source.release}"] += 1
    sizes: Counter[str] = Counter(
        concepts=len(term),
        names=len(names),
        keys=term.key_count(),
        exact_keys=len(term.exact_keys()),
        ambiguous_keys=len(term._ambiguous),
        uncompressed_bytes=len(gzip.decompress(blob)),
    )
    return len(blob), {"sizes": sizes, "scopes": scopes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    imports, loads = _fresh_timings(args.runs)
    size, counts = _counts()
    median = statistics.median(loads) * 1000
    print(f"load_terminology(): median {median:.1f} ms over {args.runs} fresh processes")
    print(f"import clineval.text.names.terminology: median {statistics.median(imports) * 1000:.1f} ms")
    print(f"artefact: {size:,} bytes compressed")
    for group in ("sizes", "scopes"):
        for name, value in sorted(counts[group].items()):
            print(f"  {name:<22} {value:>10,}")


if __name__ == "__main__":
    main()
