"""Tier 1-3 scoring throughput on the golden set (102 cases), recommendations from the example recommender.

The recommendations are built once (outside the timing) by examples/cds_recommender/recommender.py; the
timed loop runs every tier-1 scorer, the tier-2 citation scorer and tier-3 guideline adherence per case.
The rule engine's clause-matching cache is cleared before every repeat, so each repeat pays for matching
its cases' text once, as a real run does (only the rules' own repeated clause/term pairs hit the cache).

    .venv/bin/python benchmarks/bench_tiers.py [--repeats 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "cds_recommender"))

from recommender import recommend  # noqa: E402

from clineval.cds.rules.patient import names as rule_names  # noqa: E402
from clineval.core import ScoringContext, SystemOutput  # noqa: E402
from clineval.datasets import DATASETS  # noqa: E402
from clineval.scoring.registry import SCORERS  # noqa: E402

TIERS = {
    1: ["schema", "citation_grounding", "scope", "contraindications", "escalation", "latency"],
    2: ["guideline_citation"],
    3: ["guideline_adherence"],
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    cases = DATASETS.get("golden_set")(
        {"path": str(ROOT / "data" / "golden_set" / "golden_set_v2.jsonl")}, ROOT
    ).cases
    contexts = [
        ScoringContext(
            case=c,
            output=SystemOutput.model_validate(
                {"structured": recommend(c.input.data["patient"]), "stage_latency_s": {"retrieval": 0.01}}
            ),
        )
        for c in cases
    ]
    print(f"{len(cases)} golden-set cases, best of {args.repeats}, one core\n")
    print("| tier | scorers | µs per case | cases/s |")
    print("| --- | --- | ---: | ---: |")
    total = 0.0
    for tier, names in TIERS.items():
        scorers = [SCORERS.get(n)({}) for n in names]
        best = float("inf")
        for _ in range(args.repeats):
            rule_names.cache_clear()
            started = time.perf_counter()
            for ctx in contexts:
                for scorer in scorers:
                    scorer(ctx)
            best = min(best, time.perf_counter() - started)
        total += best
        print(f"| {tier} | {', '.join(names)} | {best / len(cases) * 1e6:.0f} | {len(cases) / best:,.0f} |")
    print(f"| 1-3 | all | {total / len(cases) * 1e6:.0f} | {len(cases) / total:,.0f} |")


if __name__ == "__main__":
    main()
