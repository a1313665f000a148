"""``clineval tasks`` (the catalogue) and ``clineval eval TASK --model PROVIDER/MODEL`` (a run with no YAML).

``eval`` builds the suite a YAML file would hold (``clineval.catalogue.build``), writes it (``--out`` or
``.clineval/suites/``) and runs it through the same path as ``clineval run``, so the run records it as its
suite file; ``--print-suite`` prints that YAML and exits 0 without running.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clineval.cli.common import DEFAULT_STORE, StoreOpt, console, user_errors

SUITES_DIR = Path(".clineval/suites")

EVAL_HELP = """Run catalogue tasks (comma-separated; see `clineval tasks`) on a model, with no suite file.

--model PROVIDER/MODEL, an OpenAI-compatible endpoint (--base-url overrides the URL):

  openai    $OPENAI_BASE_URL, else https://api.openai.com/v1   key: OPENAI_API_KEY

  vllm      http://localhost:8000/v1                          key: VLLM_API_KEY (optional)

  ollama    http://localhost:11434/v1                         key: OLLAMA_API_KEY (optional)

  llamacpp  http://localhost:8080/v1                          key: LLAMACPP_API_KEY (optional)

Keys are read from the environment at call time and never stored. Data: --data DIR, else $CLINEVAL_DATA,
else ../shared/data next to the repository. Exit codes as `clineval run` (0, 2 bad input, 3 degraded,
130 Ctrl-C, 143 SIGTERM: both store the run as interrupted and print the command that resumes it)."""


@user_errors
def tasks_command() -> None:
    """List the catalogue's tasks (name, dataset, size, metric, source, licence)."""
    from rich.markup import escape
    from rich.table import Table

    from clineval.catalogue.entries import CATALOGUE

    entries = list(CATALOGUE.values())
    if console.width < 120:  # a narrow terminal: one block per task, nothing cut
        for e in entries:
            grader = " · needs --grader" if e.needs_grader else ""
            console.print(
                f"[bold]{e.name}[/bold]  {escape(e.size)} · {e.metric} · {escape(e.licence)}{grader}"
            )
            console.print(f"  {escape(e.title)}\n  [dim]{escape(e.source)}[/dim]", soft_wrap=False)
        return
    table = Table()
    table.add_column("task", no_wrap=True)
    for name in ("dataset", "size", "metric", "source", "licence"):
        table.add_column(name)
    for e in entries:
        size = e.size + (" (needs --grader)" if e.needs_grader else "")
        table.add_row(e.name, escape(e.title), escape(size), e.metric, escape(e.source), escape(e.licence))
    console.print(table)


@user_errors
def eval_command(
    tasks: Annotated[str, typer.Argument(help="Catalogue task names, comma-separated.")],
    model: Annotated[str, typer.Option(help="PROVIDER/MODEL: openai, vllm, ollama or llamacpp.")],
    base_url: Annotated[str | None, typer.Option(help="Endpoint URL (overrides the provider's).")] = None,
    grader: Annotated[
        str | None, typer.Option(help="PROVIDER/MODEL grading rubric tasks (HealthBench).")
    ] = None,
    grader_base_url: Annotated[str | None, typer.Option(help="The grader's endpoint URL.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Seeded sample of N cases per task.")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the --limit sample (default 0).")] = None,
    out: Annotated[
        Path | None, typer.Option(help="Write report.json/.md/.html, results.jsonl and the suite here.")
    ] = None,
    store: StoreOpt = DEFAULT_STORE,
    data: Annotated[
        Path | None, typer.Option(help="Data folder (default $CLINEVAL_DATA, else ../shared/data).")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Concurrent calls to the model.")] = 16,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the cache.")] = False,
    timeout: Annotated[float, typer.Option(min=0.001, help="Per-call timeout, seconds.")] = 60.0,
    allow_degraded: Annotated[bool, typer.Option("--allow-degraded", help="Exit 0 when degraded.")] = False,
    print_suite: Annotated[
        bool, typer.Option("--print-suite", help="Print the equivalent suite YAML and exit 0.")
    ] = False,
    mlflow: Annotated[
        str | None, typer.Option(help="Also log the run to this MLflow tracking URI (docs/mlflow.md).")
    ] = None,
) -> None:
    from clineval.catalogue.build import default_data_dir, suite_mapping, suite_yaml, write_suite
    from clineval.catalogue.entries import get_entries
    from clineval.catalogue.models import parse_model
    from clineval.cli.out_dir import check_out_dir

    if not print_suite:
        check_out_dir(out)  # before the suite is written there, anything loaded, called or stored
    entries = get_entries(tasks)
    spec = parse_model(model, base_url)
    grader_spec = None if grader is None else parse_model(grader, grader_base_url, option="--grader")
    suite = suite_mapping(entries, spec, data or default_data_dir(), grader_spec)
    if print_suite:
        typer.echo(suite_yaml(suite), nl=False)
        return
    from clineval import api
    from clineval.cli.defaults import DEFAULT_CACHE
    from clineval.cli.main import _run_and_report  # the `clineval run` path (reports included)
    from clineval.runner.policy import CallPolicy

    path = write_suite(suite, out if out is not None else SUITES_DIR)
    request = api.RunRequest(
        suite_path=path,
        store_url=store,
        limit=limit,
        seed=seed,
        concurrency=concurrency,
        cache_path=None if no_cache else DEFAULT_CACHE,
        policy=CallPolicy(timeout_s=timeout),
    )
    _run_and_report(request, out, allow_degraded=allow_degraded, mlflow=mlflow)


eval_command.__doc__ = EVAL_HELP


def register(app: typer.Typer) -> None:
    """Add ``tasks`` and ``eval`` to the ``clineval`` app."""
    app.command("tasks")(tasks_command)
    app.command("eval", help=EVAL_HELP)(eval_command)
