"""Multiple-choice scorer: extract the option letter from the output and compare it with the gold letter.

Per case (labels in ``Score.label``):

- ``no_reference`` (value NaN, not scorable): the case has no gold answer, or a gold answer that is
  neither an option letter nor an option's text;
- ``failed`` (0): the system call failed (``output.error``); ``breakdown["error"]`` holds its kind;
- ``unparsed`` (0): no single option could be read from the output (see ``clineval.mcq.answer_extraction``);
- ``correct`` (1) / ``incorrect`` (0).

The answer is read from ``output.structured.answer`` when the system returned one, else ``output.text``.
``breakdown`` keeps ``extracted``, ``method``, ``span`` and ``gold`` for every case.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.core.case import Case
from clineval.core.output import ErrorInfo, SystemOutput
from clineval.core.protocols import Metric, ScoringContext
from clineval.core.score import Score
from clineval.mcq.answer_extraction import extract_choice
from clineval.metrics.basic import Accuracy, CiMethod, Count, LabelRate, MacroF1
from clineval.text.normalize import normalize_text

_DEFAULT_LETTERS = "ABCD"


class MCQOptions(BaseModel):
    """Options of the ``mcq`` scorer in a suite: ``scorers: [{mcq: {ci: bootstrap, seed: 1}}]``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ci: CiMethod = "wilson"
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    seed: int = 0
    n_resamples: int = Field(default=2000, ge=1)


def _gold_and_options(case: Case) -> tuple[str | None, Mapping[str, str], str | None]:
    """(gold letter, options, problem). Maps a gold option *text* ("yes") to its letter."""
    options: Mapping[str, str] = case.input.options
    gold = case.reference.answer
    if gold is None or not gold.strip():
        return None, options, "the case has no gold answer"
    if not options:  # no option texts given: accept letters A-D (or up to the gold letter)
        if len(gold) == 1 and "A" <= gold <= "Z":
            last = max(gold, _DEFAULT_LETTERS[-1])
            return gold, {chr(c): "" for c in range(ord("A"), ord(last) + 1)}, None
        return None, options, f"gold answer {gold!r} is not a letter and the case has no options"
    if gold in options:
        return gold, options, None
    wanted = normalize_text(gold)
    keys = [key for key, text in options.items() if normalize_text(text) == wanted]
    if len(keys) == 1:
        return keys[0], options, None
    return None, options, f"gold answer {gold!r} is not one of the options {', '.join(options)}"


class MCQScorer:
    """Scores a multiple-choice answer; metrics: accuracy (+CI), unparsed/failed rates, n, macro-F1."""

    def __init__(self, options: MCQOptions | None = None, *, name: str = "mcq", prefix: str = "") -> None:
        opts = options or MCQOptions()
        self.name = name
        self.options = opts
        metrics: list[Metric] = [
            Accuracy(
                ci=opts.ci,
                confidence=opts.confidence,
                seed=opts.seed,
                n_resamples=opts.n_resamples,
                name=f"{prefix}accuracy",
            ),
            LabelRate("unparsed", name=f"{prefix}unparsed_rate"),
            LabelRate("failed", name=f"{prefix}failed_rate"),
            MacroF1(gold_key="gold", pred_key="extracted", name=f"{prefix}macro_f1"),
        ]
        if not prefix:
            metrics.insert(3, Count())
        self.metrics: Sequence[Metric] = tuple(metrics)

    def answer_text(self, output: SystemOutput) -> tuple[str | None, ErrorInfo | None]:
        """Where the answer is read from: ``structured.answer`` if the system gave one, else the text."""
        structured = output.structured
        if structured is not None and structured.answer is not None:
            return structured.answer, output.error
        return output.text, output.error

    def __call__(self, ctx: ScoringContext) -> Score:
        output = ctx.output
        gold, options, problem = _gold_and_options(ctx.case)
        if gold is None:
            return Score(
                value=math.nan,
                label="no_reference",
                explanation=problem,
                breakdown={
                    "extracted": None,
                    "method": None,
                    "span": None,
                    "gold": ctx.case.reference.answer,
                },
            )
        text, error = self.answer_text(output)
        if error is not None:
            return Score(
                value=0.0,
                label="failed",
                explanation=error.message[:500],
                breakdown={
                    "error": error.kind,
                    "extracted": None,
                    "method": None,
                    "span": None,
                    "gold": gold,
                },
            )
        found = extract_choice(text, options)
        letter = found.letter
        breakdown = {"extracted": letter, "method": found.method, "span": found.span, "gold": gold}
        if letter is None:
            return Score(value=0.0, label="unparsed", breakdown=breakdown)
        if letter == gold:
            return Score(value=1.0, label="correct", breakdown=breakdown)
        return Score(value=0.0, label="incorrect", breakdown=breakdown)


def make_mcq_scorer(options: Mapping[str, Any]) -> MCQScorer:
    """Registry factory: validates ``options`` (pydantic, extra keys forbidden) and builds the scorer."""
    return MCQScorer(MCQOptions.model_validate(dict(options)))
