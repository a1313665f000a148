"""Throughput of entity extraction and ClinicalAccuracy on explanation-length texts (target >= 1,000 texts/s).

The texts: the 1,273 MedQA USMLE test questions (../shared/data/medqa_usmle_4opt/, mean ~120 words, the
length of an answer explanation); each question is scored against the next row's question as reference.
One core, after the vocabulary is built (reported separately). Run:

    .venv/bin/python benchmarks/bench_clinical_accuracy.py [path/to/phrases_no_exclude_test.jsonl]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from clineval.quality.clinical_accuracy import clinical_accuracy, extract_entities
from clineval.text.entities import default_vocabulary

DEFAULT = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "medqa_usmle_4opt"
    / "phrases_no_exclude_test.jsonl"
)


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    texts = [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line]
    refs = texts[1:] + texts[:1]
    t0 = time.perf_counter()
    vocab = default_vocabulary()
    build = time.perf_counter() - t0
    print(f"vocabulary build: {build:.2f} s; sizes: {vocab.sizes()}")
    print(f"texts: {len(texts)}, mean {statistics.mean(len(t) for t in texts):.0f} chars")
    extract_entities(texts[0])  # warm the caches of the first call only
    best_extract = best_score = float("inf")
    n_entities = 0
    for _ in range(3):
        t0 = time.perf_counter()
        n_entities = sum(len(extract_entities(t)) for t in texts)
        best_extract = min(best_extract, time.perf_counter() - t0)
        t0 = time.perf_counter()
        values = [clinical_accuracy(t, r)[0] for t, r in zip(texts, refs, strict=True)]
        best_score = min(best_score, time.perf_counter() - t0)
    print(
        f"entity extraction: {len(texts) / best_extract:,.0f} texts/s "
        f"({n_entities / len(texts):.1f} entities/text)"
    )
    print(
        f"ClinicalAccuracy (output + reference extracted, J_w): {len(texts) / best_score:,.0f} samples/s "
        f"= {2 * len(texts) / best_score:,.0f} texts/s; mean J_w {statistics.mean(values):.3f}"
    )


if __name__ == "__main__":
    main()
