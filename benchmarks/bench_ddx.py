"""DDx scoring speed: all 570 Open-XDDx cases, each with a seeded synthetic 10-item differential.

    .venv/bin/python benchmarks/bench_ddx.py [--data /work/shared/data/open_xddx/open_xddx.jsonl]
                                             [--repeats 5] [--seed 0]

Each case's differential (seeded ``random.Random(seed)``): about 4 of its ground-truth names (half as
written, half paraphrased: lower-cased, parenthesis dropped or used alone, "acute " added, words
reordered around "due to"), the rest distractors drawn from other cases' ground truth; one of the ten is
an ``alternative``. Timed with ``time.perf_counter`` on one core: the ``ddx`` scorer over all cases
(classification + scores + breakdown), first pass with cold caches, then the best of ``--repeats``.
Pairs = Σ over cases of |differential| x |ground truth| (the name comparisons the matching covers).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from pathlib import Path

from clineval.core import Case, CaseInput, ScoringContext, StructuredOutput, SystemOutput
from clineval.core.case import Reference
from clineval.core.output import DifferentialItem
from clineval.ddx.scorer import DdxScorer

DEFAULT = Path("/work/shared/data/open_xddx/open_xddx.jsonl")


def paraphrase(name: str, rng: random.Random) -> str:
    choice = rng.randrange(4)
    inner = re.findall(r"\(([^)]*)\)", name)
    if choice == 0 and inner:
        return str(inner[0])
    if choice == 1:
        return re.sub(r"\s*\([^)]*\)", "", name).lower()
    if choice == 2 and not name.lower().startswith("acute"):
        return f"acute {name}"
    return name.upper()


def build(path: Path, seed: int) -> list[tuple[Case, SystemOutput]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(seed)
    pool = [g for r in rows for g in r["ground_truth"]]
    out = []
    for r in rows:
        gts = list(r["ground_truth"])
        findings = {k: list(v) if isinstance(v, list) else [str(v)] for k, v in r["ground_truth"].items()}
        picked = rng.sample(gts, min(4, len(gts)))
        names = [g if i % 2 == 0 else paraphrase(g, rng) for i, g in enumerate(picked)]
        names += [rng.choice(pool) for _ in range(10 - len(names))]
        rng.shuffle(names)
        alt = rng.randrange(10)
        items = [
            DifferentialItem(diagnosis=n, status="alternative" if i == alt else "proposed")
            for i, n in enumerate(names)
        ]
        case = Case(
            id=str(r["index"]),
            input=CaseInput(vignette=r.get("patient_info")),
            reference=Reference(differential=gts, findings=findings),
        )
        out.append((case, SystemOutput(structured=StructuredOutput(differential=items))))
    return out


def run(pairs: list[tuple[Case, SystemOutput]], scorer: DdxScorer) -> tuple[float, float]:
    start = time.perf_counter()
    total = 0.0
    for case, output in pairs:
        total += scorer(ScoringContext(case=case, output=output)).value
    return time.perf_counter() - start, total / len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DEFAULT)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    cases = build(args.data, args.seed)
    scorer = DdxScorer()
    n_pairs = sum(len(c.reference.differential) * 10 for c, _ in cases)
    cold, recall = run(cases, scorer)
    best = min(run(cases, scorer)[0] for _ in range(args.repeats))
    print(f"cases: {len(cases)}, name pairs: {n_pairs}, mean recall {recall:.3f}")
    print(
        f"cold (first pass): {cold:.3f} s  ({n_pairs / cold:,.0f} pairs/s, {len(cases) / cold:,.0f} cases/s)"
    )
    rate = f"{n_pairs / best:,.0f} pairs/s, {len(cases) / best:,.0f} cases/s"
    print(f"warm (best of {args.repeats}): {best:.3f} s  ({rate})")


if __name__ == "__main__":
    main()
