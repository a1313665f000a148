"""``clineval baseline promote|list|show|history`` and ``clineval gate`` (exit 0 pass, 1 fail, 2 error)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from clineval.cli.common import StoreOpt, console, user_errors
from clineval.cli.defaults import DEFAULT_STORE, DEFAULT_TENANT, GATE_ALPHA, GATE_MARGIN
from clineval.report.layout import Cell, Col, print_records

if TYPE_CHECKING:  # annotations only: each command imports the library it calls (fast `clineval --help`)
    from clineval.store.baselines import Baseline

baseline_app = typer.Typer(
    no_args_is_help=True, help="Named baselines (per tenant): promote, list, show, history."
)

_GATE_COLS = {
    "task": Col("task", label=True),
    "metric": Col("metric", label=True),
    **{c: Col(c) for c in ("baseline", "candidate", "delta", "p")},
    "note": Col("note", shrink=True, justify="left"),
}

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


def _print_baselines(items: list[Baseline], title: str) -> None:
    from clineval.releases.promotion import promotion_text

    cols = [Col("name", label=True), Col("tenant", label=True), Col("version"), Col("run", justify="left")]
    cols += [Col("promoted_at (UTC)", justify="left"), Col("tasks", shrink=True, justify="left")]
    cols += [Col("promotion", justify="left")]
    rows: list[list[Cell]] = [
        [
            b.name,
            b.tenant,
            str(b.version),
            b.run_id[:12],
            b.promoted_at.strftime("%Y-%m-%d %H:%M:%S"),
            ", ".join(sorted(b.snapshot.get("tasks", {}))),
            promotion_text(b, short=True),
        ]
        for b in items
    ]
    print_records(console, cols, rows, title=Text(title))
    for b in items:  # the whole promotion record of a forced or explained version, never cut by the table
        if promotion_text(b, short=True) == "FORCED" or "reason: " in promotion_text(b):
            line = f"{b.name} v{b.version}: {promotion_text(b)}"
            console.print(line, highlight=False, markup=False, soft_wrap=True)


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
    force: Annotated[
        bool,
        typer.Option("--force", help="Promote a run whose last gate failed (or has none); needs --reason."),
    ] = False,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why (stored with the version, shown by history/show).")
    ] = None,
) -> None:
    """Snapshot a finished run's metrics as the next version of a named baseline.

    A later version needs a passing gate of the run against the latest version (`clineval gate`);
    otherwise exit 2, unless --force --reason TEXT (the reason is stored with the version)."""
    from clineval.releases import gate as releases
    from clineval.releases.promotion import promotion_text

    b = releases.promote_baseline(
        store,
        run_id,
        name,
        tenant,
        gate_metrics=gate_metrics,
        track_metrics=track_metrics,
        force=force,
        reason=reason,
    )
    console.print(
        f"baseline {b.name} (tenant {b.tenant}) v{b.version} <- run {b.run_id} ({promotion_text(b)})",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


@baseline_app.command("list")
@user_errors
def baseline_list(
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")] = None,
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """The latest version of every baseline."""
    from clineval.releases import gate as releases

    _print_baselines(releases.list_baselines(store, tenant), "baselines (latest versions)")


@baseline_app.command("history")
@user_errors
def baseline_history(
    name: Annotated[str, typer.Argument(help="Baseline name.")],
    tenant: TenantOpt = DEFAULT_TENANT,
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """Every promoted version of a baseline, oldest first."""
    from clineval.releases import gate as releases

    _print_baselines(releases.baseline_history(store, name, tenant), f"history of {name}")


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
    from clineval.analysis.gate import stored_choice
    from clineval.analysis.gate_roles import direction_of
    from clineval.releases import gate as releases

    b = releases.show_baseline(store, name, tenant, version)
    if as_json:
        record = {"name": b.name, "tenant": b.tenant, "version": b.version, "run_id": b.run_id}
        record |= {"promoted_at": b.promoted_at.isoformat(), "snapshot": b.snapshot}
        sys.stdout.write(json.dumps(record, indent=2, default=str) + "\n")
        return
    _print_baselines([b], f"baseline {b.name}")
    choice = stored_choice(b.snapshot)
    if choice:
        console.print(f"metrics named at promotion: {choice.describe()}", highlight=False, markup=False)
    for task, data in sorted(b.snapshot.get("tasks", {}).items()):
        tiers = data.get("tiers", {})
        rows = [
            [key, "-" if tiers.get(key) is None else str(tiers[key]), role, direction_of(key), _num(value)]
            for key, value in sorted(data.get("scores", {}).items())
            if (role := choice.role(key, tiers.get(key))) != "never" and isinstance(value, float)
        ]
        cols = [Col("metric", label=True), Col("tier"), Col("role"), Col("better"), Col("value")]
        print_records(console, cols, rows, title=f"task {task}")


@user_errors
def gate(
    candidate: Annotated[str, typer.Argument(help="Candidate run id (or a unique prefix).")],
    baseline: Annotated[str, typer.Option("--baseline", help="Baseline name.")],
    tenant: TenantOpt = DEFAULT_TENANT,
    mode: Annotated[
        str,
        typer.Option(help="strict (the literal rule) | statistical (paired tests, docs/releases/gate.md)."),
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
    from clineval.releases import gate as releases

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
    columns = ["task", "metric", "tier", "better", "baseline", "candidate", "delta", "p", "result"]
    if result.mode == "statistical":
        columns.append("note")
    style = {"pass": "green", "fail": "bold red", "tracked": "dim"}
    rows: list[list[Cell]] = [
        [
            row.task,
            row.label,
            "-" if row.tier is None else str(row.tier),
            row.direction,
            _num(row.baseline),
            _num(row.candidate),
            "n/a" if row.delta is None else f"{row.delta:+.4f}",
            _num(row.p),
            Text(row.status, style=style.get(row.status, "")),
            *([row.note] if result.mode == "statistical" else []),
        ]
        for row in result.rows
    ]
    print_records(console, [_GATE_COLS.get(c, Col(c, justify="left")) for c in columns], rows, title=title)
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
