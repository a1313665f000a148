"""Clinical accuracy and reasoning quality (the metrics overview).

Clinical accuracy is the weighted Jaccard of the clinical entities of an answer and its reference, negation
aware (``ClinicalAccuracyScorer``, ``weighted_jaccard``); reasoning quality combines structure, evidence use,
factual consistency and fallacy penalties (``reasoning_quality``). No data files of its own (entities use
``clineval.text``). Docs: ``docs/quality/``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.quality.clinical_accuracy import (
        ClinicalAccuracyScorer,
        extract_entities,
        make_clinical_accuracy_scorer,
        weighted_jaccard,
    )
    from clineval.quality.reasoning import ReasoningQualityScorer, make_reasoning_quality_scorer

__all__ = [
    "ClinicalAccuracyScorer",
    "ReasoningQualityScorer",
    "extract_entities",
    "make_clinical_accuracy_scorer",
    "make_reasoning_quality_scorer",
    "weighted_jaccard",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.quality.clinical_accuracy": (
            "ClinicalAccuracyScorer",
            "extract_entities",
            "make_clinical_accuracy_scorer",
            "weighted_jaccard",
        ),
        "clineval.quality.reasoning": (
            "ReasoningQualityScorer",
            "make_reasoning_quality_scorer",
        ),
    },
)
