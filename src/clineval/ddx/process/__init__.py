"""Process metrics of a multi-agent DDx discussion (the LDDx v6 metrics guide, section on process).

TempoScore (``tempo_scores``: how early the team reaches the right diagnosis, independent and debate rounds),
credibility scores of each agent's turns (``credibility_scores``), weighted consensus
(``clineval.ddx.process.consensus``), and the ``process`` scorer over a transcript. No data files. Docs:
``docs/ddx/process_metrics.md``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.ddx.process.consensus import ConsensusItem
    from clineval.ddx.process.credibility import Credibility, credibility_scores
    from clineval.ddx.process.scorer import ProcessOptions, ProcessScorer, make_process_scorer, tempo_scores

__all__ = [
    "ConsensusItem",
    "Credibility",
    "ProcessOptions",
    "ProcessScorer",
    "credibility_scores",
    "make_process_scorer",
    "tempo_scores",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.ddx.process.scorer": (
            "ProcessOptions",
            "ProcessScorer",
            "make_process_scorer",
            "tempo_scores",
        ),
        "clineval.ddx.process.credibility": (
            "Credibility",
            "credibility_scores",
        ),
        "clineval.ddx.process.consensus": ("ConsensusItem",),
    },
)
