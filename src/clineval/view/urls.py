"""Every link the viewer writes, built by one function: ids travel in the query string, never in the path.

A page is named by a fixed path; what it shows is named by query parameters (``run``, ``task``, ``case``)::

    /run?run=R                                  the run page
    /run/cases?run=R[&task=T&label=...]         the cases table
    /run/case?run=R&task=T&case=C               one case
    /run/case/output?run=R&task=T&case=C        its whole output, as plain text
    /run/case/review?run=R&task=T&case=C        its review panel
    /run/case/adjudicate?run=R&task=T&case=C    POST: record a review of it
    /run/review?run=R[&kind=...]                the review queue
    /run/agreement?run=R                        agreement figures and adjudicated metrics
    /run/counterfactual?run=R&task=T[&pair=P]   a task's flipped counterfactual pairs, side by side

Why the query and not the path: ids are data. A task is ``mmlu/anatomy``; a case may be ``..``, ``a?b#c``,
``50%``, ``ünï`` or hold a NUL (a SQLite store keeps what the dataset said; a shard's ``--run-id`` is any
1-64 characters). In a path, ``/`` splits segments (even written ``%2F``: Starlette decodes it before
routing) and a browser drops ``.`` and ``..`` segments (``%2e%2e`` too, per the WHATWG URL standard) before
sending the request, so the link of case ``..`` would open another page. A query value is never normalised:
every value is percent-encoded with no safe character (``quote(v, safe="")``), so it comes back exactly as
written.

On a page, an id is shown through ``visible`` (a NUL drawn as U+2400); links and forms carry it exactly.

The old path forms (``/runs/<run>``, ``/runs/<run>/cases/<task>/<case>``, ...) answer with a redirect to
these (for bookmarks and scripts); the viewer never writes them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

PATHS = {
    "runs": "/",
    "run": "/run",
    "cases": "/run/cases",
    "case": "/run/case",
    "case_output": "/run/case/output",
    "case_review": "/run/case/review",
    "adjudicate": "/run/case/adjudicate",
    "queue": "/run/review",
    "agreement": "/run/agreement",
    "counterfactual": "/run/counterfactual",
    "compare": "/compare",
    "leaderboard": "/leaderboard",
    "trends": "/trends",
}


def link(page: str, fragment: str = "", /, **params: object) -> str:
    """The URL of ``page`` (a key of ``PATHS``, or ``static/<file>``) with ``params`` in its query.

    ``None`` values are left out; lists repeat the parameter; everything else is ``str()``-ed and
    percent-encoded whole (``/``, ``?``, ``#``, ``%``, ``.``, NUL, spaces, non-ASCII included).
    """
    path = "/" + quote(page, safe="/") if page.startswith("static/") else PATHS[page]
    pairs = [
        (name, str(v))
        for name, value in params.items()
        if value is not None
        for v in (value if isinstance(value, list | tuple) else [value])
    ]
    query = urlencode(pairs, quote_via=quote, safe="") if pairs else ""
    return path + ("?" + query if query else "") + ("#" + quote(fragment, safe="") if fragment else "")


def case_link(run_id: str, task_id: str, case_id: str, fragment: str = "") -> str:
    return link("case", fragment, run=run_id, task=task_id, case=case_id)


_PICTURES = {c: 0x2400 + c for c in range(0x20)} | {0x7F: 0x2421}


def visible(text: object) -> str:
    """An id as a page shows it: control characters drawn as their Unicode pictures (NUL as U+2400), which
    the HTML parser would otherwise drop or replace. Links and form fields carry the id itself."""
    return str(text).translate(_PICTURES)


# -- the old path forms: a redirect to the query form ---------------------------------------------------


def _redirect(request: Request, page: str, **ids: str) -> Response:
    extra = [(k, v) for k, v in request.query_params.multi_items() if k not in ids]
    query = urlencode([*ids.items(), *extra], quote_via=quote, safe="")
    return RedirectResponse(f"{PATHS[page]}?{query}", status_code=307)


def _to(page: str, *names: str) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        p = request.path_params
        return _redirect(
            request, page, **{n: p[k] for n, k in zip(("run", "task", "case"), names, strict=False)}
        )

    return endpoint


def legacy_routes() -> list[Route]:
    """``/runs/{run}...`` (the path forms before the query scheme), each redirecting (307) to its page."""
    case = ("run_id", "task_id", "case_id")
    return [
        Route("/runs/{run_id}", _to("run", "run_id")),
        Route("/runs/{run_id}/cases", _to("cases", "run_id")),
        Route("/runs/{run_id}/review", _to("queue", "run_id")),
        Route("/runs/{run_id}/agreement", _to("agreement", "run_id")),
        Route("/runs/{run_id}/cases/{task_id}/{case_id:path}/review", _to("case_review", *case)),
        Route("/runs/{run_id}/cases/{task_id}/{case_id:path}", _to("case", *case)),
    ]
