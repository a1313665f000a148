"""Storing 1,000,000 per-case results through ``ResultStore`` / ``ResultWriter`` on SQLite and PostgreSQL.

    .venv/bin/python benchmarks/bench_store.py [--rows 1000000] [--backends sqlite,postgresql]
        [--postgres URL] [--repeats 3] [--load-rows 100000] [--profile]

What is measured, for each backend in a process of its own (so its peak RSS is its own), on a fresh
database per repeat (a SQLite file in a temporary directory; for PostgreSQL a new schema on the server at
``--postgres``, default ``$CLINEVAL_TEST_POSTGRES_URL``, dropped afterwards; PostgreSQL is skipped with a
note when neither is set):

- **write**: ``store.writer(run_id)``, ``put`` of every result, ``close()``, i.e. until the last group
  commit is done (rows/s end to end). ``enqueue s`` is when the last ``put`` returned;
- the stored row count (``SELECT count(*)``), which must equal ``--rows`` (the benchmark stops otherwise);
- the database size: the SQLite file after a WAL checkpoint, or ``pg_total_relation_size`` of
  ``case_results`` (table, TOAST and indexes) on PostgreSQL;
- **peak RSS** while writing (``/proc/self/statm`` sampled every 20 ms) and how much above the process
  holding the built results it went;
- ``finished_keys`` on the ``--rows`` run (what ``clineval run --resume`` reads); after all writes,
  ``load_results`` of a run of ``--load-rows`` results.

The results are built before any timing, once per backend process, then frozen out of the garbage
collector's way (``gc.freeze``): 10,000 distinct MCQ-like templates (a 200-500 character answer with
token usage and latencies, an ``mcq`` score with an explanation, on a third of them a second ``reasoning``
score, metadata with condition and question type, about 2 % failed calls and 3 % unparsed answers with a
NaN score) combined with a unique case id per row. The build time is printed, not counted. Medians over
``--repeats`` (min-max shown); ``time.perf_counter``.

For durable PostgreSQL numbers start a server of its own with fsync on (the test server runs fsync=off):

    CLINEVAL_PG_STATE=/tmp/bench-pg CLINEVAL_PG_PORT=55433 CLINEVAL_PG_FSYNC=on scripts/test_postgres.sh start
    CLINEVAL_PG_STATE=/tmp/bench-pg scripts/test_postgres.sh stop

``--profile`` additionally runs one write per backend with cProfile enabled in the writer thread and prints
its top 15 functions by cumulative and by own time.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import io
import json
import math
import os
import pstats
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import create_engine, func, select, text

from clineval.core import (
    CaseResult,
    ComponentSpec,
    RunInfo,
    Score,
    SuiteSpec,
    SystemOutput,
    TaskSpec,
    Usage,
)
from clineval.store import ResultStore
from clineval.store.tables import case_results
from clineval.store.writer import ResultWriter

TASK = "medqa"
TEMPLATES = 10_000
SUITE = SuiteSpec(
    name="bench-store",
    source="benchmarks/bench_store.py",
    tasks=[
        TaskSpec(
            id=TASK,
            dataset=ComponentSpec(type="medqa", args={"path": "cases.jsonl"}, content_hash="ab"),
            system=ComponentSpec(type="predictions", args={"path": "predictions.jsonl"}),
            scorers=[ComponentSpec(type="mcq")],
            stratify=["condition", "question_type"],
        )
    ],
)
CONDITIONS = (
    "sepsis", "pneumonia", "heart failure", "atrial fibrillation", "type 2 diabetes", "COPD exacerbation",
    "acute kidney injury", "pulmonary embolism", "stroke", "myocardial infarction", "asthma", "cirrhosis",
)  # fmt: skip
QUESTION_TYPES = ("diagnosis", "treatment", "mechanism", "prognosis", "investigation")
WORDS = (
    "patient presents with fever tachycardia hypotension lactate elevated blood cultures broad spectrum "
    "antibiotics within one hour fluid resuscitation crystalloid vasopressor norepinephrine mean arterial "
    "pressure creatinine urine output chest radiograph consolidation oxygen saturation troponin "
    "electrocardiogram anticoagulation heparin guideline recommends first line therapy contraindicated "
    "renal dosing history examination differential likely most appropriate next step management"
).split()


def _answer_text(rng: random.Random, letter: str) -> str:
    target = rng.randint(200, 500)
    words: list[str] = []
    size = 0
    while size < target - 30:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return f"{' '.join(words).capitalize()}. Therefore the answer is {letter}."


def build_templates(n: int, seed: int = 0) -> list[dict[str, object]]:
    """``n`` distinct CaseResult field sets (everything but task and case id)."""
    rng = random.Random(seed)
    templates = []
    for index in range(n):
        gold = rng.choice("ABCD")
        condition = rng.choice(CONDITIONS)
        metadata = {
            "condition": condition,
            "question_type": rng.choice(QUESTION_TYPES),
            "meta_info": rng.choice(("step1", "step2&3")),
        }
        roll = rng.random()
        scores: dict[str, Score]
        if roll < 0.02:  # a failed system call
            output = SystemOutput.failure(
                rng.choice(("timeout", "http_500", "http_429")),
                f"no answer after {rng.randint(1, 3)} attempts ({index})",
                attempts=3,
                latency_s=round(rng.uniform(5, 60), 3),
            )
            scores = {"mcq": Score(value=math.nan, label="failed")}
        else:
            predicted = gold if rng.random() < 0.7 else rng.choice("ABCD")
            unparsed = roll < 0.05
            text_out = _answer_text(rng, predicted)
            if unparsed:
                text_out = text_out.rsplit(".", 2)[0] + "."  # the answer letter cut off
            prompt, completion = rng.randint(150, 900), rng.randint(60, 180)
            output = SystemOutput(
                text=text_out,
                latency_s=round(rng.uniform(0.2, 4.0), 4),
                stage_latency_s={"call": round(rng.uniform(0.2, 3.5), 4)},
                usage=Usage(
                    prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
                ),
            )
            if unparsed:
                mcq = Score(
                    value=math.nan, label="unparsed", explanation="no option letter found in the output"
                )
            else:
                correct = predicted == gold
                mcq = Score(
                    value=1.0 if correct else 0.0,
                    label="correct" if correct else "incorrect",
                    explanation=f"extracted {predicted!r} from the final sentence; gold {gold!r}",
                    breakdown={"predicted": predicted, "gold": gold, "pattern": "answer_is"},
                )
            scores = {"mcq": mcq}
            if index % 3 == 0:
                value = round(rng.random(), 3)
                scores["reasoning"] = Score(
                    value=value,
                    label="adequate" if value >= 0.5 else "inadequate",
                    explanation=f"cites {rng.randint(0, 4)} of 4 key findings for {condition}",
                    breakdown={"key_findings": 4, "judge": "rubric-v2"},
                )
        templates.append({"output": output, "scores": scores, "metadata": metadata, "reference": gold})
    return templates


def build_results(rows: int, templates: list[dict[str, object]]) -> list[CaseResult]:
    """``rows`` results with unique case ids; nested models are shared with their template (frozen)."""
    return [
        CaseResult(task_id=TASK, case_id=f"case-{index:08d}", **templates[index % len(templates)])  # type: ignore[arg-type]
        for index in range(rows)
    ]


# -- measuring ----------------------------------------------------------------------------------------
_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * _PAGE / 2**20
    except OSError:  # not Linux: the lifetime peak is the best there is
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextmanager
def peak_rss(interval: float = 0.02) -> Iterator[list[float]]:
    """Yields a list that holds, once the block is left, the peak RSS (MB) seen while it ran."""
    peak = [rss_mb()]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(interval):
            peak[0] = max(peak[0], rss_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        stop.set()
        sampler.join()
        peak[0] = max(peak[0], rss_mb())


def run_info(run_id: str) -> RunInfo:
    return RunInfo(
        run_id=run_id,
        suite=SUITE,
        status="running",
        created_at=datetime.now(UTC),
        provenance={"versions": {"clineval": "bench"}, "dataset_hash": "ab"},
    )


@contextmanager
def sqlite_url() -> Iterator[tuple[str, Callable[[ResultStore], int]]]:
    with tempfile.TemporaryDirectory(prefix="bench-store-") as folder:
        path = Path(folder) / "clineval.db"

        def size(store: ResultStore) -> int:
            with store.engine.connect() as conn:
                conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
            return sum(p.stat().st_size for p in Path(folder).glob("clineval.db*"))

        yield f"sqlite:///{path}", size


@contextmanager
def postgres_url(server: str) -> Iterator[tuple[str, Callable[[ResultStore], int]]]:
    """A URL whose connections use a new, empty schema (dropped afterwards), as in tests/backends.py."""
    schema = f"bench_{uuid.uuid4().hex[:16]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")

    def size(store: ResultStore) -> int:
        with store.engine.connect() as conn:
            return int(conn.execute(text("SELECT pg_total_relation_size('case_results')")).scalar_one())

    try:
        with admin.connect() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
        joiner = "&" if "?" in server else "?"
        yield f"{server}{joiner}options={quote(f'-csearch_path={schema}')}", size
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        admin.dispose()


class ProfiledWriter(ResultWriter):
    """A ResultWriter whose thread runs under cProfile (the profile covers the writer thread only)."""

    def _run(self) -> None:
        self.profile = cProfile.Profile()
        self.profile.enable()
        try:
            super()._run()
        finally:
            self.profile.disable()


def write(
    store: ResultStore, run_id: str, results: list[CaseResult], *, profile: bool = False
) -> tuple[float, float, str]:
    """Put every result through a writer and close it: (seconds until committed, to enqueue, profile)."""
    store.create_run(run_info(run_id))
    start = time.perf_counter()
    writer = ProfiledWriter(store.engine, run_id) if profile else store.writer(run_id)
    for result in results:
        writer.put(result)
    enqueued = time.perf_counter() - start
    writer.close()
    seconds = time.perf_counter() - start
    report = ""
    if isinstance(writer, ProfiledWriter):
        out = io.StringIO()
        stats = pstats.Stats(writer.profile, stream=out).strip_dirs()
        stats.sort_stats("cumulative").print_stats(15)
        stats.sort_stats("tottime").print_stats(15)
        report = out.getvalue()
    return seconds, enqueued, report


def settings(store: ResultStore) -> str:
    with store.engine.connect() as conn:
        if store.engine.dialect.name == "sqlite":
            mode = conn.execute(text("PRAGMA journal_mode")).scalar()
            sync = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[
                conn.execute(text("PRAGMA synchronous")).scalar()
            ]
            version = conn.execute(text("SELECT sqlite_version()")).scalar()
            return f"SQLite {version}, journal_mode={mode}, synchronous={sync}"
        shown = [
            f"{name}={conn.execute(text(f'SHOW {name}')).scalar()}"
            for name in ("fsync", "synchronous_commit")
        ]
        return f"PostgreSQL {conn.execute(text('SHOW server_version')).scalar()}, {', '.join(shown)}"


def run_backend(backend: str, args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement of one backend (run in a process of its own, so RSS is this backend's alone)."""
    start = time.perf_counter()
    results = build_results(args.rows, build_templates(TEMPLATES))
    out: dict[str, Any] = {
        "build_s": time.perf_counter() - start,
        "json_chars": len(results[0].model_dump_json()),
    }
    gc.collect()
    gc.freeze()  # 1M long-lived objects: keep the collector from re-scanning them during the timed writes
    out["rss_built_mb"] = rss_mb()
    log(
        f"{backend}: built {args.rows:,} results in {out['build_s']:.1f} s, RSS {out['rss_built_mb']:,.0f} MB"
    )
    database = sqlite_url if backend == "sqlite" else functools.partial(postgres_url, args.postgres)
    count_query = select(func.count()).select_from(case_results).where(case_results.c.run_id == "bench-rows")
    for key in ("write_s", "enqueue_s", "peak_mb", "size_bytes", "keys_s", "load_s"):
        out[key] = []
    for _ in range(args.repeats):
        with database() as (url, size), ResultStore(url) as store:
            out["settings"] = settings(store)
            with peak_rss() as peak:
                seconds, enqueued, _ = write(store, "bench-rows", results)
            with store.engine.connect() as conn:
                stored = conn.execute(count_query).scalar_one()
            if stored != args.rows:
                raise SystemExit(f"{backend}: {stored:,} rows stored, expected {args.rows:,}")
            out["size_bytes"].append(size(store))
            start = time.perf_counter()
            keys = store.finished_keys("bench-rows")
            out["keys_s"].append(time.perf_counter() - start)
            if len(keys) != args.rows:
                raise SystemExit(
                    f"{backend}: finished_keys returned {len(keys):,} keys, expected {args.rows:,}"
                )
            del keys
        out["write_s"].append(seconds)
        out["enqueue_s"].append(enqueued)
        out["peak_mb"].append(peak[0])
        log(f"{backend}: {seconds:.1f} s ({args.rows / seconds:,.0f} rows/s), {stored:,} rows stored")
        gc.collect()
    if args.load_rows:  # after the writes, so what it allocates does not count in their peak RSS
        with database() as (url, _), ResultStore(url) as store:
            write(store, "bench-load", results[: args.load_rows])
            for _ in range(args.repeats):
                start = time.perf_counter()
                loaded = store.load_results("bench-load")
                out["load_s"].append(time.perf_counter() - start)
                if len(loaded) != min(args.load_rows, args.rows):
                    raise SystemExit(f"{backend}: load_results returned {len(loaded):,} results")
                del loaded
    if args.profile:
        with database() as (url, _), ResultStore(url) as store:
            seconds, _, out["profile"] = write(store, "bench-rows", results, profile=True)
            out["profile_s"] = seconds
    return out


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--backends", default="sqlite,postgresql", help="comma-separated: sqlite,postgresql")
    parser.add_argument(
        "--postgres",
        default=os.environ.get("CLINEVAL_TEST_POSTGRES_URL"),
        help="server URL (default: $CLINEVAL_TEST_POSTGRES_URL); a fresh schema is created per run",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--load-rows", type=int, default=100_000, help="rows of the load_results run (0: skip)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also profile one write per backend (cProfile)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)  # internal: measure this backend, print JSON
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_backend(args.child, args)))
        return
    backends = [name.strip() for name in args.backends.split(",") if name.strip()]
    unknown = set(backends) - {"sqlite", "postgresql"}
    if unknown:
        parser.error(f"unknown backends: {', '.join(sorted(unknown))}")

    measured: dict[str, dict[str, Any]] = {}
    for backend in backends:
        if backend == "postgresql" and not args.postgres:
            print("postgresql: skipped (no --postgres URL and CLINEVAL_TEST_POSTGRES_URL is not set)")
            continue
        argv = [sys.executable, __file__, "--child", backend, "--rows", str(args.rows)]
        argv += ["--repeats", str(args.repeats), "--load-rows", str(args.load_rows)]
        argv += ["--postgres", args.postgres or ""] + (["--profile"] if args.profile else [])
        done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{backend}: the measuring process failed (exit status {done.returncode})")
        measured[backend] = json.loads(done.stdout.strip().splitlines()[-1])

    n = args.rows
    print(
        f"\n{n:,} results per run; write, finished_keys and load_results: median of {args.repeats} (min-max)"
    )
    for backend, m in measured.items():
        print(
            f"- {backend}: {m['settings']}; building the results took {m['build_s']:.1f} s "
            f"({n / m['build_s']:,.0f}/s, not timed), {m['json_chars']:,} JSON chars for the first one"
        )
    print("\n| backend | rows | seconds | rows/s | enqueue s | peak RSS MB | DB size MB | bytes/row |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for backend, m in measured.items():
        write_s = statistics.median(m["write_s"])
        size = statistics.median(m["size_bytes"])
        peak = max(m["peak_mb"])
        print(
            f"| {backend} | {n:,} | {write_s:.1f} ({spread(m['write_s'])}) | {n / write_s:,.0f} "
            f"| {statistics.median(m['enqueue_s']):.2f} | {peak:,.0f} (+{peak - m['rss_built_mb']:,.0f}) "
            f"| {size / 2**20:,.0f} | {size / n:,.0f} |"
        )
    print("\npeak RSS: the largest over the repeats (+ above the process holding the built results)")
    print(
        f"\n| backend | finished_keys ({n:,} rows) s | rows/s "
        f"| load_results ({args.load_rows:,} rows) s | rows/s |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for backend, m in measured.items():
        keys_s = statistics.median(m["keys_s"])
        load = "| - | - |"
        if m["load_s"]:
            load_s = statistics.median(m["load_s"])
            load = f"| {load_s:.2f} ({spread(m['load_s'], 2)}) | {min(args.load_rows, n) / load_s:,.0f} |"
        print(f"| {backend} | {keys_s:.2f} ({spread(m['keys_s'], 2)}) | {n / keys_s:,.0f} {load}")
    for backend, m in measured.items():
        if "profile" in m:
            print(
                f"\n## cProfile of the writer thread, {backend} ({m['profile_s']:.1f} s under the profiler)"
            )
            print(m["profile"])


def spread(values: list[float], digits: int = 1) -> str:
    return f"{min(values):.{digits}f}-{max(values):.{digits}f}"


if __name__ == "__main__":
    main()
