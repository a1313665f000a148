"""``clineval baseline promote|list|show|history`` and ``clineval gate`` (exit 0 pass, 1 fail, 2 error)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from clineval.cli.common import StoreOpt, console, user_errors
from clineval.cli.defaults import DEFAULT_STORE, DEFAULT_TENANT, GATE_ALPHA, GATE_MARGIN

if TYPE_CHECKING:  # annotations only: each command imports the library it calls (fast `clineval --help`)
    from clineval.store.baselines import Baseline

baseline_app = typer.Typer(
    no_args_is_help=True, help="Named baselines (per tenant): promote, list, show, history."
)

TenantOpt = Annotated[str, typer.Option("--tenant", help="Tenant the baseline belongs to.")]
MetricsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--metrics", help="Gate only these metrics (comma-separated or repeated); the rest is tracked."
    ),
]
TrackOpt = Annotated[
    list[str] | None, typer.Option("--track", help="Track these metrics instead of gating them (repeatable).")
]


def _num(value: float | None) -> str:
    return "n/a" if value is None or value != value else f"{value:.4f}"


def _baselines_table(items: list[Baseline], title: str) -> Table:
    table = Table(title=title)
    for column in ("name", "tenant", "version", "run", "promoted_at (UTC)", "tasks"):
        table.add_column(column)
    for b in items:
        tasks = ", ".join(sorted(b.snapshot.get("tasks", {})))
        promoted = b.promoted_at.strftime("%Y-%m-%d %H:%M:%S")
        table.add_row(
            escape(b.name), escape(b.tenant), str(b.version), b.run_id[:12], promoted, escape(tasks)
        )
    return table


@baseline_app.command("promote")
@user_errors
def baseline_promote(
    run_id: Annotated[str, typer.Argument(help="Finished run id (or a unique prefix).")],
    name: Annotated[str, typer.Option("--name", help="Baseline name.")],
    tenant: TenantOpt = DEFAULT_TENANT,
    store: StoreOpt = DEFAULT_STORE,
    gate_metrics: Annotated[
        list[str] | None,
        typer.Option("--gate-metrics", help="Store: a gate against this baseline gates only these metrics."),
    ] = None,
    track_metrics: Annotated[
        list[str] | None, typer.Option("--track-metrics", help="Store: these metrics are tracked, not gated.")
    ] = None,
) -> None:
    """Snapshot a finished run's metrics as the next version of a named baseline."""
    from clineval import releases

    b = releases.promote_baseline(
        store, run_id, name, tenant, gate_metrics=gate_metrics, track_metrics=track_metrics
    )
    console.print(
        f"baseline {b.name} (tenant {b.tenant}) v{b.version} <- run {b.run_id}", highlight=False, markup=False
    )


@baseline_app.command("list")
@user_errors
def baseline_list(
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")] = None,
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """The latest version of every baseline."""
    from clineval import releases

    console.print(_baselines_table(releases.list_baselines(store, tenant), "baselines (latest versions)"))


@baseline_app.command("history")
@user_errors
def baseline_history(
    name: Annotated[str, typer.Argument(help="Baseline name.")],
    tenant: TenantOpt = DEFAULT_TENANT,
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """Every promoted version of a baseline, oldest first."""
    from clineval import releases

    console.print(_baselines_table(releases.baseline_history(store, name, tenant), f"history of {name}"))


@baseline_app.command("show")
@user_errors
def baseline_show(
    name: Annotated[str, typer.Argument(help="Baseline name.")],
    tenant: TenantOpt = DEFAULT_TENANT,
    version: Annotated[int | None, typer.Option(min=1, help="Version (default: latest).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole snapshot as JSON.")] = False,
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """One version of a baseline: its run and its metrics with their tiers."""
    from clineval import releases
    from clineval.analysis.gate import stored_choice
    from clineval.analysis.gate_roles import direction_of

    b = releases.show_baseline(store, name, tenant, version)
    if as_json:
        record = {"name": b.name, "tenant": b.tenant, "version": b.version, "run_id": b.run_id}
        record |= {"promoted_at": b.promoted_at.isoformat(), "snapshot": b.snapshot}
        sys.stdout.write(json.dumps(record, indent=2, default=str) + "\n")
        return
    console.print(_baselines_table([b], f"baseline {b.name}"))
    choice = stored_choice(b.snapshot)
    if choice:
        console.print(f"metrics named at promotion: {choice.describe()}", highlight=False, markup=False)
    for task, data in sorted(b.snapshot.get("tasks", {}).items()):
        table = Table(title=f"task {task}")
        table.add_column("metric")
        table.add_column("tier")
        table.add_column("role")
        table.add_column("better")
        table.add_column("value", justify="right")
        tiers = data.get("tiers", {})
        for key, value in sorted(data.get("scores", {}).items()):
            tier = tiers.get(key)
            if (role := choice.role(key, tier)) != "never" and isinstance(value, float):
                table.add_row(key, "-" if tier is None else str(tier), role, direction_of(key), _num(value))
        console.print(table)


@user_errors
def gate(
    candidate: Annotated[str, typer.Argument(help="Candidate run id (or a unique prefix).")],
    baseline: Annotated[str, typer.Option("--baseline", help="Baseline name.")],
    tenant: TenantOpt = DEFAULT_TENANT,
    mode: Annotated[
        str, typer.Option(help="strict (the literal rule) | statistical (paired tests, docs/gate.md).")
    ] = "strict",
    version: Annotated[int | None, typer.Option(min=1, help="Baseline version (default: latest).")] = None,
    alpha: Annotated[
        float, typer.Option(help="statistical: a drop regresses when its Holm-adjusted p < alpha ...")
    ] = GATE_ALPHA,
    margin: Annotated[
        float, typer.Option(help="... or its 95% interval's upper bound < -margin.")
    ] = GATE_MARGIN,
    store: StoreOpt = DEFAULT_STORE,
    allow_tuned_cases: Annotated[
        bool, typer.Option(help="Gate a run that includes tuned-on (train) cases anyway.")
    ] = False,
    metrics: MetricsOpt = None,
    track: TrackOpt = None,
) -> None:
    """Gate a candidate run against a baseline: exit 0 pass, 1 regression, 2 error (also: nothing gated)."""
    from clineval import releases

    result = releases.gate_run(
        store,
        candidate,
        baseline,
        tenant=tenant,
        mode=mode,
        version=version,
        alpha=alpha,
        margin=margin,
        allow_tuned_cases=allow_tuned_cases,
        metrics=metrics,
        track=track,
    )
    title = (
        f"gate {result.mode}: run {result.run_id[:12]} vs baseline {result.baseline_name} "
        f"v{result.baseline_version} (tenant {result.tenant})"
    )
    table = Table(title=title)
    columns = ["task", "metric", "tier", "better", "baseline", "candidate", "delta", "p", "result"]
    if result.mode == "statistical":
        columns.append("note")
    for column in columns:
        table.add_column(column, justify="right" if column in ("baseline", "candidate", "delta") else "left")
    style = {"pass": "green", "fail": "bold red", "tracked": "dim"}
    for row in result.rows:
        delta = "n/a" if row.delta is None else f"{row.delta:+.4f}"
        table.add_row(
            escape(row.task),
            escape(row.label),
            "-" if row.tier is None else str(row.tier),
            row.direction,
            _num(row.baseline),
            _num(row.candidate),
            delta,
            _num(row.p),
            f"[{style[row.status]}]{row.status}[/]",
            *([escape(row.note)] if result.mode == "statistical" else []),
        )
    console.print(table)
    gating = f"{result.n_gating} gating metric{'s' * (result.n_gating != 1)}"
    if result.passed:
        console.print(f"[green]PASS[/green]: {gating}, none regressed; {result.n_tracked} tracked")
        return
    failed = len(result.failures)
    console.print(f"[red]REGRESSION[/red]: {failed} of {gating} regressed; {result.n_tracked} tracked")
    for row in result.failures:
        console.print(
            f"  {row.task} {row.label}: baseline {_num(row.baseline)}, candidate {_num(row.candidate)}, "
            f"delta {'n/a' if row.delta is None else f'{row.delta:+.4f}'}, p {_num(row.p)}"
            + (f" ({row.note})" if row.note else ""),
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    raise typer.Exit(1)
