"""``clineval tasks`` (the catalogue) and ``clineval eval TASK --model PROVIDER/MODEL`` (a run with no YAML).

``eval`` builds the suite a YAML file would hold (``clineval.catalogue.build``), writes it (``--out`` or
``.clineval/suites/``) and runs it through the same path as ``clineval run``, so the run records it as its
suite file; ``--print-suite`` prints that YAML and exits 0 without running. Both commands take the same
run options (``cli.run_options``); the printed suite starts with the ``clineval run`` command line that
does exactly the run ``eval`` would do (limit, seed and every other run option: none is a suite key).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from clineval.cli.common import console, user_errors
from clineval.cli.run_options import RunOptions, with_run_options
from clineval.core.errors import UserInputError

SUITES_DIR = Path(".clineval/suites")

EVAL_HELP = """Run catalogue tasks (comma-separated; see `clineval tasks`) on a model, with no suite file.

--model PROVIDER/MODEL, an OpenAI-compatible endpoint (--base-url overrides the URL; the key is read from
the environment at call time and never stored):

\b
  provider  base URL                     API key variable
  openai    $OPENAI_BASE_URL, else       OPENAI_API_KEY
            https://api.openai.com/v1
  vllm      http://localhost:8000/v1     VLLM_API_KEY (optional)
  ollama    http://localhost:11434/v1    OLLAMA_API_KEY (optional)
  llamacpp  http://localhost:8080/v1     LLAMACPP_API_KEY (optional)

Before the first case a pre-flight checks the key variable, the connection, the model and one probe
call (--no-preflight skips it). Data: --data DIR, else $CLINEVAL_DATA, else ../shared/data next to the
repository; a folder or file that is not there is an error; --data hf loads the tasks that have a public
Hugging Face dataset from the Hub. Exit codes as `clineval run` (0; 2 bad input or pre-flight; 3
degraded; 130 Ctrl-C, 143 SIGTERM: both store the run as interrupted and print the command that resumes
it)."""


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
@with_run_options  # the options `run` has, declared once (cli.run_options)
def eval_command(
    tasks: Annotated[str, typer.Argument(help="Catalogue task names, comma-separated.")],
    model: Annotated[
        str, typer.Option(help="PROVIDER/MODEL: openai, vllm, ollama or llamacpp.", metavar="PROVIDER/MODEL")
    ],
    base_url: Annotated[
        str | None, typer.Option(help="Endpoint URL (overrides the provider's).", metavar="URL")
    ] = None,
    grader: Annotated[
        str | None,
        typer.Option(help="PROVIDER/MODEL grading rubric tasks (HealthBench).", metavar="PROVIDER/MODEL"),
    ] = None,
    grader_base_url: Annotated[
        str | None, typer.Option(help="The grader's endpoint URL.", metavar="URL")
    ] = None,
    data: Annotated[
        str | None,
        typer.Option(
            help="Data folder (default $CLINEVAL_DATA, else ../shared/data); hf: the Hugging Face Hub.",
            metavar="DIR|hf",
        ),
    ] = None,
    print_suite: Annotated[
        bool,
        typer.Option(
            "--print-suite", help="Print the suite and the `clineval run` line that repeats this run."
        ),
    ] = False,
    *,
    options: RunOptions,
) -> None:
    from clineval.catalogue.build import data_source, suite_mapping, suite_yaml, write_suite
    from clineval.catalogue.entries import get_entries
    from clineval.catalogue.models import parse_model
    from clineval.cli.run_guard import guarded_out

    entries = get_entries(tasks)  # the options first: a bad one creates no --out folder
    spec = parse_model(model, base_url)
    grader_spec = None if grader is None else parse_model(grader, grader_base_url, option="--grader")
    if grader_spec is not None and grader_spec.model.lower() == spec.model.lower():
        raise UserInputError(
            f"--grader {grader} is the model under test (--model {model}): it would grade its own answers",
            hint="pass another model as --grader",
        )
    suite = suite_mapping(entries, spec, data_source(data, entries=entries), grader_spec)
    if print_suite:
        typer.echo(run_comment(options) + suite_yaml(suite), nl=False)
        return
    from clineval.cli import progress
    from clineval.cli.main import _run_and_report  # the `clineval run` path (reports included)

    if options.quiet:
        progress.set_quiet(console)
    out = options.out

    # --out checked before anything is loaded or called; emptied again if the command fails before its run
    # starts, and an error in the generated suite is worded as this command's (cli.run_guard)
    with guarded_out(out, command=f"clineval eval {tasks}") as guard:
        path = guard.generated(write_suite(suite, out if out is not None else SUITES_DIR))
        request = options.request(path)
        _run_and_report(
            request, out, allow_degraded=options.allow_degraded, mlflow=options.mlflow, on_start=guard.start
        )


def run_comment(options: RunOptions) -> str:
    """The comment ``--print-suite`` starts with: the ``clineval run`` line that does exactly this run
    (its run options are command-line options, no suite key holds them)."""
    command = shlex.join(["clineval", "run", "suite.yaml", *options.run_arguments()])
    return (
        "# Built by `clineval eval`. Its run options (--limit, --seed, --concurrency, --timeout...) are\n"
        "# not suite keys: to do exactly the run `clineval eval` does, save this file as suite.yaml and run\n"
        f"#   {command}\n"
    )


eval_command.__doc__ = EVAL_HELP


def register(app: typer.Typer) -> None:
    """Add ``tasks`` and ``eval`` to the ``clineval`` app."""
    app.command("tasks")(tasks_command)
    app.command("eval", help=EVAL_HELP)(eval_command)
