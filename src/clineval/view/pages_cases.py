"""The cases table (paginated in SQL, filtered by label, stratum, failure kind, text) and the case page."""

from __future__ import annotations

import json
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from clineval.core import CaseResult, SuiteSpec
from clineval.report.sections.cases import classify, excerpt
from clineval.view import queries, queries_inputs
from clineval.view.pages import required, resolve, store_of
from clineval.view.params import int_param
from clineval.view.renderers import case as render_case
from clineval.view.security import csrf_field

EXCERPT_CHARS = 140
EAGER_DATASET_CASES = 20_000


def _short(text: str, limit: int = EXCERPT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _row(row_id: int, result: CaseResult, inputs: queries_inputs.DatasetInputs | None) -> dict[str, Any]:
    case_input = inputs.inputs.get(result.case_id) if inputs else None
    answers = [s.breakdown.get("extracted") for s in result.scores.values() if "extracted" in s.breakdown]
    return {
        "id": row_id,
        "result": result,
        "question": _short(queries_inputs.question_text(case_input)) if case_input else "",
        "answer": next((str(a) for a in answers if a), ""),
        "output": excerpt(result, EXCERPT_CHARS),
        "labels": [(name, s.label or f"{s.value:.3g}") for name, s in result.scores.items()],
        "failure": result.output.error.kind if result.output.error else "",
        "kind": classify(result) or "",
    }


def _inputs(
    suite: SuiteSpec, task_id: str, provenance: dict[str, Any]
) -> queries_inputs.DatasetInputs | None:
    """A small task's dataset is loaded for the question column; a large one only once a case page did."""
    size = (provenance.get("task_sizes") or {}).get(task_id)
    if isinstance(size, int) and size <= EAGER_DATASET_CASES:
        return queries_inputs.dataset_inputs(suite, task_id)
    return queries_inputs.cached_inputs(suite, task_id)


async def cases_page(request: Request) -> Response:
    from clineval.view.app import render as page

    run_id = resolve(request, required(request, "run"))
    store = store_of(request)
    info = store.get_run(run_id)
    params = request.query_params
    if not queries.storable(store.engine, params.get("task", "")):
        raise HTTPException(404, f"no task {params['task']!r} in run {run_id}")
    flt = queries.CaseFilter(
        task=params.get("task") or None,
        label=params.get("label") or None,
        stratum=params.get("stratum") or None,
        failure=params.get("failure") or None,
        text=params.get("q") or None,
    )
    if flt.text:  # the inputs are not in the store: match them in the datasets already loaded
        ids = [
            i
            for t in info.suite.tasks
            if (cached := queries_inputs.cached_inputs(info.suite, t.id)) is not None
            for i in queries_inputs.matching_ids(cached, flt.text)
        ]
        flt = queries.CaseFilter(**{**flt.__dict__, "case_ids": tuple(ids) or None})
    page_no = int_param(params.get("page"), 1)
    after = int(params["after"]) if params.get("after") else None
    found = queries.case_page(store.engine, run_id, flt, page=page_no, after=after)
    inputs = {t.id: _inputs(info.suite, t.id, info.provenance) for t in info.suite.tasks}
    rows = [_row(i, r, inputs.get(r.task_id)) for i, r in found.rows]
    first = (page_no - 1) * queries.PAGE_SIZE + 1 if after is None else None
    return page(
        request,
        "cases.html.j2",
        info=info,
        run_id=run_id,
        rows=rows,
        found=found,
        flt=flt,
        params={("q" if k == "text" else k): v for k, v in flt.as_params().items()},
        first=first,
        page_no=page_no if after is None else None,
        tasks=[t.id for t in info.suite.tasks],
        page_size=queries.PAGE_SIZE,
    )


async def case_page(request: Request) -> Response:
    from clineval.view.app import render as page

    run, task_id, case_id = (required(request, name) for name in ("run", "task", "case"))
    run_id = resolve(request, run)
    store = store_of(request)
    found = queries.storable(store.engine, task_id, case_id)
    result = queries.one_case(store.engine, run_id, task_id, case_id) if found else None
    if result is None:
        raise HTTPException(404, f"no case {case_id!r} of task {task_id!r} in run {run_id}")
    info = store.get_run(run_id)
    inputs = queries_inputs.dataset_inputs(info.suite, task_id)
    full = render_case.output_text(result.output)
    raw, cut = render_case.clipped(full)  # a huge output: its start here, the whole at the raw-text link
    text = raw if cut else render_case.pretty(raw)
    shown, span_found = render_case.highlighted(text, render_case.answer_span(result))
    if not span_found and text != raw:
        shown, span_found = render_case.highlighted(raw, render_case.answer_span(result))
    structured = result.output.structured if result.output.text else None
    structured_json, structured_cut = render_case.clipped(
        "" if structured is None else _json(structured.model_dump(mode="json", exclude_none=True))
    )
    return page(
        request,
        "case.html.j2",
        info=info,
        run_id=run_id,
        task_id=task_id,
        case_id=case_id,
        result=result,
        result_dict=result.model_dump(mode="json"),
        csrf_input=lambda: csrf_field(request),
        case_input=inputs.inputs.get(case_id),
        input_problem=inputs.problem,
        output_html=shown,
        output_cut=cut,
        output_chars=(len(raw), len(full)),
        structured_json=structured_json,
        structured_cut=structured_cut,
        span_found=span_found,
        scores=render_case.score_views(result),
        metadata=sorted(result.metadata.items()),
        kind=classify(result) or "",
        review_history=_history(request, run_id, task_id, case_id),
    )


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


async def case_output_page(request: Request) -> Response:
    """The whole output of a case as plain text (what the case page cuts at ``OUTPUT_LIMIT``; ``part=
    structured``: its structured output as JSON); the viewer's middleware adds its security headers
    (``nosniff``: never rendered as anything but text)."""
    run, task_id, case_id = (required(request, name) for name in ("run", "task", "case"))
    run_id = resolve(request, run)
    engine = store_of(request).engine
    result = (
        queries.one_case(engine, run_id, task_id, case_id)
        if queries.storable(engine, task_id, case_id)
        else None
    )
    if result is None:
        raise HTTPException(404, f"no case {case_id!r} of task {task_id!r} in run {run_id}")
    structured = result.output.structured
    if request.query_params.get("part") == "structured" and structured is not None:
        text = _json(structured.model_dump(mode="json", exclude_none=True))
    else:
        text = render_case.output_text(result.output)
    return PlainTextResponse(text, media_type="text/plain; charset=utf-8")


def _history(request: Request, run_id: str, task_id: str, case_id: str) -> list[Any]:
    """The case's stored reviews, oldest first ([] when the adjudication module is not installed)."""
    if not getattr(request.app.state, "review_installed", False):
        return []
    try:
        from clineval.view.review.adjudication import history
    except ImportError:
        return []
    return history(store_of(request), run_id, task_id, case_id)
