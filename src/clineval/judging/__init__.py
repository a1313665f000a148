"""Tier 4: the scoped LLM judge, which reports and never gates (the four-tier evaluation design).

Judge dimensions graded 1-5 on versioned, hashed prompts, three samples majority-voted with the flip rate
logged (``judge_dimensions``); HealthBench rubric grading (``rubric``, with its loader); the injection scan
that keeps a model's output from steering its judge. Docs: ``docs/judging/``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.judging.dimensions import (
        JudgeDimensionsOptions,
        JudgeDimensionsScorer,
        make_judge_dimensions_scorer,
    )
    from clineval.judging.healthbench import load_healthbench
    from clineval.judging.injection import injection_hits
    from clineval.judging.rubric import RubricOptions, RubricScorer, make_rubric_scorer, rubric_score

__all__ = [
    "JudgeDimensionsOptions",
    "JudgeDimensionsScorer",
    "RubricOptions",
    "RubricScorer",
    "injection_hits",
    "load_healthbench",
    "make_judge_dimensions_scorer",
    "make_rubric_scorer",
    "rubric_score",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.judging.dimensions": (
            "JudgeDimensionsOptions",
            "JudgeDimensionsScorer",
            "make_judge_dimensions_scorer",
        ),
        "clineval.judging.rubric": (
            "RubricOptions",
            "RubricScorer",
            "make_rubric_scorer",
            "rubric_score",
        ),
        "clineval.judging.injection": ("injection_hits",),
        "clineval.judging.healthbench": ("load_healthbench",),
    },
)
