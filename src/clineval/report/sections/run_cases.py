"""A run's failures by kind and its sample cases, from its columns when it has them (a stored run of any
size: only the picked cases are read in full), else from its results (``report.cases``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from clineval.report.context import ReportContext
from clineval.report.sections.cases import (
    _WRONG_LABELS,
    KINDS,
    classify,
    failures_by_kind,
    in_turn,
    pick_cases,
)

if TYPE_CHECKING:
    import numpy as np

    from clineval.core import CaseResult, RunResult
    from clineval.core.helpers.columns import TaskColumns

Key = tuple[str, str]
MESSAGE_CHARS = 160  # of a message's first line (analysis.degradation.MESSAGE_CHARS)


def run_failures(run: RunResult) -> dict[str, dict[str, int]]:
    """``task_id -> error kind -> number of failed cases``, most frequent kind first."""
    if run.columns is None:
        return failures_by_kind(run.results)
    found: dict[str, dict[str, int]] = {}
    for task_id, columns in run.columns.items():
        counter = Counter(k for k in columns.error_kinds.tolist() if k is not None)
        if counter:
            found[task_id] = dict(counter.most_common())
    return found


def run_failure_messages(run: RunResult) -> dict[str, dict[str, str]]:
    """``task_id -> error kind -> the first line of its most frequent message``: what the run stored
    (``provenance["degradation"]``), else read from its results when it holds them in memory."""

    stored = run.info.provenance.get("degradation")
    if isinstance(stored, Mapping) and isinstance(stored.get("components"), list):
        found: dict[str, dict[str, str]] = {}
        for c in stored["components"]:
            messages = c.get("messages") if isinstance(c, Mapping) else None
            if c.get("component") == "system" and isinstance(messages, Mapping) and messages:
                found[str(c["task"])] = {str(k): str(m) for k, m in messages.items()}
        return found
    if run.columns is not None:  # a stored run finalized before messages were kept
        return {}
    said: dict[str, dict[str, Counter[str]]] = {}
    for result in run.results:  # a run in memory: as analysis.degradation counts them
        error = result.output.error
        lines = [part.strip() for part in (error.message if error else "").splitlines() if part.strip()]
        if error is not None and lines:
            counter = said.setdefault(result.task_id, {}).setdefault(error.kind, Counter())
            counter[lines[0][:MESSAGE_CHARS]] += 1
    return {task: {k: n.most_common(1)[0][0] for k, n in kinds.items()} for task, kinds in said.items()}


def _flags(labels: Iterable[Any], test: Any) -> np.ndarray:
    import numpy as np  # here: listing or summarising runs never imports numpy

    memo: dict[Any, bool] = {}
    return np.fromiter(
        (memo.setdefault(x, test(x)) if x not in memo else memo[x] for x in labels), dtype=bool
    )


def classify_columns(columns: TaskColumns) -> np.ndarray:
    """Each case's kind (``report.cases.classify``) as an index into ``KINDS``; -1 for a case that went
    right."""
    import numpy as np

    n = len(columns)
    unparsed, wrong = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    scored, scorable = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    for name, column in columns.scores.items():
        rows = columns.rows[name]
        labels = column.labels.tolist()
        unparsed[rows] |= _flags(labels, lambda x: (x or "").lower() == "unparsed")
        wrong[rows] |= _flags(labels, lambda x: (x or "").lower() in _WRONG_LABELS) | (column.values == 0.0)
        scored[rows] = True
        scorable[rows] |= column.scorable()
    kinds = np.full(n, -1, dtype=np.int8)
    for index, mask in reversed(list(enumerate((columns.failed, unparsed, scored & ~scorable, wrong)))):
        kinds[mask] = index  # reversed: the first kind that applies wins, as in classify
    return kinds


def pick_keys(run: RunResult, limit: int) -> list[tuple[str, Key]]:
    """Up to ``limit`` (kind, (task, case)) that went wrong, kinds taken in turn (``pick_cases``)."""
    import numpy as np

    by_kind: dict[str, list[Key]] = {kind: [] for kind in KINDS}
    for task_id, columns in (run.columns or {}).items():
        kinds = classify_columns(columns)
        for index, kind in enumerate(KINDS):
            room = limit - len(by_kind[kind])
            if room > 0:
                rows = np.flatnonzero(kinds == index)[:room].tolist()
                by_kind[kind] += [(task_id, columns.case_ids[i]) for i in rows]
    return in_turn(by_kind, limit)


def run_picks(run: RunResult, limit: int, context: ReportContext) -> list[tuple[str, CaseResult]]:
    """The sample cases a report shows, read in full (only these)."""
    if limit <= 0:
        return []
    if run.columns is None:
        return pick_cases(run.results, limit)
    picked = pick_keys(run, limit)
    wanted = {key for _, key in picked}
    if context.load_results is not None:
        loaded: Mapping[Key, CaseResult] = context.load_results(wanted)
    else:  # one pass over the results, keeping only the picked ones
        loaded = {(r.task_id, r.case_id): r for r in run.results if (r.task_id, r.case_id) in wanted}
    return [(kind, loaded[key]) for kind, key in picked if key in loaded and classify(loaded[key]) == kind]
