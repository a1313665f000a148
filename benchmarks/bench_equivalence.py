"""Throughput of diagnosis equivalence (clineval.text.names.equivalence).

    .venv/bin/python benchmarks/bench_equivalence.py [--data ../shared/data]

Prints a table: pairs/s of ``equivalent()`` on name pairs drawn from the Open-XDDx ground truth (warm
cache: every name seen before, the steady state of a scoring run; cold: caches emptied first), and
``best_match`` over 10 system names x 5 ground-truth names, and the time to score all 570 Open-XDDx cases
with a 10-item differential (each ground-truth name best-matched against the differential).
Targets (issue 13): >= 200,000 pairs/s cold with the terminology loaded; 570 Open-XDDx cases < 1 s.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from clineval.text.names.diagnosis_vocab import load_vocabulary, name_forms
from clineval.text.names.equivalence import best_match, equivalent
from clineval.text.names.features import analyse
from clineval.text.names.lay_names import extra_forms
from clineval.text.names.normalisation import american, singular
from clineval.text.names.ontology_match import broad_concepts, spelling_fix, terminology
from clineval.text.names.organisms import organism_forms
from clineval.text.names.resolution import parts_of

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _cases(data: Path) -> list[list[str]]:
    with (data / "open_xddx" / "open_xddx.jsonl").open(encoding="utf-8") as fh:
        return [list(json.loads(line)["ground_truth"]) for line in fh]


def _clear() -> None:
    parts_of.cache_clear()
    american.cache_clear()
    spelling_fix.cache_clear()
    singular.cache_clear()
    name_forms.cache_clear()
    analyse.cache_clear()
    extra_forms.cache_clear()
    organism_forms.cache_clear()
    load_vocabulary().cache.clear()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    rng = random.Random(0)
    cases = _cases(args.data)
    names = sorted({n for case in cases for n in case})
    pairs = [(rng.choice(names), rng.choice(names)) for _ in range(50_000)]
    rows: list[tuple[str, int, float]] = []

    start = time.perf_counter()
    terminology()  # issue 13 measures "cold" with the terminology loaded; its load is its own row
    spelling_fix("warmupword")  # and what is derived from it: the word index (typo candidates),
    broad_concepts()  # and the concepts too broad to relate two names
    rows.append(("load the Disease Ontology + derived indexes (once)", 0, time.perf_counter() - start))
    _clear()
    start = time.perf_counter()
    for a, b in pairs:
        equivalent(a, b)
    rows.append(("equivalent() cold (first sight of each name)", len(pairs), time.perf_counter() - start))
    start = time.perf_counter()
    for a, b in pairs:
        equivalent(a, b)
    rows.append(("equivalent() warm", len(pairs), time.perf_counter() - start))

    lists = [(rng.sample(names, 10), rng.sample(names, 5)) for _ in range(2_000)]
    start = time.perf_counter()
    for system, truth in lists:
        for gt in truth:
            best_match(gt, system)
    rows.append(("best_match 10 system x 5 truth (pairs)", 50 * len(lists), time.perf_counter() - start))

    _clear()
    differentials = [rng.sample(names, 10) for _ in cases]
    start = time.perf_counter()
    n_pairs = 0
    for truth, system in zip(cases, differentials, strict=True):
        for gt in truth:
            best_match(gt, system)
            n_pairs += len(system)
    rows.append((f"Open-XDDx {len(cases)} cases x 10-item ddx, cold", n_pairs, time.perf_counter() - start))

    print(f"{'benchmark':50} {'pairs':>8} {'seconds':>8} {'pairs/s':>10}")
    for label, n, seconds in rows:
        rate = f"{n / seconds:10,.0f}" if n else f"{'-':>10}"
        print(f"{label:50} {n:8d} {seconds:8.3f} {rate}")


if __name__ == "__main__":
    main()
