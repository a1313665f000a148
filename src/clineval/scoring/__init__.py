"""clineval.scoring: the scorer registry, a suite's scorer names -> the factories of the clinical domains'
scorers (``clineval.mcq``, ``clineval.ddx``, ``clineval.cds``, ``clineval.judging``, ``clineval.quality``).

A scorer is a pure function of one ScoringContext -> Score. Factories are registered by name
(``"module:attribute"``), so importing the registry imports no scorer.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.scoring.registry import SCORERS, ScorerFactory

__all__ = ["SCORERS", "ScorerFactory"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.scoring.registry": ("SCORERS", "ScorerFactory"),
    },
)
