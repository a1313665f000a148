"""clineval.scoring: scorers, pure functions of one ScoringContext -> Score.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.scoring.mcq import MCQOptions, MCQScorer, make_mcq_scorer
    from clineval.scoring.registry import SCORERS, ScorerFactory

__all__ = ["SCORERS", "MCQOptions", "MCQScorer", "ScorerFactory", "make_mcq_scorer"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.scoring.mcq": ("MCQOptions", "MCQScorer", "make_mcq_scorer"),
        "clineval.scoring.registry": ("SCORERS", "ScorerFactory"),
    },
)
