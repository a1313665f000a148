"""``clineval pipeline nightly|weekly CONFIG``: exit 0 pass, 1 regression, 2 a step (or the config) failed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from clineval.cli.common import console, user_errors
from clineval.cli.store_folder import CreateStoreOpt, check_store_folder

pipeline_app = typer.Typer(
    no_args_is_help=True, help="Scheduled evaluation pipelines (docs/runs/pipelines.md)."
)

ConfigArg = Annotated[Path, typer.Argument(help="Pipeline YAML file.")]
StoreOverride = Annotated[
    str | None, typer.Option("--store", help="SQLAlchemy URL of the store (default: the file's store:).")
]
JsonOut = Annotated[Path | None, typer.Option("--json-out", help="Also write the result as JSON here.")]
MlflowOpt = Annotated[
    str | None, typer.Option("--mlflow", help="Also log each step's run to this MLflow tracking URI.")
]


def _run(
    kind: str,
    config: Path,
    store: str | None,
    json_out: Path | None,
    mlflow: str | None = None,
    create_store: bool = False,
) -> None:
    from clineval.pipelines import run_pipeline

    if store is not None:
        check_store_folder(store, create_store)
    result = run_pipeline(kind, config, store_url=store, mlflow_uri=mlflow)
    console.print(result.summary(), highlight=False, markup=False, soft_wrap=True)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result.to_dict(), indent=2, default=str) + "\n", encoding="utf-8")
    if any(step.status == "error" for step in result.steps):
        raise typer.Exit(2)
    if not result.passed:
        raise typer.Exit(1)


@pipeline_app.command("nightly")
@user_errors
def nightly(
    config: ConfigArg,
    store: StoreOverride = None,
    json_out: JsonOut = None,
    mlflow: MlflowOpt = None,
    create_store: CreateStoreOpt = False,
) -> None:
    """Tier 1 on production recommendations, Tier 2/3 on curated sets; store, check, alert."""
    _run("nightly", config, store, json_out, mlflow, create_store)


@pipeline_app.command("weekly")
@user_errors
def weekly(
    config: ConfigArg,
    store: StoreOverride = None,
    json_out: JsonOut = None,
    mlflow: MlflowOpt = None,
    create_store: CreateStoreOpt = False,
) -> None:
    """Tier 4 (LLM judge) steps: stored and tracked, never gating."""
    _run("weekly", config, store, json_out, mlflow, create_store)
