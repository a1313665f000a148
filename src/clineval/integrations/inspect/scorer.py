"""clineval scorers as inspect ``@scorer``s: ``scorer=clineval_scorer("mcq")`` in an inspect ``Task``.

The inspect ``TaskState`` becomes a clineval :class:`~clineval.core.protocols.ScoringContext`: the case's
question is the state's input text, its options the state's choices lettered A, B, C... in their order, its
gold the target's text; the output is the model's completion (a model error is a ``failed`` output). The
clineval :class:`~clineval.core.score.Score` comes back as an inspect ``Score``: ``value`` the clineval value
(1.0 / 0.0 for ``mcq``; NaN for a case with no reference), ``answer`` the extracted answer, ``explanation``
clineval's explanation (else its label) and ``metadata`` ``{"label", "breakdown", "scorer"}``. Metrics:
inspect's ``accuracy()`` and ``stderr()`` over those values (``unparsed`` and ``failed`` count as 0, as in
clineval's ``accuracy``).
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING, Any

from clineval.core.case import Case, CaseInput, Reference
from clineval.core.output import SystemOutput
from clineval.core.protocols import Scorer as ClinevalScorer
from clineval.core.protocols import ScoringContext
from clineval.core.score import Score as ClinevalScore
from clineval.integrations.inspect.convert import require_inspect

if TYPE_CHECKING:
    from inspect_ai.scorer import Scorer, Target
    from inspect_ai.solver import TaskState


def _case(state: TaskState, target: Target) -> Case:
    options = {string.ascii_uppercase[i]: choice.value for i, choice in enumerate(state.choices)}
    return Case(
        id=str(state.sample_id),
        input=CaseInput(question=state.input_text, options=options),
        reference=Reference(answer=target.text or None),
        metadata=dict(state.metadata),
    )


def _output(state: TaskState) -> SystemOutput:
    error = state.output.error
    if error:
        return SystemOutput.failure("inspect_error", str(error))
    return SystemOutput(text=state.output.completion, usage=None)


def score_state(scorer: ClinevalScorer, state: TaskState, target: Target) -> ClinevalScore:
    """The clineval score of one inspect sample."""
    return scorer(ScoringContext(case=_case(state, target), output=_output(state), task_id=""))


def clineval_scorer(name: str = "mcq", **options: Any) -> Scorer:
    """An inspect ``Scorer`` running the clineval scorer ``name`` (built with ``options``, as in a suite)."""
    require_inspect()
    from inspect_ai.scorer import Score, accuracy, scorer, stderr

    from clineval.scoring.registry import SCORERS

    built: ClinevalScorer = SCORERS.get(name)(options)

    @scorer(metrics=[accuracy(), stderr()], name=f"clineval_{name}")
    def _clineval() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            result = score_state(built, state, target)
            extracted = result.breakdown.get("extracted")
            return Score(
                value=result.value,
                answer=None if extracted is None else str(extracted),
                explanation=result.explanation or result.label,
                metadata={"label": result.label, "breakdown": result.breakdown, "scorer": name},
            )

        return score

    return _clineval()
