"""The viewer's adjudication routes (mounted by ``clineval.view.app.create_app``):

- ``POST /runs/{run_id}/cases/{task_id}/{case_id}/adjudicate`` (form: ``reviewer``, ``item_key``,
  ``verdict``, ``corrected_value``, ``comment`` and the CSRF field): records one review, then 303 back
  to the case's review panel; an invalid review is a 400 page saying why;
- ``GET /runs/{run_id}/cases/{task_id}/{case_id}/review``: the review panel of one case with its history;
- ``GET /runs/{run_id}/review?kind=...&seed=0&n=20``: the review queue;
- ``GET /runs/{run_id}/agreement``: the agreement figures and the adjudicated metrics.

Every page is rendered by Jinja2 with autoescaping: case text and reviewer comments are inert.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from clineval.core import RunNotFoundError, UserInputError
from clineval.store import ResultStore
from clineval.view import security
from clineval.view.adjudication import (
    AdjudicationError,
    adjudicated_metrics,
    history,
    load_case,
    record,
)
from clineval.view.agreement import run_agreement
from clineval.view.review_items import items_for
from clineval.view.review_queue import QUEUE_KINDS, review_queue

TEMPLATES = Path(__file__).parent / "templates"


@cache
def environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )


def case_url(run_id: str, task_id: str, case_id: str) -> str:
    return "/runs/{}/cases/{}/{}".format(*(quote(p, safe="") for p in (run_id, task_id, case_id)))


def _page(request: Request, title: str, partial: str, status: int = 200, **context: Any) -> HTMLResponse:
    def csrf_field() -> Markup:
        return security.csrf_field(request)

    if getattr(request.app.state, "templates", None) is not None:  # inside `clineval view`: its layout
        from clineval.view.app import render

        return render(
            request,
            "review/page.html.j2",
            status,
            title=title,
            partial=partial,
            csrf_field=csrf_field,
            **context,
        )
    html = (
        environment()
        .get_template("review/bare.html.j2")
        .render(title=title, partial=partial, csrf_field=csrf_field, **context)
    )
    return HTMLResponse(html, status_code=status)


def _int(value: str | None, default: int, name: str) -> int:
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise UserInputError(f"{name} must be an integer, got {value!r}") from None


def routes(store_url: str) -> list[Route]:
    """The adjudication routes over the store at ``store_url`` (opened on first use)."""

    @cache
    def store() -> ResultStore:
        return ResultStore(store_url, must_exist=True)

    def _run_id(request: Request) -> str:
        return store().resolve_run_id(request.path_params["run_id"])

    async def adjudicate(request: Request) -> Response:
        form = await request.form()
        security.check_csrf(request, form)
        run_id, task_id, case_id = (request.path_params[k] for k in ("run_id", "task_id", "case_id"))

        def field(name: str) -> str:
            value = form.get(name)
            return value if isinstance(value, str) else ""

        try:
            record(
                store(),
                _run_id(request),
                task_id,
                case_id,
                item_key=field("item_key"),
                verdict=field("verdict") or "agree",
                reviewer=field("reviewer"),
                corrected_value=field("corrected_value") or None,
                comment=field("comment"),
            )
        except (AdjudicationError, RunNotFoundError) as err:
            return _panel(request, run_id, task_id, case_id, error=err.problem, status=400)
        return RedirectResponse(case_url(run_id, task_id, case_id) + "#review", status_code=303)

    def _panel(
        request: Request,
        run_id: str,
        task_id: str,
        case_id: str,
        *,
        error: str | None = None,
        status: int = 200,
    ) -> HTMLResponse:
        try:
            result = load_case(store(), _run_id(request), task_id, case_id)
        except (AdjudicationError, RunNotFoundError) as err:
            return _page(
                request,
                "Review",
                "review/queue.html.j2",
                404,
                error=err.problem,
                run_id=run_id,
                entries=[],
                kinds=[],
                all_kinds=QUEUE_KINDS,
                seed=0,
                n=20,
            )
        return _page(
            request,
            f"Review {task_id} / {case_id}",
            "review/panel.html.j2",
            status,
            error=error,
            run_id=run_id,
            task_id=task_id,
            case_id=case_id,
            result=result.model_dump(mode="json"),
            review_items=items_for(result),
            review_history=history(store(), _run_id(request), task_id, case_id),
        )

    async def case_review(request: Request) -> Response:
        p = request.path_params
        return _panel(request, p["run_id"], p["task_id"], p["case_id"])

    async def queue(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        kinds = request.query_params.getlist("kind") or list(QUEUE_KINDS)
        params = request.query_params
        context = {"run_id": run_id, "kinds": kinds, "all_kinds": QUEUE_KINDS, "entries": []}
        try:
            seed, n = _int(params.get("seed"), 0, "seed"), min(_int(params.get("n"), 20, "n"), 1000)
            context.update(seed=seed, n=n)
            context["entries"] = review_queue(store(), _run_id(request), kinds, seed=seed, n=n)
        except UserInputError as err:
            context.setdefault("seed", 0)
            context.setdefault("n", 20)
            return _page(request, "Review queue", "review/queue.html.j2", 400, error=err.problem, **context)
        return _page(request, f"Review queue — run {run_id[:12]}", "review/queue.html.j2", **context)

    async def agreement(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        try:
            full = _run_id(request)
        except RunNotFoundError as err:
            return _page(
                request,
                "Agreement",
                "review/agreement.html.j2",
                404,
                error=err.problem,
                run_id=run_id,
                agreement=[],
                adjudicated_metrics=[],
            )
        return _page(
            request,
            f"Agreement — run {run_id[:12]}",
            "review/agreement.html.j2",
            run_id=run_id,
            agreement=run_agreement(store(), full),
            adjudicated_metrics=adjudicated_metrics(store(), full),
        )

    return [
        Route("/runs/{run_id}/cases/{task_id}/{case_id:path}/adjudicate", adjudicate, methods=["POST"]),
        Route("/runs/{run_id}/cases/{task_id}/{case_id:path}/review", case_review, methods=["GET"]),
        Route("/runs/{run_id}/review", queue, methods=["GET"]),
        Route("/runs/{run_id}/agreement", agreement, methods=["GET"]),
    ]
