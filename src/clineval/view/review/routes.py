"""The viewer's adjudication routes (mounted by ``clineval.view.app.create_app``); the run, task and case
are named in the query string (``clineval.view.urls`` says why):

- ``POST /run/case/adjudicate?run=R&task=T&case=C`` (form: ``reviewer``, ``item_key``, ``verdict``,
  ``corrected_value``, ``comment`` and the CSRF field): records one review, then 303 back to the case's
  review panel; an invalid review (a reviewer name over 200 characters, a comment over 10,000, a NUL...) is
  a 400 page saying why above the form, which keeps what was typed;
- ``GET /run/case/review?run=R&task=T&case=C``: the review panel of one case with its history;
- ``GET /run/review?run=R&kind=...&seed=0&n=20``: the review queue;
- ``GET /run/agreement?run=R``: the agreement figures and the adjudicated metrics.

Every page is rendered by Jinja2 with autoescaping: case text and reviewer comments are inert.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from clineval.core import RunNotFoundError, UserInputError
from clineval.store import ResultStore
from clineval.view import queries, security
from clineval.view.params import int_param
from clineval.view.review.adjudication import (
    LIMITS,
    AdjudicationError,
    adjudicated_metrics,
    history,
    load_case,
    record,
)
from clineval.view.review.agreement import run_agreement
from clineval.view.review.items import items_for
from clineval.view.review.queue import QUEUE_KINDS, review_queue
from clineval.view.urls import PATHS, case_link, link, visible

TEMPLATES = Path(__file__).parents[1] / "templates"


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    env.globals["link"] = link
    env.globals["case_link"] = case_link
    env.filters["visible"] = visible
    env.globals["limits"] = LIMITS
    return env


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


def _ids(request: Request, *names: str) -> list[str]:
    """The query parameters ``names`` (checked by ``clineval.view.params``); 400 when one is missing."""
    missing = [n for n in names if not request.query_params.get(n)]
    if missing:
        raise HTTPException(400, f"parameter {missing[0]!r} is required")
    return [request.query_params[n] for n in names]


def routes(store_url: str) -> list[Route]:
    """The adjudication routes over the store at ``store_url`` (opened on first use)."""

    @cache
    def store() -> ResultStore:
        return ResultStore(store_url, must_exist=True)

    def resolved(run_id: str) -> str:
        return store().resolve_run_id(run_id)

    def storable(*ids: str) -> bool:
        return queries.storable(store().engine, *ids)

    async def adjudicate(request: Request) -> Response:
        form = await request.form()
        security.check_csrf(request, form)
        run_id, task_id, case_id = _ids(request, "run", "task", "case")

        def field(name: str) -> str:
            value = form.get(name)
            return value if isinstance(value, str) else ""

        try:
            if not storable(task_id, case_id):
                raise AdjudicationError(f"no case {task_id}/{case_id} in run {run_id}")
            record(
                store(),
                resolved(run_id),
                task_id,
                case_id,
                item_key=field("item_key"),
                verdict=field("verdict") or "agree",
                reviewer=field("reviewer"),
                corrected_value=field("corrected_value") or None,
                comment=field("comment"),
            )
        except (AdjudicationError, RunNotFoundError) as err:
            typed = {
                "reviewer": field("reviewer"),
                "comment": field("comment"),
                "item_key": field("item_key"),
            }
            return _panel(request, run_id, task_id, case_id, error=err.problem, typed=typed, status=400)
        return RedirectResponse(case_link(run_id, task_id, case_id, "review"), status_code=303)

    def _panel(
        request: Request,
        run_id: str,
        task_id: str,
        case_id: str,
        *,
        error: str | None = None,
        typed: dict[str, str] | None = None,
        status: int = 200,
    ) -> HTMLResponse:
        try:
            if not storable(task_id, case_id):
                raise AdjudicationError(f"no case {task_id}/{case_id} in run {run_id}")
            result = load_case(store(), resolved(run_id), task_id, case_id)
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
            f"Review {visible(task_id)} / {visible(case_id)}",
            "review/panel.html.j2",
            status,
            error=error,
            typed=typed or {},
            run_id=run_id,
            task_id=task_id,
            case_id=case_id,
            result=result.model_dump(mode="json"),
            review_items=items_for(result),
            review_history=history(store(), resolved(run_id), task_id, case_id),
        )

    async def case_review(request: Request) -> Response:
        return _panel(request, *_ids(request, "run", "task", "case"))

    async def queue(request: Request) -> Response:
        (run_id,) = _ids(request, "run")
        kinds = request.query_params.getlist("kind") or list(QUEUE_KINDS)
        params = request.query_params
        seed, n = int_param(params.get("seed"), 0), int_param(params.get("n"), 20)
        context: dict[str, Any] = {
            "run_id": run_id,
            "kinds": kinds,
            "all_kinds": QUEUE_KINDS,
            "seed": seed,
            "n": n,
        }
        try:
            entries = review_queue(store(), resolved(run_id), kinds, seed=seed, n=n)
        except UserInputError as err:
            status = 404 if isinstance(err, RunNotFoundError) else 400
            return _page(
                request,
                "Review queue",
                "review/queue.html.j2",
                status,
                error=err.problem,
                entries=[],
                **context,
            )
        return _page(
            request, f"Review queue — run {run_id[:12]}", "review/queue.html.j2", entries=entries, **context
        )

    async def agreement(request: Request) -> Response:
        (run_id,) = _ids(request, "run")
        try:
            full = resolved(run_id)
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
        Route(PATHS["adjudicate"], adjudicate, methods=["POST"]),
        Route(PATHS["case_review"], case_review, methods=["GET"]),
        Route(PATHS["queue"], queue, methods=["GET"]),
        Route(PATHS["agreement"], agreement, methods=["GET"]),
    ]
