"""Differential diagnosis, as the LDDx v6 metrics guide defines it.

The ``ddx`` scorer classifies every diagnosis of a differential against the ground truth (TP / FP / FN,
clinically appropriate alternative, appropriately excluded, missed-but-symptom-managed:
``classify_differential``) and computes recall, diagnostic safety, system safety coverage and clinical
reasoning quality (``ddx_scores``); ``ddx/process/`` holds the multi-agent process metrics (TempoScore,
credibility, consensus). Diagnosis names are compared with ``equivalent`` (``clineval.text.names``: the
Disease Ontology artefact, normalisation, acronyms; shared with the CDS golden set and quality, so it lives
below the domains). Loaders and importers of the field live here too: DDXPlus, Open-XDDx, LDDx transcripts.
Data: ``clineval/ddx/data/`` (the TM-SM action map) and ``clineval/text/names/data/``. Docs: ``docs/ddx/``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.ddx.classes import DdxClassification, DdxDecision
    from clineval.ddx.classify import classify_differential
    from clineval.ddx.ddxplus import load_ddxplus
    from clineval.ddx.formulas import ddx_scores
    from clineval.ddx.lddx_records import LddxRecord, load_lddx_file, parse_lddx
    from clineval.ddx.open_xddx import load_open_xddx
    from clineval.ddx.scorer import DdxOptions, DdxScorer, make_ddx_scorer
    from clineval.text.names.equivalence import Equivalence, best_match, equivalent

__all__ = [
    "DdxClassification",
    "DdxDecision",
    "DdxOptions",
    "DdxScorer",
    "Equivalence",
    "LddxRecord",
    "best_match",
    "classify_differential",
    "ddx_scores",
    "equivalent",
    "load_ddxplus",
    "load_lddx_file",
    "load_open_xddx",
    "make_ddx_scorer",
    "parse_lddx",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.text.names.equivalence": (
            "Equivalence",
            "best_match",
            "equivalent",
        ),
        "clineval.ddx.scorer": (
            "DdxOptions",
            "DdxScorer",
            "make_ddx_scorer",
        ),
        "clineval.ddx.classify": ("classify_differential",),
        "clineval.ddx.classes": (
            "DdxClassification",
            "DdxDecision",
        ),
        "clineval.ddx.formulas": ("ddx_scores",),
        "clineval.ddx.ddxplus": ("load_ddxplus",),
        "clineval.ddx.open_xddx": ("load_open_xddx",),
        "clineval.ddx.lddx_records": (
            "LddxRecord",
            "load_lddx_file",
            "parse_lddx",
        ),
    },
)
