"""The ``clineval view`` ASGI app: Starlette routes over one store, Jinja2 pages (autoescaped).

Every link a page writes comes from ``clineval.view.urls.link`` (ids in the query string, percent-encoded;
the module says why). Adjudication lives in another module: when ``clineval.view.review.routes`` exists, its
``routes(store_url)`` are mounted beside these, and the case page includes ``review/panel.html.j2`` if that
template exists.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from clineval.store import ResultStore
from clineval.view import pages, pages_cases, pages_compare, pages_counterfactual
from clineval.view.review.adjudication import LIMITS
from clineval.view.security import GuardMiddleware, csrf_field, new_secret
from clineval.view.urls import PATHS, case_link, legacy_routes, link, visible

HERE = Path(str(resources.files("clineval.view")))


def _templates() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(HERE / "templates")),
        autoescape=select_autoescape(["html", "j2", "html.j2"], default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["csrf_field"] = csrf_field
    env.globals["link"] = link
    env.globals["case_link"] = case_link
    env.filters["visible"] = visible
    env.globals["limits"] = LIMITS
    env.filters["dict_without"] = lambda d, *keys: {k: v for k, v in d.items() if k not in keys}
    return env


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A page: ``template`` with ``request`` and the app's flags in its context (``link`` is a global)."""
    env: Environment = request.app.state.templates
    html = env.get_template(template).render(
        request=request,
        read_only=request.app.state.read_only,
        review_installed=request.app.state.review_installed,
        **context,
    )
    return HTMLResponse(html, status_code=status)


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
    return render(request, "error.html.j2", status=status, status_code=status, detail=detail)


def _review_routes(store_url: str) -> list[BaseRoute]:
    try:
        from clineval.view.review import routes as review_routes  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return []
    return list(review_routes.routes(store_url))


def create_app(store_url: str, *, token: str | None = None, read_only: bool = False) -> Starlette:
    """The viewer over the store at ``store_url`` (which must exist: a read-only command never creates one).

    Raises ``UserInputError`` (one line for the CLI) when the store is missing or malformed.
    """
    store = ResultStore(store_url, read_only=True)  # pages only read; reviews are saved by review_routes
    routes: list[BaseRoute] = [
        Route(PATHS["runs"], pages.runs_page, name="runs"),
        Route(PATHS["run"], pages.run_page, name="run"),
        Route(PATHS["cases"], pages_cases.cases_page, name="cases"),
        Route(PATHS["case"], pages_cases.case_page, name="case"),
        Route(PATHS["case_output"], pages_cases.case_output_page, name="case_output"),
        Route(PATHS["compare"], pages_compare.compare_page, name="compare"),
        Route(PATHS["leaderboard"], pages_compare.leaderboard_page, name="leaderboard"),
        Route(PATHS["trends"], pages_compare.trends_page, name="trends"),
        Route(PATHS["counterfactual"], pages_counterfactual.counterfactual_page, name="counterfactual"),
        Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
        *legacy_routes(),
    ]
    extra = _review_routes(store_url)
    app = Starlette(
        routes=extra + routes,
        middleware=[Middleware(GuardMiddleware, token=token, read_only=read_only)],  # type: ignore[arg-type]
        exception_handlers={HTTPException: _http_error, 500: _http_error},
    )
    app.state.store = store
    app.state.store_url = store_url
    app.state.templates = _templates()
    app.state.csrf_secret = new_secret()
    app.state.read_only = read_only
    app.state.review_installed = bool(extra)
    return app
