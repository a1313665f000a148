"""The `clineval` command line: parse arguments, call the library, set the exit code (0 ok, 2 bad input)."""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clineval.cli import progress
from clineval.cli.commands import (
    adjudication_commands,
    audit_commands,
    counterfactual_commands,
    eval_commands,
    import_commands,
    judge_commands,
    pipeline_commands,
    release_commands,
    shard_commands,
    store_commands,
    view_commands,
)
from clineval.cli.common import StoreOpt, console, err_console, user_errors
from clineval.cli.defaults import DEFAULT_STORE
from clineval.cli.finish import finish
from clineval.cli.help_format import HelpGroup
from clineval.cli.run_guard import removes_created_out
from clineval.cli.run_options import RunOptions, with_run_options
from clineval.cli.store_folder import CreateStoreOpt
from clineval.core.errors import UserInputError

if TYPE_CHECKING:  # annotations only: each command imports the library it calls (fast `clineval --help`)
    from clineval.runs import run as api

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="clineval: evaluate clinical AI systems reproducibly.",
    rich_markup_mode=None,  # plain help, readable at 80 columns (cli.help_format)
    cls=HelpGroup,
)
schema_app = typer.Typer(no_args_is_help=True, help="Print JSON Schemas of clineval's data formats.")
app.add_typer(schema_app, name="schema")
app.add_typer(release_commands.baseline_app, name="baseline")
app.command()(release_commands.gate)
app.add_typer(store_commands.db_app, name="db")
app.add_typer(pipeline_commands.pipeline_app, name="pipeline")
app.add_typer(counterfactual_commands.counterfactual_app, name="counterfactual")
app.command("results")(store_commands.results_command)
app.command("feedback")(store_commands.feedback_command)
app.command("view")(view_commands.view_command)
adjudication_commands.register(app)
audit_commands.register(app)
eval_commands.register(app)
import_commands.register(app)
judge_commands.register(app)


def _print_version(value: bool) -> None:
    if value:  # only importlib.metadata: --version must stay fast
        from importlib.metadata import version

        typer.echo(f"clineval {version('clineval')}")
        raise typer.Exit(0)


@app.callback()
def _global_options(
    ctx: typer.Context,
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version, exit 0."),
    ] = False,
    quiet: progress.QuietOpt = False,
    progress_interval: progress.IntervalOpt = progress.DEFAULT_INTERVAL_S,
) -> None:
    """Options before the command: --version, --quiet, --progress-interval."""
    progress.SETTINGS.interval_s = progress_interval
    progress.set_quiet(console, quiet)
    # a command run in the same process afterwards (a test, a notebook) is not left quiet
    ctx.call_on_close(lambda: progress.set_quiet(console, False))


@app.command()
@user_errors
@removes_created_out  # a run that fails before writing its reports leaves no empty --out folder
@with_run_options  # the options `eval` shares (cli.run_options)
def run(
    suite: Annotated[Path, typer.Argument(help="Suite YAML file.")],
    resume: Annotated[
        str | None, typer.Option(help="Complete a stored, interrupted run.", metavar="RUN_ID")
    ] = None,
    *,
    options: RunOptions,
    shard: shard_commands.ShardOpt = None,
    run_id: shard_commands.RunIdOpt = None,
) -> None:
    """Run an evaluation suite (or --resume an interrupted run) and report it.

    Exit codes: 0 finished; 2 bad input (a pre-flight failure included); 3 finished but degraded (stored
    and reported; see --degraded-threshold and --allow-degraded); 130 interrupted (Ctrl-C), 143 terminated
    (SIGTERM: stored as interrupted, like Ctrl-C)."""
    from clineval.cli.out_dir import check_out_dir
    from clineval.runs.interrupts import sigterm_as_interrupt

    if options.quiet:
        progress.set_quiet(console)
    check_out_dir(options.out)  # before anything is loaded, called or stored
    request = options.request(suite, resume=resume, shard=shard_commands.parse_shard(shard), run_id=run_id)
    if request.shard is not None:
        with sigterm_as_interrupt():  # as in _run_and_report
            shard_commands.run_shard_and_report(request, options.out, partial(finish, mlflow=options.mlflow))
        return
    _run_and_report(request, options.out, allow_degraded=options.allow_degraded, mlflow=options.mlflow)


EXIT_DEGRADED = 3  # finished, stored and reported, but a component failed on too many cases


def _run_and_report(
    request: api.RunRequest,
    out: Path | None,
    *,
    allow_degraded: bool = False,
    mlflow: str | None = None,
    on_start: Callable[[str], None] | None = None,
) -> None:
    """``on_start(run_id)``: also called once the run is stored (``cli.run_guard``: keep what --out holds)."""
    from clineval.analysis import degradation
    from clineval.runs import run as api
    from clineval.runs.interrupts import sigterm_as_interrupt

    def started(run_id: str) -> None:
        err_console.print(f"run {run_id}")
        if on_start is not None:
            on_start(run_id)

    if out is not None and request.out is None:  # the resume command printed on Ctrl-C keeps --out
        request = replace(request, out=out)
    with sigterm_as_interrupt(), progress.progress_hooks(err_console) as hooks:  # SIGTERM: as Ctrl-C
        result = api.run_suite(request, hooks=hooks, on_start=started)
    finish(result, out, mlflow=mlflow)
    if degradation.is_degraded(result.info.provenance) and not allow_degraded:
        err_console.print(
            f"[red]degraded:[/red] run {result.run_id} is stored and reported, but its numbers are not "
            f"trustworthy (see the warnings above); exit {EXIT_DEGRADED} — --allow-degraded to exit 0",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_DEGRADED)


@app.command()
@user_errors
def runs(
    store: StoreOpt = DEFAULT_STORE,
    limit: Annotated[int, typer.Option(min=1, help="How many runs to list.")] = 50,
) -> None:
    """List stored runs, newest first."""
    from clineval.report import print_runs_table
    from clineval.store import ResultStore

    result_store = ResultStore(store, read_only=True)
    try:
        print_runs_table(result_store.list_runs_with_counts(limit=limit), console)
    finally:
        result_store.close()


@app.command()
@user_errors
def report(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    out: Annotated[Path, typer.Option(help="Output folder.")],
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """Write the reports of a stored run (with its stored release-gate decisions)."""
    from clineval.releases import gate as releases
    from clineval.runs import run as api

    run = api.open_run(store, run_id)
    finish(run, out, releases.gate_decisions(store, run.run_id))


@app.command()
@user_errors
def compare(
    run_a: Annotated[str, typer.Argument(help="Baseline run id (or a unique prefix).")],
    run_b: Annotated[str, typer.Argument(help="Candidate run id (or a unique prefix).")],
    store: StoreOpt = DEFAULT_STORE,
    intersection: Annotated[
        bool,
        typer.Option(help="Compare only the cases both runs scored (otherwise different sets are an error)."),
    ] = False,
    cases: Annotated[int, typer.Option(min=0, help="How many changed cases to list.")] = 30,
    out: Annotated[
        Path | None, typer.Option(help="Also write the comparison as Markdown to this file.")
    ] = None,
) -> None:
    """Compare two runs case by case: metric deltas overall and per stratum, changed cases, McNemar."""
    from clineval.releases import gate as releases
    from clineval.report.compare import print_comparison, render_comparison_markdown

    comparison = releases.compare_runs(store, run_a, run_b, intersection=intersection)
    if comparison.run_a == comparison.run_b:  # two prefixes of one run, or the same id pasted twice
        same = f"{run_a} and {run_b} are the same run ({comparison.run_a[:12]}): every delta is 0"
        err_console.print(
            f"warning: {same} — name two runs (`clineval runs` lists them)",
            style="yellow",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    print_comparison(comparison, console, max_cases=cases)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render_comparison_markdown(comparison), encoding="utf-8")
        console.print(f"comparison: {out}")


@app.command("combined-score")
@user_errors
def combined_score(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    weights: Annotated[str, typer.Option(help="category=weight,...  e.g. diagnostics=0.4,safety=0.3")],
    store: StoreOpt = DEFAULT_STORE,
    name: Annotated[str, typer.Option(help="Name of the combined score.")] = "combined_score",
    renormalize: Annotated[
        bool, typer.Option(help="Renormalise weights over the categories present.")
    ] = True,
    categories: Annotated[
        Path | None, typer.Option(help="Metric -> category YAML (default: packaged).")
    ] = None,
    save: Annotated[bool, typer.Option(help="Store the recomputed scores in the run.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the reports with the combined score here.")] = None,
    strict: Annotated[
        bool,
        typer.Option(help="A weighted category with no metric in a task: an error (exit 2), not a warning."),
    ] = False,
) -> None:
    """Recompute the weighted combined score of a stored run (nothing is re-run).

    Every metric mapped to a weighted category enters it (docs/engine/report_format.md, combined score); a
    weighted category no metric of a task gives is a warning, or with --strict an error (exit 2)."""
    from clineval.metrics.combined import parse_weights
    from clineval.releases import gate as releases

    try:
        parsed = parse_weights(weights)
    except ValueError as err:
        raise UserInputError(
            f"--weights: {err}", hint="use category=number pairs separated by commas"
        ) from None
    result = releases.recombine(
        store,
        run_id,
        parsed,
        name=name,
        renormalize=renormalize,
        categories=str(categories) if categories else None,
        save=save,
        strict=strict,
    )
    finish(result, out)


@schema_app.command("output")
def schema_output() -> None:
    """The JSON Schema of the structured output a system may return."""
    from clineval.core import StructuredOutput

    sys.stdout.write(json.dumps(StructuredOutput.model_json_schema(), indent=2) + "\n")


@app.command()
@user_errors
@removes_created_out
def demo(
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("clineval-demo"),
    store: StoreOpt = DEFAULT_STORE,
    create_store: CreateStoreOpt = False,
    quiet: progress.QuietOpt = False,
) -> None:
    """Score published GPT-4 and GPT-3.5 answers on 200 MedQA questions (data ships with clineval)."""
    from clineval.cli.out_dir import check_out_dir
    from clineval.cli.store_folder import check_store_folder
    from clineval.runs import run as api

    if quiet:
        progress.set_quiet(console)
    check_store_folder(store, create_store)
    check_out_dir(out)
    suite = Path(str(resources.files("clineval.demo") / "suite.yaml"))
    # The demo replays published answers: its warnings are shown, but it always exits 0.
    request = api.RunRequest(suite_path=suite, store_url=store, cache_path=None)
    _run_and_report(request, out, allow_degraded=True)


def main() -> None:
    # Fewer collections of the youngest generation: start-up and a run allocate ~10^6 short-lived objects,
    # and the default threshold (700) spent ~5% of a 1,000-case live run's wall time in the collector.
    gc.set_threshold(100_000, 50, 100)
    try:
        app()
    finally:
        # Every store, cache and report file is closed by now: spare the interpreter's exit from walking
        # the ~10^6 objects of the imported libraries for cycles (0.1 s of a 1.7 s live run).
        gc.freeze()


shard_commands.register(app, lambda run, out: finish(run, out))


if __name__ == "__main__":
    main()
