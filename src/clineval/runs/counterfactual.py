"""Finalize's counterfactual step (issue 27): each task with the ``counterfactual`` option is analysed from
its stored results (``clineval.counterfactual.task``); the analysis goes to ``provenance["counterfactual"]``
(``report.json["counterfactual"][task]``) and its gate metrics to the task's scores."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clineval.core import RunInfo, TaskAggregate
from clineval.counterfactual.paired import Outcome
from clineval.counterfactual.task import CounterfactualOption, analyse_outcomes, outcomes_from_results
from clineval.store import ResultStore

KEY = "counterfactual"


def options_of(info: RunInfo) -> dict[str, CounterfactualOption]:
    """``task id -> option`` of the run's counterfactual tasks (validated when the suite was loaded)."""
    return {
        t.id: CounterfactualOption.model_validate(t.counterfactual)
        for t in info.suite.tasks
        if t.counterfactual is not None
    }


def add_counterfactual(
    store: ResultStore,
    info: RunInfo,
    aggregates: Mapping[str, TaskAggregate],
    provenance: dict[str, Any],
) -> dict[str, TaskAggregate]:
    """The aggregates with each counterfactual task's gate metrics added; the analyses in ``provenance``.
    Results are read once, one at a time, and reduced to outcomes (a few fields per case)."""
    options = options_of(info)
    out = dict(aggregates)
    if not options:
        return out
    scorers = {t.id: (options[t.id].scorer or t.scorers[0].type) for t in info.suite.tasks if t.id in options}
    outcomes: dict[str, list[Outcome]] = {task: [] for task in options}
    for result in store.iter_results(info.run_id):
        option = options.get(result.task_id)
        if option is not None:
            outcomes[result.task_id] += outcomes_from_results([result], option, scorers[result.task_id])
    found: dict[str, Any] = {}
    for task, option in options.items():
        analysis = analyse_outcomes(option, outcomes[task], scorers[task])
        found[task] = analysis
        agg = out.get(task)
        if agg is not None and analysis["gate_metrics"]:
            out[task] = agg.model_copy(update={"scores": {**agg.scores, **analysis["gate_metrics"]}})
    provenance[KEY] = found
    return out
