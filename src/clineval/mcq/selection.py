"""``mcq_selection``: scores the letter the MCQ selection step chose from a CDS pipeline's report.

Same extraction and labels as ``mcq`` (correct / incorrect / unparsed / failed / no_reference), read from
``output.raw["mcq_selection"]``; the step counts as failed when the pipeline or the selection call failed,
or when the suite ran no selection step. Metrics: ``mcq_accuracy`` (+ ``mcq_accuracy_ci``, Wilson),
``mcq_unparsed_rate``, ``mcq_failed_rate``, ``mcq_macro_f1``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clineval.core.output import ErrorInfo, SystemOutput
from clineval.core.protocols import ScoringContext
from clineval.core.score import Score
from clineval.mcq.scorer import MCQOptions, MCQScorer

SELECTION_KEY = "mcq_selection"


_JUSTIFICATION = re.compile(r'"justification"\s*:\s*"((?:[^"\\]|\\.)*)"', re.DOTALL)


def justification(text: str | None) -> str | None:
    """The model's stated reason: the ``"justification"`` field when it gave one, else None."""
    found = _JUSTIFICATION.search(text or "")
    return found.group(1).replace('\\"', '"')[:1000] if found else None


class MCQSelectionScorer(MCQScorer):
    def __init__(self, options: MCQOptions | None = None) -> None:
        super().__init__(options, name="mcq_selection", prefix="mcq_")

    def __call__(self, ctx: ScoringContext) -> Score:
        score = super().__call__(ctx)
        text, _ = self.answer_text(ctx.output)
        return score.model_copy(
            update={"breakdown": {**score.breakdown, "justification": justification(text)}}
        )

    def answer_text(self, output: SystemOutput) -> tuple[str | None, ErrorInfo | None]:
        if output.error is not None:
            return None, output.error
        record = (output.raw or {}).get(SELECTION_KEY)
        if not isinstance(record, dict):
            return None, ErrorInfo(kind="no_selection_step", message="the task ran no MCQ selection step")
        if record.get("skipped"):
            return None, ErrorInfo(kind="selection_skipped", message=str(record["skipped"]))
        if record.get("error"):
            return None, ErrorInfo.model_validate(record["error"])
        return record.get("text"), None


def make_mcq_selection_scorer(options: Mapping[str, Any]) -> MCQSelectionScorer:
    return MCQSelectionScorer(MCQOptions.model_validate(dict(options)))
