"""The runs list and the run page."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from clineval.core import RUN_TYPES, RunNotFoundError
from clineval.core.system_identity import rule_for, task_system_names
from clineval.store import ResultStore
from clineval.store.tables import RUN_STATUSES
from clineval.view import queries
from clineval.view.renderers import runs as render
from clineval.view.renderers import tiers as render_tiers

SORTS = {
    "created": lambda r: r.created_at.timestamp() if r.created_at else 0.0,
    "suite": lambda r: r.suite.name.lower(),
    "status": lambda r: r.status,
    "tenant": lambda r: r.tenant_id,
    "cases": lambda r: r.n_cases,
}


def store_of(request: Request) -> ResultStore:
    store: ResultStore = request.app.state.store
    return store


def required(request: Request, name: str) -> str:
    """The query parameter ``name`` (checked by ``clineval.view.params``); 400 when absent or empty."""
    value = request.query_params.get(name)
    if not value:
        raise HTTPException(400, f"parameter {name!r} is required")
    return value


def resolve(request: Request, run_id: str) -> str:
    """The full id of a run named by id or unique prefix; 404 otherwise."""
    try:
        return store_of(request).resolve_run_id(run_id)
    except RunNotFoundError as err:
        raise HTTPException(404, str(err)) from None


def _matches(row: queries.RunRow, params: dict[str, str]) -> bool:
    if params.get("tenant") and row.tenant_id != params["tenant"]:
        return False
    if params.get("run_type") and row.run_type != params["run_type"]:
        return False
    if params.get("status") and row.status != params["status"]:
        return False
    text = params.get("q", "").lower()
    haystack = " ".join([row.run_id, row.suite.name, render.run_systems(row.suite)]).lower()
    return not text or text in haystack


async def runs_page(request: Request) -> Response:
    from clineval.view.app import render as page

    params = {k: v for k, v in request.query_params.items() if v}
    rows = queries.run_rows(store_of(request).engine)
    tenants = sorted({r.tenant_id for r in rows})
    shown = [r for r in rows if _matches(r, params)]
    sort = params.get("sort", "created")
    descending = params.get("order", "desc" if sort in ("created", "cases") else "asc") == "desc"
    shown.sort(key=SORTS.get(sort, SORTS["created"]), reverse=descending)
    items = [
        {
            "row": r,
            "systems": render.run_systems(r.suite),
            "headline": render.headline_cells(r.aggregates),
        }
        for r in shown
    ]
    return page(
        request,
        "runs.html.j2",
        items=items,
        total=len(rows),
        params=params,
        tenants=tenants,
        run_types=RUN_TYPES,
        statuses=RUN_STATUSES,
        sort=sort,
        descending=descending,
    )


async def run_page(request: Request) -> Response:
    from clineval.view.app import render as page

    run_id = resolve(request, required(request, "run"))
    engine = store_of(request).engine
    row = queries.run_rows(engine, run_id)[0]
    order = [t.id for t in row.suite.tasks]
    tasks = render.task_views(row.aggregates, order)
    aggregates = {view.task_id: agg for view, agg in tasks}
    scorer_names = queries.scorer_names(engine, run_id, order)
    labels = queries.label_counts(engine, run_id, scorer_names)
    failures = queries.failure_kinds(engine, run_id)
    sections: list[dict[str, Any]] = []
    cards = render.scorecards(row.suite, aggregates)
    names = task_system_names(row.suite)
    for view, aggregate in tasks:
        charts, more_charts = render_tiers.split_charts(render.charts(view, aggregate), 2)
        sections.append(
            {
                "view": render_tiers.formatted_strata(view, aggregate),
                "system": names.get(view.task_id, ""),
                "tiers": render_tiers.with_percentages(
                    render_tiers.with_rule_intervals(cards.get(view.task_id, []), aggregate.scores),
                    aggregate.scores,
                ),
                "all_metrics": render_tiers.all_metrics(aggregate.scores),
                "charts": charts,
                "more_charts": more_charts,
                "labels": labels.get(view.task_id, {}),
                "failures": failures.get(view.task_id, {}),
                "counterfactual": view.task_id in (row.provenance.get("counterfactual") or {}),
            }
        )
    rule = rule_for(row.suite, [s["view"].task_id for s in sections], row.provenance)
    overall = render_tiers.all_metrics(row.overall) if rule.one_system else []
    if len(sections) == 1:
        overall = []  # one task: its own table says it all
    by_system = [(name, render_tiers.all_metrics(scores)) for name, scores in rule.by_system.items()]
    return page(
        request,
        "run.html.j2",
        run=row,
        systems=render.run_systems(row.suite),
        sections=sections,
        tiered=any(s["tiers"] for s in sections),
        overall=overall,
        overall_note=rule.note if len(sections) > 1 else "",
        overall_by_system=by_system,
        banners=render.banners(labels, failures, aggregates),
        **_review_context(request, run_id),
    )


def _review_context(request: Request, run_id: str) -> dict[str, Any]:
    """The agreement figures shown inline (when the adjudication module is installed)."""
    if not getattr(request.app.state, "review_installed", False):
        return {}
    try:
        from clineval.view.review.adjudication import adjudicated_metrics, history
        from clineval.view.review.agreement import run_agreement
    except ImportError:
        return {}
    store = store_of(request)
    # The page shows only metrics with a reviewed item: a run without a review has none, and computing them
    # reads every result (20 s for a 300,000-case run), so it is skipped then (the agreement page still does)
    reviewed = bool(history(store, run_id))
    return {
        "agreement": run_agreement(store, run_id),
        "adjudicated_metrics": adjudicated_metrics(store, run_id) if reviewed else [],
    }
