"""The CDS golden set: clinician-written cases with expected problems, evidence and severity.

Its loader (``load_golden_set``) and scorers: problems identified, evidence types cited, severity agreement
(Cohen's kappa). Docs: ``docs/cds/cds_pipeline.md``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.cds.golden.dataset import golden_case, load_golden_set
    from clineval.cds.golden.evidence import EvidenceTypesScorer, make_evidence_types_scorer
    from clineval.cds.golden.problems import ProblemsScorer, make_problems_scorer
    from clineval.cds.golden.severity import SeverityScorer, cohen_kappa, make_severity_scorer

__all__ = [
    "EvidenceTypesScorer",
    "ProblemsScorer",
    "SeverityScorer",
    "cohen_kappa",
    "golden_case",
    "load_golden_set",
    "make_evidence_types_scorer",
    "make_problems_scorer",
    "make_severity_scorer",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.cds.golden.dataset": (
            "golden_case",
            "load_golden_set",
        ),
        "clineval.cds.golden.problems": (
            "ProblemsScorer",
            "make_problems_scorer",
        ),
        "clineval.cds.golden.evidence": (
            "EvidenceTypesScorer",
            "make_evidence_types_scorer",
        ),
        "clineval.cds.golden.severity": (
            "SeverityScorer",
            "cohen_kappa",
            "make_severity_scorer",
        ),
    },
)
