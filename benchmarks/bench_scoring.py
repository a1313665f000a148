"""Throughput of MCQ extraction + scoring and of aggregation on real MedMCQA outputs (MIRAGE, 4,183 each).

    .venv/bin/python benchmarks/bench_scoring.py [--data ../shared/data] [--repeats 5]

Cases and outputs are built once; the timed loops are (1) ``extract_choice`` alone, (2) the scorer called
on every case (extraction + gold check + Score), (3) ``aggregate_task`` over the resulting CaseResults
(with one stratification key). Best of N repeats, ``time.perf_counter``, one process, one core.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

from clineval.core import Case, CaseInput, CaseResult, Reference, ScoringContext, SystemOutput
from clineval.mcq.answer_extraction import extract_choice
from clineval.mcq.scorer import MCQScorer
from clineval.metrics import aggregate_task

MODELS = ("gpt-4-32k", "gpt-35-turbo-16k")


def load(data: Path, model: str) -> list[ScoringContext]:
    cases: dict[str, Case] = {}
    with (data / "medmcqa_dev" / "dev.json").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            options = {"A": row["opa"], "B": row["opb"], "C": row["opc"], "D": row["opd"]}
            cases[row["id"]] = Case(
                id=row["id"],
                input=CaseInput(question=row["question"], options=options),
                reference=Reference(answer="ABCD"[row["cop"] - 1]),
                metadata={"subject_name": row["subject_name"]},
            )
    contexts = []
    path = data / "mirage_medrag_predictions" / f"medmcqa__cot__{model}.jsonl"
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            raw = row["raw_output"]
            output = SystemOutput(text=raw[0]) if raw else SystemOutput.failure("empty_output", "no output")
            contexts.append(ScoringContext(case=cases[row["id"]], output=output, task_id="medmcqa"))
    return contexts


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def row(label: str, n: int, seconds: float) -> str:
    return f"| {label} | {n:,} | {seconds:.4f} | {n / seconds:,.0f} | {seconds / n * 1e6:.2f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    scorer = MCQScorer()
    print("| step | cases | seconds (best) | cases/s | µs/case |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for model in MODELS:
        contexts = load(args.data, model)
        n = len(contexts)
        pairs = [(c.output.text, c.case.input.options) for c in contexts]

        def extract_all(pairs: list[tuple[str | None, dict[str, str]]] = pairs) -> None:
            for text, options in pairs:
                extract_choice(text, options)

        def score_all(contexts: list[ScoringContext] = contexts) -> None:
            for ctx in contexts:
                scorer(ctx)

        results = [
            CaseResult(
                task_id="medmcqa",
                case_id=c.case.id,
                output=c.output,
                scores={"mcq": scorer(c)},
                metadata=c.case.metadata,
                reference=c.case.reference.answer,
            )
            for c in contexts
        ]
        print(row(f"{model}: extract_choice", n, best_of(args.repeats, extract_all)))
        print(row(f"{model}: extraction + scoring", n, best_of(args.repeats, score_all)))

        def aggregate(results: list[CaseResult] = results) -> None:
            aggregate_task(results, [scorer], ["subject_name"])

        print(row(f"{model}: aggregate_task (stratified by subject)", n, best_of(args.repeats, aggregate)))


if __name__ == "__main__":
    main()
