"""The counterfactual page (issue 27): a task's flipped pairs, both vignettes side by side.

``/run/counterfactual?run=R&task=T[&pair=a|b]``. The pairs are the ones finalize listed in the run's
``provenance["counterfactual"][task]["pairs"][pair]["flipped"]`` (case ids; at most
``clineval.counterfactual.task.MAX_LISTED`` per pair, the page says when there are more). Each side links
to its case page, where a reviewer adjudicates it like any other case. Every id travels in the query
string (``clineval.view.urls.link``) and every text is autoescaped by the template.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from clineval.core import CaseResult
from clineval.view import queries_inputs
from clineval.view.pages import required, resolve, store_of

VIGNETTE_CHARS = 4000


def _side(
    result: CaseResult | None, inputs: queries_inputs.DatasetInputs | None, case_id: str
) -> dict[str, Any]:
    case_input = inputs.inputs.get(case_id) if inputs else None
    question = queries_inputs.question_text(case_input) if case_input else ""
    if result is None:
        return {
            "case_id": case_id,
            "question": question[:VIGNETTE_CHARS],
            "answer": "",
            "labels": [],
            "output": "",
        }
    answers = [s.breakdown.get("extracted") for s in result.scores.values() if "extracted" in s.breakdown]
    text = result.output.text or ""
    return {
        "case_id": case_id,
        "question": question[:VIGNETTE_CHARS],
        "answer": next((str(a) for a in answers if a), ""),
        "labels": [(name, s.label or f"{s.value:.3g}") for name, s in result.scores.items()],
        "output": text[:VIGNETTE_CHARS],
    }


async def counterfactual_page(request: Request) -> Response:
    from clineval.view.app import render as page

    run_id = resolve(request, required(request, "run"))
    task = required(request, "task")
    store = store_of(request)
    info = store.get_run(run_id)
    analysis = (info.provenance.get("counterfactual") or {}).get(task)
    if not isinstance(analysis, dict):
        raise HTTPException(404, f"task {task!r} of run {run_id} has no counterfactual analysis")
    pairs: dict[str, Any] = analysis.get("pairs", {})
    chosen = request.query_params.get("pair") or next(iter(pairs), "")
    if chosen not in pairs:
        raise HTTPException(404, f"no pair {chosen!r} in task {task!r}")
    row = pairs[chosen]
    flipped = [tuple(p) for p in row.get("flipped", [])]
    keys = [(task, case_id) for pair in flipped for case_id in pair]
    results = store.results_for(run_id, keys) if keys else {}
    inputs = queries_inputs.cached_inputs(info.suite, task) or queries_inputs.dataset_inputs(info.suite, task)
    items = [
        {"a": _side(results.get((task, a)), inputs, a), "b": _side(results.get((task, b)), inputs, b)}
        for a, b in flipped
    ]
    return page(
        request,
        "counterfactual.html.j2",
        run_id=run_id,
        task=task,
        pair=chosen,
        pair_names=list(pairs),
        row=row,
        items=items,
        more=int(row.get("n_flipped") or 0) - len(items),
    )
