"""``clineval import inspect LOG...``: bring eval logs of other tools in as stored clineval runs.

inspect_ai is imported inside the command (``clineval --help`` stays fast); without it the command prints
one line naming the extra and exits 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clineval.cli.common import DEFAULT_STORE, StoreOpt, console, user_errors
from clineval.cli.store_folder import CreateStoreOpt, check_store_folder

import_app = typer.Typer(no_args_is_help=True, help="Import other tools' eval logs as stored clineval runs.")


@import_app.command("inspect")
@user_errors
def import_inspect(
    logs: Annotated[list[Path], typer.Argument(help="inspect eval logs (.eval or .json); one task each.")],
    store: StoreOpt = DEFAULT_STORE,
    suite_name: Annotated[
        str | None, typer.Option("--suite-name", help="Name of the stored suite (default inspect-TASK).")
    ] = None,
    scorers: Annotated[
        str, typer.Option("--scorers", help="clineval scorers, comma-separated (default mcq).")
    ] = "mcq",
    stratify: Annotated[
        str, typer.Option("--stratify", help="Case metadata keys to stratify by, comma-separated.")
    ] = "",
    work_dir: Annotated[
        Path, typer.Option("--work-dir", help="Where the logs' cases and predictions are written.")
    ] = Path(".clineval/imports/inspect"),
    create_store: CreateStoreOpt = False,
) -> None:
    """Store inspect eval logs as one clineval run (one task per log), scored by clineval's scorers.

    Kept per sample: the input (question, choices, target), the completion, token usage, latency, inspect's
    own scores (as case metadata ``inspect_<scorer>``); per log, in provenance["inspect"]: its path and
    sha256, model, generate config, usage and inspect's metrics. Exit 2 on a missing or corrupt log."""
    from clineval.integrations.inspect import ImportRequest, import_logs, require_inspect

    require_inspect()
    check_store_folder(store, create_store)
    run = import_logs(
        ImportRequest(
            logs=logs,
            store_url=store,
            suite_name=suite_name,
            scorers=[s for s in scorers.split(",") if s.strip()],
            work_dir=work_dir,
            stratify=[s.strip() for s in stratify.split(",") if s.strip()],
        )
    )
    summaries = {s["task_id"]: s for s in run.info.provenance.get("inspect", {}).get("logs", [])}
    console.print(f"run {run.run_id} ({run.info.status})", highlight=False)
    for task_id, aggregate in run.aggregates.items():
        accuracy = aggregate.scores.get("accuracy")
        ours = f"accuracy {accuracy:.3f}" if isinstance(accuracy, float) else ""
        theirs = ", ".join(
            f"inspect {scorer} {metrics['accuracy']:.3f}"
            for scorer, metrics in summaries.get(task_id, {}).get("inspect_scores", {}).items()
            if "accuracy" in metrics
        )
        console.print(
            f"  {task_id}: n {aggregate.scores.get('n')}  {ours}  {theirs}".rstrip(), highlight=False
        )


def register(app: typer.Typer) -> None:
    """Add the ``import`` group (``clineval import inspect``) to the ``clineval`` app."""
    app.add_typer(import_app, name="import")
