"""The inputs (question, options) of a report's sample cases, read back from each task's dataset file.

A stored run keeps outputs and scores, not the case inputs. For the sample cases a report shows, each
task's dataset is loaded again from the stored spec (paths relative to the suite file) and used only when
its content hash equals the stored one, so a report never shows a question from a file that has changed
since the run. Anything that cannot be read (a moved file, an unknown format) gives no inputs for that
task: the report shows the cases without their question.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clineval.report.context import DatasetLoader

if TYPE_CHECKING:
    from clineval.core import RunResult


def case_inputs(
    run: RunResult, wanted: Iterable[tuple[str, str]], load: DatasetLoader | None
) -> dict[tuple[str, str], Any]:
    """``(task_id, case_id) -> CaseInput`` for the ``wanted`` cases whose dataset ``load`` reads back
    unchanged (None: no loader given, no inputs)."""
    if load is None:
        return {}
    by_task: dict[str, set[str]] = {}
    for task_id, case_id in wanted:
        by_task.setdefault(task_id, set()).add(case_id)
    if not by_task:
        return {}
    source = run.info.suite.source
    base = Path(source).parent if source else Path.cwd()
    found: dict[tuple[str, str], Any] = {}
    for task in run.info.suite.tasks:
        ids = by_task.get(task.id)
        if not ids or not task.dataset.content_hash:
            continue
        try:
            loaded = load(task.dataset.type, dict(task.dataset.args), base)
        except Exception:  # best effort: the report is still written without the questions
            continue
        if getattr(loaded, "content_hash", None) != task.dataset.content_hash:
            continue
        cases = getattr(loaded, "cases", ())
        select = getattr(cases, "where_id", None)  # a dataset read from its file: parse only these cases
        chosen = select(ids.__contains__) if callable(select) else cases
        found.update({(task.id, c.id): c.input for c in chosen if c.id in ids})
    return found
