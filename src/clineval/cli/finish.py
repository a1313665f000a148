"""How a command that produced a run ends: its warnings and failure lines, the console summary, the
reports of ``--out`` and the MLflow log (``run``, ``eval``, ``demo``, ``report``, ``combined-score``, a
shard that finalizes)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from clineval.cli.common import console, err_console
from clineval.core.errors import UserInputError

if TYPE_CHECKING:
    from clineval.core import GateDecision, RunResult
    from clineval.report.context import ReportContext


def report_context(run: RunResult) -> ReportContext:
    """The suite's scorers (for the tier scorecard) and a dataset loader (for sample-case questions); empty
    when the stored suite can no longer be rebuilt here (the reports then omit those parts)."""
    from clineval.datasets import DATASETS
    from clineval.report.context import EMPTY, ReportContext
    from clineval.runs import run as api

    try:
        scorers = api.scorers_for(run.info.suite)
    except UserInputError:
        return EMPTY
    by_keys = getattr(run.results, "by_keys", None)  # a stored run's results: read only the sample cases
    loaded: dict[str, Any] = {}

    def load_dataset(fmt: str, opts: Mapping[str, Any], base: Path) -> Any:
        # once per report command, not once per report file (a million-case file is read in ~10 s)
        key = json.dumps([fmt, opts, str(base)], sort_keys=True, default=str)
        if key not in loaded:
            loaded[key] = DATASETS.get(fmt)(opts, base)
        return loaded[key]

    return ReportContext(
        scorers=scorers, load_dataset=load_dataset, load_results=by_keys if callable(by_keys) else None
    )


def finish(
    run: RunResult, out: Path | None, gates: Sequence[GateDecision] = (), *, mlflow: str | None = None
) -> None:
    from clineval.analysis import degradation
    from clineval.report import print_run_summary

    for warning in run.info.provenance.get("warnings", []):
        err_console.print(
            f"[yellow]warning: {escape(str(warning))}[/yellow]", highlight=False, soft_wrap=True
        )
    for line in degradation.failure_lines(run.info.provenance):  # every task with failures, even a few
        err_console.print(escape(line), highlight=False, soft_wrap=True)
    print_run_summary(run, console)
    if out is not None:
        from clineval.report import write_reports  # Jinja2 and the renderers only when writing reports

        paths = write_reports(run, out, gates, context=report_context(run))
        console.print(f"reports: {', '.join(str(p) for p in paths)}")
    if mlflow is not None:
        from clineval.integrations.mlflow_log import log_run  # lazy: the extra is optional

        console.print(f"mlflow: run {log_run(run, tracking_uri=mlflow, report_dir=out)} at {escape(mlflow)}")
