"""``clineval db upgrade|current`` (schema migrations), ``clineval results`` (query eval_results) and
``clineval feedback`` (tuning-visible failures of a run, held-out cases withheld)."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from clineval.cli.common import DEFAULT_STORE, StoreOpt, console, user_errors
from clineval.cli.store_folder import CreateStoreOpt, check_store_folder
from clineval.core.errors import UserInputError
from clineval.report.layout import Col, print_records

if TYPE_CHECKING:  # annotations only: each command imports the library it calls (fast `clineval --help`)
    from clineval.core import EvalMetric

db_app = typer.Typer(no_args_is_help=True, help="The store's schema: upgrade it, show its revision.")


@db_app.command("upgrade")
@user_errors
def db_upgrade(store: StoreOpt = DEFAULT_STORE, create_store: CreateStoreOpt = False) -> None:
    """Create or migrate the store's tables to the newest schema (also done whenever a store is opened)."""
    from clineval.store import ResultStore
    from clineval.store.migrations import HEAD

    check_store_folder(store, create_store)
    with ResultStore(store) as opened:
        console.print(f"{opened.display_url}: schema at revision {HEAD} (head)", highlight=False)


@db_app.command("current")
@user_errors
def db_current(store: StoreOpt = DEFAULT_STORE) -> None:
    """Print the store's schema revision."""
    from clineval.store import ResultStore
    from clineval.store.migrate import current_revision
    from clineval.store.migrations import HEAD

    with ResultStore(store, read_only=True) as opened, opened.engine.connect() as conn:
        console.print(f"{current_revision(conn)} (head {HEAD})", highlight=False)


def _since(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise UserInputError(f"--since {value!r} is not an ISO date/time", hint="e.g. 2026-11-01") from None
    return moment if moment.tzinfo is not None else moment.astimezone()


def _json_row(row: EvalMetric) -> str:
    data = row.model_dump(mode="json")
    data["metric_value"] = row.metric_value if math.isfinite(row.metric_value) else None
    return json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)


def results(
    store: StoreOpt = DEFAULT_STORE,
    tenant: Annotated[str | None, typer.Option(help="Only this tenant.")] = None,
    run_type: Annotated[str | None, typer.Option(help="nightly | weekly | config_gate | adhoc.")] = None,
    metric: Annotated[str | None, typer.Option(help="Only this metric name.")] = None,
    run: Annotated[str | None, typer.Option(help="Only this run id (or unique prefix).")] = None,
    condition: Annotated[str | None, typer.Option(help="Only this condition.")] = None,
    since: Annotated[str | None, typer.Option(help="Only rows at or after this ISO date/time.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many rows (the newest).")] = 200,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """List stored metric rows (eval_results), newest first: trends per tenant, run type, metric and
    condition. The title says how many of the matching rows are shown."""
    from clineval.store import ResultStore
    from clineval.store.eval_results import RowFilters

    with ResultStore(store, read_only=True) as opened:
        run_id = opened.resolve_run_id(run) if run is not None else None
        filters: RowFilters = {
            "tenant_id": tenant,
            "run_id": run_id,
            "run_type": run_type,
            "metric_name": metric,
            "condition": condition,
            "since": _since(since),
        }
        rows = opened.eval_results.query(**filters, limit=limit, newest_first=True)
        total = len(rows) if len(rows) < limit else opened.eval_results.count(**filters)
    if as_json:
        for row in rows:
            typer.echo(_json_row(row))
        return
    _print_rows(rows, total)


_VERDICT = {None: Text(""), True: Text("pass", style="green"), False: Text("FAIL", style="bold red")}


def _print_rows(rows: list[EvalMetric], total: int) -> None:
    """A table, or one block per row on a narrow console; task, metric and condition are never cut. The
    title says how many of the ``total`` matching rows are shown (``200 of 831 rows``)."""
    cols = [
        Col("time", justify="left"),
        Col("run", justify="left"),
        Col("type", justify="left"),
        Col("tenant", justify="left"),
        Col("task", label=True),
        Col("tier"),
        Col("metric", label=True),
        Col("condition", label=True),
        Col("value"),
        Col("vs baseline", justify="left"),
    ]
    print_records(
        console,
        cols,
        [
            [
                row.timestamp.strftime("%Y-%m-%d %H:%M"),
                row.run_id[:12],
                row.run_type,
                row.tenant_id,
                str(row.metadata.get("task") or ""),
                "" if row.tier is None else str(row.tier),
                row.metric_name,
                row.condition or "",
                "n/a" if math.isnan(row.metric_value) else f"{row.metric_value:.4f}",
                _VERDICT[row.passed_baseline],
            ]
            for row in rows
        ],
        title=Text(_title(len(rows), total)),
    )


def _title(shown: int, total: int) -> str:
    if shown == total:
        return f"eval_results: {total} row{'' if total == 1 else 's'}, newest first"
    return f"eval_results: {shown} of {total} rows, newest first (--limit N for more)"


results_command = user_errors(results)


@user_errors
def feedback_command(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    store: StoreOpt = DEFAULT_STORE,
    out: Annotated[
        Path | None, typer.Option(help="Write the tuning-visible cases as JSONL here (held-out withheld).")
    ] = None,
    all_cases: Annotated[
        bool, typer.Option("--all", help="Every visible case, not only failing ones.")
    ] = False,
) -> None:
    """Failure counts and failing cases of a run, for tuning; held-out cases are withheld."""
    from clineval.releases.feedback import feedback

    found = feedback(store, run_id, failing_only=not all_cases)
    console.print(json.dumps(found.to_dict(), indent=2), highlight=False, markup=False)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            for result in found.results:
                handle.write(result.model_dump_json() + "\n")
        console.print(f"{len(found.results)} case(s) written to {out}", highlight=False)
