"""``clineval audit SUITE``: can a system that knows nothing raise the suite's metrics? (docs/runs/audit.md)

Exit codes: 0 no gating metric is inflated, 1 a stand-in inflates a gating metric, 2 bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clineval.cli.common import console, user_errors
from clineval.cli.out_dir import check_out_dir


@user_errors
def audit_command(
    suite: Annotated[Path, typer.Argument(help="Suite YAML file (its systems are never called).")],
    out: Annotated[Path | None, typer.Option("--out", help="Folder for audit.json and audit.md.")] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="A seeded sample of N cases per task.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the --limit sample.")] = 0,
    standins: Annotated[
        str, typer.Option("--standins", help="Stand-ins to run, comma-separated (default all).")
    ] = "",
    tasks: Annotated[
        str, typer.Option("--tasks", help="Tasks to audit, comma-separated (default all).")
    ] = "",
    judge: Annotated[
        bool,
        typer.Option(
            "--judge", help="Call the task's judge for every stand-in (network; default: no judge)."
        ),
    ] = False,
) -> None:
    """Score every task on degenerate stand-in systems (empty, refusal, constant, every option, copy of the
    question, hedging, DDx and CDS tricks) and flag each metric a stand-in raises above the trivial
    baseline (the best of the empty and constant answers) by more than its 95% interval.

    Exit 0: no gating metric is inflated; 1: a stand-in inflates a gating metric; 2: bad input."""
    from clineval.audit import audit_suite
    from clineval.audit.table import print_audit, write_audit

    check_out_dir(out)
    report = audit_suite(
        suite,
        limit=limit,
        seed=seed,
        standins=_names(standins),
        judge=judge,
        tasks=_names(tasks),
    )
    print_audit(report, console)
    if out is not None:
        for path in write_audit(report, out):
            console.print(f"wrote {path}", highlight=False, markup=False)
    raise typer.Exit(report.exit_code)


def _names(text: str) -> list[str] | None:
    names = [n.strip() for n in text.split(",") if n.strip()]
    return names or None


def register(app: typer.Typer) -> None:
    """Add ``clineval audit`` to the ``clineval`` app."""
    app.command("audit")(audit_command)
