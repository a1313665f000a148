"""Compare two runs (``clineval compare``'s paired statistics), the leaderboard, and trends."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from clineval.core import UserInputError
from clineval.report.formatting import fmt_value, is_proportion
from clineval.view import queries, queries_trends
from clineval.view.pages import resolve, store_of
from clineval.view.renderers import board as render_board
from clineval.view.renderers import trends as render_trends

MAX_CHANGES = 500


def fmt(metric: str, value: float) -> str:
    if value != value:
        return "—"
    return f"{value * 100:.1f}%" if is_proportion(metric) else f"{value:.4f}"


def fmt_delta(metric: str, value: float) -> str:
    if value != value:
        return "—"
    return f"{value * 100:+.1f} pt" if is_proportion(metric) else f"{value:+.4f}"


def fmt_ci(metric: str, ci: tuple[float, float]) -> str:
    return f"[{fmt_delta(metric, ci[0])}, {fmt_delta(metric, ci[1])}]"


async def compare_page(request: Request) -> Response:
    from clineval.releases import gate as releases
    from clineval.view.app import render as page

    a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
    common = request.query_params.get("common") == "1"
    if not a or not b:
        return page(request, "compare.html.j2", comparison=None, error=None, a=a, b=b, common=common)
    run_a, run_b = resolve(request, a), resolve(request, b)
    try:
        comparison = releases.compare_runs(request.app.state.store_url, run_a, run_b, intersection=common)
    except UserInputError as err:
        return page(request, "compare.html.j2", comparison=None, error=err.render(), a=a, b=b, common=common)
    b_tasks = [t.id for t in store_of(request).get_run(run_b).suite.tasks]
    tasks = []
    for task in comparison.tasks:
        task_b = task.task_id if task.task_id in b_tasks or len(b_tasks) != 1 else b_tasks[0]
        tasks.append({"task": task, "task_b": task_b, "changes": task.changes[:MAX_CHANGES]})
    return page(
        request,
        "compare.html.j2",
        comparison=comparison,
        tasks=tasks,
        error=None,
        a=run_a,
        b=run_b,
        common=common,
        fmt=fmt,
        fmt_delta=fmt_delta,
        fmt_ci=fmt_ci,
        max_changes=MAX_CHANGES,
    )


async def leaderboard_page(request: Request) -> Response:
    from clineval.view.app import render as page

    wanted = [r.strip() for r in request.query_params.get("runs", "").split(",") if r.strip()]
    engine = store_of(request).engine
    all_runs = queries.run_rows(engine)
    if wanted:
        ids = [resolve(request, r) for r in wanted]
        chosen = [r for i in dict.fromkeys(ids) for r in all_runs if r.run_id == i]
    else:
        chosen = [r for r in all_runs if r.aggregates][:10]
    board = render_board.build_board(chosen)
    return page(
        request, "leaderboard.html.j2", board=board, runs=chosen, all_runs=all_runs, cell=render_board.cell
    )


async def trends_page(request: Request) -> Response:
    from clineval.view.app import render as page

    engine = store_of(request).engine
    tenants, metrics = queries_trends.choices(engine)
    tenant = request.query_params.get("tenant") or (tenants[0] if tenants else "")
    metric = request.query_params.get("metric") or (
        "accuracy" if "accuracy" in metrics else metrics[0] if metrics else ""
    )
    condition = request.query_params.get("condition") or None
    if tenant and tenants and tenant not in tenants:
        raise HTTPException(404, f"no eval_results rows for tenant {tenant!r}")
    points = queries_trends.trend(engine, tenant, metric, condition) if tenant and metric else []
    marks = queries_trends.markers(engine, tenant) if tenant else []
    return page(
        request,
        "trends.html.j2",
        tenants=tenants,
        metrics=metrics,
        tenant=tenant,
        metric=metric,
        condition=condition or "",
        points=points,
        marks=marks,
        chart=render_trends.line_chart(metric, points, marks),
        fmt=fmt_value,
        tasks=list(render_trends.series(points)),
    )
