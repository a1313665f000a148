"""Sharded runs on the command line: ``clineval run SUITE --shard K/N --run-id R`` (the options live on
``run``; this module runs the shard and reports it) and ``clineval finalize R`` (docs/runs/sharding.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clineval.cli import progress
from clineval.cli.common import StoreOpt, console, err_console, user_errors
from clineval.cli.defaults import DEFAULT_STORE, DEGRADED_THRESHOLD
from clineval.core.errors import UserInputError

if TYPE_CHECKING:
    from clineval.core import RunResult
    from clineval.runs import run as api

Finish = Callable[["RunResult", Path | None], None]
ShardOpt = Annotated[
    str | None,
    typer.Option(
        help="Run only shard K of N (K/N, 0-based) of the suite's cases, into the run --run-id names; "
        "any number of shards may run at once (docs/runs/sharding.md).",
    ),
]
RunIdOpt = Annotated[
    str | None,
    typer.Option("--run-id", help="The shared run the shards write into (with --shard or --workers)."),
]


def parse_shard(text: str | None) -> tuple[int, int] | None:
    from clineval.store.shards import parse_shard as parse

    if text is None:
        return None
    try:
        return parse(text)
    except ValueError as err:
        raise UserInputError(str(err), hint="e.g. --shard 0/4 --run-id nightly-2026-12-08") from None


def run_shard_and_report(request: api.RunRequest, out: Path | None, finish: Finish) -> None:
    """Run one shard; the shard that completes the run prints and writes its reports like `run`."""
    from clineval.runs.shards import run_shard

    with progress.progress_hooks(err_console) as hooks:
        outcome = run_shard(request, hooks=hooks, on_start=lambda rid: err_console.print(f"run {rid}"))
    line = f"shard {outcome.shard}/{outcome.of} of run {outcome.run_id}: complete, {outcome.cases} cases"
    console.print(line, highlight=False)
    if outcome.run is not None:
        finish(outcome.run, out)
    elif outcome.missing:
        left = ", ".join(f"{k}/{outcome.of}" for k in outcome.missing)
        console.print(f"waiting for shards {left}; the last one finalizes (or: clineval finalize)")
    elif outcome.info.status in ("finished", "partial", "failed"):  # stored with its aggregates, at once
        console.print(f"run {outcome.run_id} was finalized already; re-aggregate with clineval finalize")
    else:  # not expected (a shard finalizes or waits for the finalizer): never report an unfinalized run done
        raise UserInputError(
            f"run {outcome.run_id}: every shard is complete but the run is not finalized",
            hint=f"clineval finalize {outcome.run_id}",
        )


def register(app: typer.Typer, finish: Finish) -> None:
    """Add ``clineval finalize``; ``finish(run, out)`` prints the summary and writes the reports."""

    @app.command("finalize")
    @user_errors
    def finalize_command(
        run_id: Annotated[str, typer.Argument(help="The sharded run's id.")],
        out: Annotated[
            Path | None, typer.Option(help="Write report.json/.md/.html and results.jsonl here.")
        ] = None,
        store: StoreOpt = DEFAULT_STORE,
        degraded_threshold: Annotated[
            float, typer.Option(min=0.0, max=1.0, help="As `clineval run --degraded-threshold`.")
        ] = DEGRADED_THRESHOLD,
        prices: Annotated[Path | None, typer.Option(help="Price table YAML (as `clineval run`).")] = None,
    ) -> None:
        """Aggregate a sharded run once every shard 0..N-1 is complete (exit 2 naming the missing ones)."""
        from clineval.runs import run as api

        run: RunResult = api.finalize(run_id, store, degraded_threshold=degraded_threshold, prices=prices)
        finish(run, out)
