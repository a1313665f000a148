"""Replaying a predictions file of a million lines: the index-only ``PredictionsSystem`` (issue 16) against
reading every prediction into memory (``read_predictions``, what the system did before).

    .venv/bin/python benchmarks/bench_predictions.py [--lines 1000000] [--variants new,old] [--dir DIR]

A synthetic MIRAGE-like file is written first (not timed): one line per case, ``{"id": "0000042",
"split": "test", "raw_output": ["{\\"step_by_step_thinking\\": \\"Reasoning. ...\\" (x20),
\\"answer_choice\\": \\"B. option B of question 42\\"}"]}``, about 330 bytes, read with ``output_field:
raw_output, numeric_ids: true`` (the ids are zero-padded, the cases ask for ``"42"``).

Each variant runs in a fresh interpreter of its own, so its peak RSS (``ru_maxrss``) is its own:

- **new**: ``PredictionsSystem(...)`` (one streaming pass: validate every line, keep id -> offset), then
  ``await system.call(case)`` for every id in order, sequentially in one event loop (each call reads its
  line again and parses it);
- **old**: ``read_predictions`` (the whole file as bytes, every line parsed into a ``SystemOutput`` kept
  in a dict), then the old ``call``: normalise the id, look it up.

Construction and the calls are timed with ``time.perf_counter``; each case is a stand-in holding only its
id (all ``call`` reads), built inside the timed loop (well under 1 µs, the same for both). Every returned
output is checked (text of the right question). Peak RSS is read after construction and again after all
calls; ``base`` is the interpreter with clineval imported, before anything is read.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from clineval.core.case import Case
from clineval.core.output import SystemOutput
from clineval.systems.predictions import (
    PredictionsOptions,
    PredictionsSystem,
    normalize_id,
    read_predictions,
)

OPTIONS = {"output_field": "raw_output", "numeric_ids": True}


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def answer(i: int) -> str:
    return f"B. option B of question {i}"


def write_file(path: Path, lines: int) -> None:
    width = max(5, len(str(lines)))
    thinking = "Reasoning. " * 20
    with path.open("w", encoding="utf-8") as out:
        for i in range(lines):
            inner = json.dumps({"step_by_step_thinking": thinking, "answer_choice": answer(i)})
            row = {"id": f"{i:0{width}d}", "split": "test", "raw_output": [inner]}
            out.write(json.dumps(row) + "\n")


def check(output: SystemOutput, i: int) -> None:
    if output.text is None or not output.text.endswith(f'"{answer(i)}"}}'):
        raise SystemExit(f"wrong output for case {i}: {output!r}")


class CaseRef:
    """What ``call`` reads of a case: its id (``Case.model_construct`` alone costs about 30 µs)."""

    __slots__ = ("id",)

    def __init__(self, case_id: str) -> None:
        self.id = case_id


def case_of(i: int) -> Case:
    return cast(Case, CaseRef(str(i)))


async def call_new(system: PredictionsSystem, lines: int) -> None:
    for i in range(lines):
        check(await system.call(case_of(i)), i)


async def call_old(outputs: dict[str, SystemOutput], lines: int) -> None:
    for i in range(lines):
        case = case_of(i)
        output = outputs.get(normalize_id(case.id, numeric_ids=True))
        if output is None:
            raise SystemExit(f"no prediction for {i}")
        check(output, i)


def child(variant: str, path: Path, lines: int) -> dict[str, Any]:
    gc.collect()
    base = peak_mb()
    start = time.perf_counter()
    if variant == "new":
        options = PredictionsOptions.model_validate({"path": str(path), **OPTIONS})
        system = PredictionsSystem(options, path.parent)
        size = len(system)
    else:
        outputs = read_predictions(path, output_field="raw_output", numeric_ids=True)
        size = len(outputs)
    built = time.perf_counter() - start
    built_peak = peak_mb()
    if size != lines:
        raise SystemExit(f"{variant}: {size} predictions, expected {lines}")
    start = time.perf_counter()
    if variant == "new":
        asyncio.run(call_new(system, lines))
        asyncio.run(system.close())
    else:
        asyncio.run(call_old(outputs, lines))
    calls = time.perf_counter() - start
    return {
        "variant": variant,
        "lines": lines,
        "build_s": built,
        "call_us": calls / lines * 1e6,
        "base_mb": base,
        "built_peak_mb": built_peak,
        "peak_mb": peak_mb(),
    }


def run_child(variant: str, path: Path, lines: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", variant, "--path", str(path), "--lines", str(lines)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{variant} at {lines} lines failed:\n{done.stdout}{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--variants", default="new,old")
    parser.add_argument("--dir", type=Path, default=None, help="where the synthetic file goes (default: tmp)")
    parser.add_argument("--child", choices=["new", "old"], help=argparse.SUPPRESS)
    parser.add_argument("--path", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.path, args.lines[0])))
        return
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for lines in args.lines:
            path = Path(tmp) / f"predictions-{lines}.jsonl"
            start = time.perf_counter()
            write_file(path, lines)
            size_mb = path.stat().st_size / 1e6
            print(
                f"{lines:,} lines, {size_mb:.0f} MB written in {time.perf_counter() - start:.1f} s",
                flush=True,
            )
            for variant in args.variants.split(","):
                row = run_child(variant, path, lines)
                row["file_mb"] = size_mb
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
            path.unlink()
    print()
    print(
        "| lines | file MB | variant | construction s | µs per call | base RSS MB | peak after build MB "
        "| peak RSS MB |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['lines']:,} | {row['file_mb']:.0f} | {row['variant']} | {row['build_s']:.2f} "
            f"| {row['call_us']:.1f} | {row['base_mb']:.0f} | {row['built_peak_mb']:.0f} "
            f"| {row['peak_mb']:.0f} |"
        )


if __name__ == "__main__":
    main()
