"""First-page time of the viewer's cases table and case page on a 100,000-case SQLite store.

    .venv/bin/python benchmarks/bench_view.py [--cases N] [--db /tmp/clineval-bench-view.db] [--repeats 5]

Builds (once; reused when ``--db`` already holds the run) one MCQ run of ``--cases`` cases: realistic
CaseResult JSON (a ~600-character chain-of-thought answer, the mcq scorer's breakdown, a ``meta_info``
stratum, ~0.5 % failed calls), bulk-inserted with one ``executemany`` (the rows the runner's writer
would store), and the run's aggregates computed by the library (``api.finalize_run``). Then, in process
through Starlette's TestClient (the ASGI stack, templates and the guard middleware included), median of
``--repeats`` wall times (min-max) of: the cases page (page 1, unfiltered), its page 1000 by offset and
by keyset (``after=``), filtered by a label, by a stratum, and by text; one case's page; and the run page.

``--run RUN_ID`` times the pages of a run already in ``--db`` instead (e.g. the store a
``benchmarks/bench_replay.py`` run wrote: real outputs, summaries, and a dataset file the case page reads
back); its first task, a case in the middle and its first stratum are used, and the runs list is timed too.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, insert, select

from clineval.core import ComponentSpec, RunInfo, SuiteSpec, TaskSpec
from clineval.store import ResultStore
from clineval.store.keys import case_key
from clineval.store.tables import case_results

RUN_ID = "bench0view0000000000000000000001"
TASK = "medqa"
THINKING = (
    "The patient presents with findings that point towards a specific diagnosis. Considering the history, "
    "the examination and the laboratory values, the most likely explanation is option {letter}, because it "
    "accounts for the timeline, the risk factors and the abnormal results, while the other options do not "
    "explain the combination of symptoms. The first-line management follows the current guideline, which "
    "recommends this approach for a patient of this age and with these comorbidities; the alternatives are "
    "reserved for contraindications or failure of the initial therapy. Case {i}."
)


def _suite() -> SuiteSpec:
    task = TaskSpec(
        id=TASK,
        dataset=ComponentSpec(type="medqa", args={"path": "bench.jsonl"}, content_hash="sha256:bench"),
        system=ComponentSpec(type="predictions", args={"path": "bench_predictions.jsonl"}),
        scorers=[ComponentSpec(type="mcq")],
        stratify=["meta_info"],
    )
    return SuiteSpec(name="bench-view", tasks=[task], source="/nonexistent/bench.yaml")


def _row(i: int, rng: random.Random, now: datetime) -> dict[str, object]:
    gold, letter = rng.choice("ABCD"), rng.choice("ABCD") if rng.random() < 0.3 else None
    letter = letter or gold
    failed = rng.random() < 0.005
    unparsed = not failed and rng.random() < 0.01
    answer = f"{letter}. an option text of moderate length"
    text = json.dumps({"step_by_step_thinking": THINKING.format(letter=letter, i=i), "answer_choice": answer})
    error = {"kind": "timeout", "message": "timed out after 60 s", "attempts": 3} if failed else None
    label = "failed" if failed else "unparsed" if unparsed else "correct" if letter == gold else "incorrect"
    breakdown = {
        "extracted": None if failed or unparsed else letter,
        "method": None if failed or unparsed else "answer_field_letter",
        "span": None if failed else answer,
        "gold": gold,
    }
    result = {
        "task_id": TASK,
        "case_id": str(i),
        "output": {"text": None if failed else text, "error": error, "latency_s": 1.2},
        "scores": {
            "mcq": {"value": 1.0 if label == "correct" else 0.0, "label": label, "breakdown": breakdown}
        },
        "metadata": {"meta_info": "step1" if i % 2 else "step2&3"},
        "reference": gold,
    }
    return {
        "run_id": RUN_ID,
        "task_id": TASK,
        "case_id": str(i),
        "case_key": case_key(TASK, str(i)),
        "status": "failed" if failed else "ok",
        "result": result,
        "created_at": now,
    }


def build(url: str, n: int) -> None:
    from clineval.runs import run as api

    with ResultStore(url) as store:
        with store.engine.connect() as conn:
            have = conn.execute(select(func.count()).where(case_results.c.run_id == RUN_ID)).scalar_one()
        if have == n:
            return
        if have:
            raise SystemExit(f"{url} holds a run of {have} cases; pass another --db")
        now = datetime.now(UTC)
        suite = _suite()
        store.create_run(RunInfo(run_id=RUN_ID, suite=suite, status="running", created_at=now))
        rng = random.Random(0)
        started = time.perf_counter()
        with store.engine.begin() as conn:
            for start in range(0, n, 10_000):
                conn.execute(
                    insert(case_results), [_row(i, rng, now) for i in range(start, min(n, start + 10_000))]
                )
        print(f"inserted {n} case results in {time.perf_counter() - started:.1f} s")
        api.finalize_run(store, RUN_ID)


def timed(client: object, path: str, repeats: int) -> tuple[float, float, float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        response = client.get(path)  # type: ignore[attr-defined]
        times.append(time.perf_counter() - started)
        if response.status_code != 200:
            raise SystemExit(f"{path}: HTTP {response.status_code}")
    return statistics.median(times), min(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--db", type=Path, default=Path("/tmp/clineval-bench-view.db"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--run", default=None, help="time this stored run's pages (no build)")
    args = parser.parse_args()
    url = f"sqlite:///{args.db}"
    if args.run is None:
        build(url, args.cases)

    from starlette.testclient import TestClient

    from clineval.view import create_app

    client = TestClient(create_app(url), base_url="http://127.0.0.1")
    client.get("/")  # warm: templates compiled, connection pool opened
    from clineval.view.urls import link

    run_id, task, middle, stratum, n = RUN_ID, TASK, str(args.cases // 2), "meta_info=step1", args.cases
    with ResultStore(url) as store, store.engine.connect() as conn:
        if args.run is not None:
            run_id = store.resolve_run_id(args.run)
            info = store.get_run(run_id)
            task = info.suite.tasks[0].id
            key = (info.suite.tasks[0].stratify or ["split"])[0]
            where = (case_results.c.run_id == run_id, case_results.c.task_id == task)
            n = conn.execute(select(func.count()).where(*where)).scalar_one()
            in_order = select(case_results.c.case_id).where(*where).order_by(case_results.c.id)
            middle = conn.execute(in_order.offset(n // 2).limit(1)).scalar_one()
            first = store.iter_results(run_id).__next__()
            stratum = f"{key}={first.metadata.get(key)}"
        row_1000 = conn.execute(
            select(case_results.c.id)
            .where(case_results.c.run_id == run_id)
            .order_by(case_results.c.id)
            .offset(999 * 50 - 1)
            .limit(1)
        ).scalar_one()
    checks = [
        ("runs list", link("runs")),
        ("cases page 1", link("cases", run=run_id)),
        ("cases page 1000 (offset)", link("cases", run=run_id, page=1000)),
        ("cases page 1000 (keyset after=)", link("cases", run=run_id, after=row_1000)),
        ("cases, label mcq:incorrect", link("cases", run=run_id, label="mcq:incorrect")),
        (f"cases, stratum {stratum}", link("cases", run=run_id, stratum=stratum)),
        ("cases, failure timeout", link("cases", run=run_id, failure="timeout")),
        ("cases, text 'Case 99999'", link("cases", run=run_id, q="Case 99999")),
        ("case detail", link("case", run=run_id, task=task, case=middle)),
        ("run page", link("run", run=run_id)),
    ]
    print(f"{n} cases, median of {args.repeats} (min-max), seconds")
    for name, path in checks:
        median, lo, hi = timed(client, path, args.repeats)
        print(f"  {name:34s} {median:.4f} ({lo:.4f}-{hi:.4f})")


if __name__ == "__main__":
    main()
