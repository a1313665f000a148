"""Tier 2: retrieval over clinical guidelines and the citations of a recommendation.

The ``retrieval`` scorer computes trec_eval's measures (``evaluate``; reproduced against trec_eval's own
output on the TREC clinical-trials runs), ``guideline_citation`` scores cited guideline sections, with
citation relevance; TREC qrels, topics and run files are loaded here. Docs: ``docs/cds/retrieval.md``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.cds.retrieval.scorer import (
        GuidelineCitationScorer,
        RetrievalOptions,
        RetrievalScorer,
        evaluate,
        make_guideline_citation_scorer,
        make_retrieval_scorer,
    )
    from clineval.cds.retrieval.trec import load_trec_qrels, parse_qrels, parse_topics
    from clineval.cds.retrieval.trec_run import parse_run

__all__ = [
    "GuidelineCitationScorer",
    "RetrievalOptions",
    "RetrievalScorer",
    "evaluate",
    "load_trec_qrels",
    "make_guideline_citation_scorer",
    "make_retrieval_scorer",
    "parse_qrels",
    "parse_run",
    "parse_topics",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.cds.retrieval.scorer": (
            "GuidelineCitationScorer",
            "RetrievalOptions",
            "RetrievalScorer",
            "evaluate",
            "make_guideline_citation_scorer",
            "make_retrieval_scorer",
        ),
        "clineval.cds.retrieval.trec": (
            "load_trec_qrels",
            "parse_qrels",
            "parse_topics",
        ),
        "clineval.cds.retrieval.trec_run": ("parse_run",),
    },
)
