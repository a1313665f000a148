"""Store write throughput of sharded runs: 1, 2 and 4 concurrent shard processes into one run.

    .venv/bin/python benchmarks/bench_shards.py [--cases 20000] [--writers 1,2,4]
        [--backends postgresql,sqlite] [--postgres URL]

A synthetic MCQ suite (``--cases`` MedQA-format questions and replayed answers, 4 options, ~70 %
correct) is generated in a temporary folder. For each backend and writer count W, on a fresh store (a new
SQLite file; a new schema on the PostgreSQL server at ``--postgres``, default
``$CLINEVAL_TEST_POSTGRES_URL``), W real processes ``clineval run SUITE --shard k/W --run-id bench`` are
started at once; the last one to complete aggregates the run. Printed per row:

- **write rows/s**: stored rows / the write window (first to last ``case_results.created_at``: the
  group commits of all writers together), i.e. the store's write rate under W concurrent writers;
- **end-to-end rows/s**: rows / wall time from starting the processes to the last exit (start-up, loading
  and scoring the suite in each process, writing, and the final aggregation).

The processes share this machine's cores with the database server, so W beyond the core count measures
contention as much as the store.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import create_engine, func, select, text

from clineval.store.shards import shard_run_id
from clineval.store.tables import case_results, utc

RUN = "bench"


def make_suite(folder: Path, cases: int) -> Path:
    rng = random.Random(0)
    with (folder / "questions.jsonl").open("w") as qf, (folder / "answers.jsonl").open("w") as af:
        for i in range(cases):  # written line by line: a million cases never sit in memory
            options = {k: f"option {k} of question {i}" for k in "ABCD"}
            right = rng.choice("ABCD")
            said = right if rng.random() < 0.7 else rng.choice("ABCD")
            stem = f"A {20 + i % 60}-year-old presents with finding {i}. " * 6
            question = {
                "question": stem + "What next?",
                "answer": options[right],
                "options": options,
                "meta_info": f"step{1 + i % 2}",
                "answer_idx": right,
            }
            reply = {"step_by_step_thinking": "Reasoning. " * 20, "answer_choice": f"{said}. {options[said]}"}
            answer = {"id": f"{i:05d}", "split": "test", "raw_output": [json.dumps(reply)]}
            qf.write(json.dumps(question) + "\n")
            af.write(json.dumps(answer) + "\n")
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: bench-shards\ntasks:\n  - id: mcq\n    dataset: {format: medqa, path: questions.jsonl}\n"
        "    system: {type: predictions, path: answers.jsonl, output_field: raw_output, numeric_ids: true}\n"
        "    scorers: [mcq]\n    stratify: [meta_info]\n"
    )
    return suite


@contextmanager
def fresh_store(backend: str, folder: Path, server: str | None) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{folder}/{uuid.uuid4().hex}.db"
        return
    assert server is not None
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{server}?options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        admin.dispose()


def measure(suite: Path, url: str, writers: int) -> tuple[int, float, float]:
    cli = [sys.executable, "-m", "clineval", "--quiet", "run", str(suite), "--no-cache", "--store", url]
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            [*cli, "--shard", f"{k}/{writers}", "--run-id", RUN],
            cwd=suite.parent,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(writers)
    ]
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"shard failed: {err.strip()}")
    wall = time.perf_counter() - started
    engine = create_engine(url)
    query = select(func.count(), func.min(case_results.c.created_at), func.max(case_results.c.created_at))
    with engine.connect() as conn:
        rows, first, last = conn.execute(query.where(case_results.c.run_id == shard_run_id(RUN))).one()
    engine.dispose()
    window = (utc(last) - utc(first)).total_seconds()  # type: ignore[operator]
    return int(rows), window, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--writers", default="1,2,4")
    parser.add_argument("--backends", default="postgresql,sqlite")
    parser.add_argument("--postgres", default=os.environ.get("CLINEVAL_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite = make_suite(folder, args.cases)
        print(f"{args.cases} cases, {os.cpu_count()} cores")
        print(
            f"{'backend':<11} {'writers':>7} {'rows':>7} {'write s':>8} {'write rows/s':>13} "
            f"{'wall s':>7} {'end-to-end rows/s':>18}"
        )
        for backend in args.backends.split(","):
            if backend == "postgresql" and not args.postgres:
                print("postgresql: skipped (no --postgres and no $CLINEVAL_TEST_POSTGRES_URL)")
                continue
            for writers in (int(w) for w in args.writers.split(",")):
                with fresh_store(backend, folder, args.postgres) as url:
                    rows, window, wall = measure(suite, url, writers)
                if rows != args.cases:
                    raise SystemExit(f"{backend} x{writers}: {rows} rows stored, not {args.cases}")
                print(
                    f"{backend:<11} {writers:>7} {rows:>7} {window:>8.2f} {rows / window:>13,.0f} "
                    f"{wall:>7.2f} {rows / wall:>18,.0f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
