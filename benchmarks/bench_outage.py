"""An endpoint outage in the middle of a live run: how many cases fail, and what it costs in wall time.

The scripted server runs as a subprocess (latency 0.2 s); N MedQA cases run through the whole runner path
(`api.run_suite`: system call, MCQ scoring, store) at concurrency 50. When ``--kill-at`` cases have
finished the server is killed (SIGKILL: in-flight requests are cut), then restarted on the same port
``outage`` seconds later. Each outage is run with the default CallPolicy (circuit breaker on) and, for
comparison, with the breaker off (``breaker_window=0``: retries alone, ~3.5 s of backoff).

    .venv/bin/python benchmarks/bench_outage.py [--n 1273] [--outages 0,30] [--kill-at 400]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from clineval.runner.policy import CallPolicy
from clineval.runs import run as api
from clineval.testing import Script
from clineval.testing.process import OutageHooks, start_server_process, stop_server_process

MEDQA = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "medqa_usmle_4opt"
    / "phrases_no_exclude_test.jsonl"
)


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def one(folder: Path, n: int, kill_at: int, outage: float | None, policy: CallPolicy) -> dict[str, Any]:
    script = folder / "script.json"
    script.write_text(Script(latency_s=0.2).model_dump_json(by_alias=True))
    server = start_server_process(script)
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: outage\ntasks:\n  - id: medqa\n"
        f"    dataset: {{format: medqa, path: '{MEDQA}'}}\n"
        f"    system: {{type: openai, base_url: '{server.base_url}', model: scripted-model}}\n"
        "    scorers: [mcq]\n"
    )
    hooks = OutageHooks(server, script, kill_at, outage)
    handler = Lines()
    logger = logging.getLogger("clineval.runner.breaker")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    request = api.RunRequest(
        suite_path=suite,
        store_url=f"sqlite:///{folder}/store-{time.monotonic_ns()}.db",
        limit=n,
        concurrency=50,
        cache_path=None,
        policy=policy,
    )
    started = time.perf_counter()
    try:
        run = api.run_suite(request, hooks=hooks)
    finally:
        wall = time.perf_counter() - started
        logger.removeHandler(handler)
        if hooks.thread is not None:
            hooks.thread.join(120)
        for proc in hooks.servers:
            stop_server_process(proc)
    kinds = Counter(r.output.error.kind for r in run.results if r.output.error)
    return {
        "cases": len(run.results),
        "failed": sum(kinds.values()),
        "kinds": dict(kinds),
        "wall": wall,
        "opens": sum(1 for line in handler.lines if line.startswith("circuit open")),
        "attempts": sum(r.output.attempts for r in run.results),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1273)  # all of MedQA test
    parser.add_argument("--kill-at", type=int, default=400)
    parser.add_argument("--outages", default="0,30", help="comma-separated seconds (0 = no outage)")
    parser.add_argument("--no-off", action="store_true", help="skip the runs with the breaker off")
    args = parser.parse_args()
    print(f"{args.n} MedQA cases, concurrency 50, 0.2 s endpoint, server killed after {args.kill_at} cases")
    print(
        f"{'outage s':>8}  {'breaker':<7}  {'cases':>5}  {'failed':>6}  {'attempts':>8}  {'opens':>5}  "
        f"{'wall s':>7}  failure kinds"
    )
    for outage in [float(s) for s in args.outages.split(",")]:
        modes = [("on", CallPolicy())]
        if not args.no_off and outage > 0:
            modes.append(("off", replace(CallPolicy(), breaker_window=0)))
        for mode, policy in modes:
            with tempfile.TemporaryDirectory() as tmp:
                row = one(Path(tmp), args.n, args.kill_at, outage or None, policy)
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(row["kinds"].items())) or "-"
            print(
                f"{outage:>8g}  {mode:<7}  {row['cases']:>5}  {row['failed']:>6}  {row['attempts']:>8}  "
                f"{row['opens']:>5}  {row['wall']:>7.1f}  {kinds}",
                flush=True,
            )


if __name__ == "__main__":
    main()
