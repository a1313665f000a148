"""One-command runs of every runnable catalogue task (``clineval eval TASK --limit 20``) against the local
scripted OpenAI-compatible server (a subprocess, 10 ms per call); prints wall time and the headline metric.

    .venv/bin/python benchmarks/bench_catalogue.py [--limit 20]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import typer
from typer.testing import CliRunner

from clineval.catalogue.entries import CATALOGUE
from clineval.cli.commands.eval_commands import register
from clineval.testing import Script
from clineval.testing.process import running_server_process


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=20)
    args = parser.parse_args()
    app = typer.Typer()
    register(app)
    runner = CliRunner()
    print("| task | cases | wall s | exit | metric | value |\n| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp, running_server_process(Script(latency_s=0.01)) as srv:
        for entry in CATALOGUE.values():
            out = Path(tmp) / entry.name
            argv = ["eval", entry.name, "--model", "vllm/bench", "--base-url", srv.base_url]
            argv += ["--limit", str(args.limit), "--out", str(out), "--store", f"sqlite:///{tmp}/r.db"]
            argv += ["--no-cache", "--allow-degraded"]
            if entry.needs_grader:
                argv += ["--grader", "openai/grader", "--grader-base-url", srv.base_url]
            started = time.perf_counter()
            result = runner.invoke(app, argv)
            wall = time.perf_counter() - started
            value: object = "-"
            n: object = "-"
            report = out / "report.json"
            if report.is_file():
                scores = json.loads(report.read_text(encoding="utf-8"))["task_scores"][entry.name]
                value, n = scores.get(entry.metric, "?"), scores.get("n", "?")
                value = round(value, 3) if isinstance(value, float) else value
            else:
                value = result.output.strip().splitlines()[-1][:60] if result.output.strip() else "-"
            print(f"| {entry.name} | {n} | {wall:.2f} | {result.exit_code} | {entry.metric} | {value} |")


if __name__ == "__main__":
    main()
