"""Type-aware scoring throughput: 10,000 synthetic CDS reports of realistic length (2-5 kB of text each).

Reports are built from MedQA test questions (seeded): a 5-item differential with reasoning, next steps,
recommendations, workup and a reasoning chain padded with clinical-sounding sentences from the vignettes
themselves; the correct option's text is placed in a random section at a random rank, or left out. The
timed loop is ``CdsReportScorer()(ctx)`` per report, question types precomputed (as ``annotate:
[question_type]`` does at load) and, in a second row, classified inside the scorer.

    .venv/bin/python benchmarks/bench_cds_scoring.py [--n 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

from clineval.core import Case, CaseInput, Reference, ScoringContext, SystemOutput
from clineval.core.cds_report import CdsReport
from clineval.mcq.cds_report import CdsReportScorer
from clineval.mcq.question_types import classify_question

MEDQA = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "medqa_usmle_4opt"
    / "phrases_no_exclude_test.jsonl"
)
SECTIONS = ("differential", "next_steps", "recommendations", "recommended_workup", "reasoning_chain")


def _sentences(rows: list[dict], rng: random.Random, k: int) -> list[str]:
    out = []
    for _ in range(k):
        text = rng.choice(rows)["question"]
        parts = [p.strip() for p in text.split(". ") if len(p) > 40]
        out.append((rng.choice(parts) if parts else text[:160]).rstrip(".") + ".")
    return out


def build(n: int, seed: int = 0) -> list[tuple[Case, SystemOutput]]:
    rows = [json.loads(line) for line in MEDQA.read_text(encoding="utf-8").splitlines()]
    rng = random.Random(seed)
    items = []
    for i in range(n):
        row = rows[i % len(rows)]
        options, gold = row["options"], row["answer_idx"]
        distractors = [v for k, v in options.items() if k != gold]
        report: dict[str, list] = {
            "differential": [
                {"diagnosis": d, "reasoning": " ".join(_sentences(rows, rng, 1))}
                for d in [*distractors, "Viral syndrome", "Anxiety disorder"]
            ],
            "next_steps": [f"Consider {s}" for s in _sentences(rows, rng, 4)],
            "recommendations": _sentences(rows, rng, 4),
            "recommended_workup": [
                "Complete blood count",
                "Basic metabolic panel",
                *_sentences(rows, rng, 2),
            ],
            "reasoning_chain": _sentences(rows, rng, rng.randint(9, 20)),
        }
        section = rng.choice([*SECTIONS, None])
        if section is not None:
            entry = (
                {"diagnosis": options[gold], "reasoning": "fits"}
                if section == "differential"
                else options[gold]
            )
            report[section].insert(rng.randint(0, 3), entry)
        structured = CdsReport.model_validate(report).to_structured()
        qtype = classify_question(row["question"], options).type
        case = Case(
            id=str(i),
            input=CaseInput(question=row["question"], options=options),
            reference=Reference(answer=gold, answer_text=options[gold]),
            metadata={"question_type": qtype},
        )
        items.append((case, SystemOutput(structured=structured)))
    return items


def report_bytes(output: SystemOutput) -> int:
    s = output.structured
    assert s is not None
    texts = [d.diagnosis + (d.reasoning or "") for d in s.differential or []]
    texts += [a.action for a in s.recommended_actions or []] + list(s.reasoning or [])
    return len(" ".join(texts).encode())


def time_scoring(items: list[tuple[Case, SystemOutput]], repeats: int) -> float:
    scorer = CdsReportScorer()
    contexts = [ScoringContext(case=c, output=o) for c, o in items]
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for ctx in contexts:
            scorer(ctx)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    items = build(args.n)
    sizes = sorted(report_bytes(o) for _, o in items)
    typed = time_scoring(items, args.repeats)
    untyped_items = [(c.model_copy(update={"metadata": {}}), o) for c, o in items]
    untyped = time_scoring(untyped_items, args.repeats)
    print(
        f"{args.n} synthetic CDS reports; text per report: median {statistics.median(sizes) / 1000:.1f} kB, "
        f"min {sizes[0] / 1000:.1f} kB, max {sizes[-1] / 1000:.1f} kB; best of {args.repeats}, one core\n"
    )
    print("| scoring | seconds | reports/s | µs/report |")
    print("| --- | ---: | ---: | ---: |")
    for label, seconds in (
        ("type-aware, question type precomputed", typed),
        ("type-aware, question classified in the scorer", untyped),
    ):
        print(f"| {label} | {seconds:.3f} | {args.n / seconds:,.0f} | {seconds / args.n * 1e6:.0f} |")
    print(f"\ntarget >= 2,000 reports/s: {'OK' if args.n / typed >= 2000 else 'BELOW TARGET'}")


if __name__ == "__main__":
    main()
