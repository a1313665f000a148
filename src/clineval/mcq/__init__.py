"""Multiple-choice question answering (MedQA, MedMCQA, PubMedQA, MMLU-style sets).

Implements the MedQA validation plan: robust answer extraction from free text (``extract_choice``: letters,
option text, ``\boxed{}``, conclusions; an unreadable answer is ``unparsed``, never a guessed letter),
question-stem and question-type classification (``classify_question``), the ``mcq`` scorer, the MCQ selection
step (``mcq_selection``) and type-aware scoring of CDS reports (``cds_report``). Its data, the question-type
rules, lives in ``clineval/mcq/data/``. Docs: ``docs/mcq/``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.mcq.answer_extraction import Extraction, extract_choice
    from clineval.mcq.cds_report import CdsReportOptions, CdsReportScorer, make_cds_report_scorer
    from clineval.mcq.question_types import Classification, classify_question
    from clineval.mcq.scorer import MCQOptions, MCQScorer, make_mcq_scorer
    from clineval.mcq.selection import MCQSelectionScorer, make_mcq_selection_scorer

__all__ = [
    "CdsReportOptions",
    "CdsReportScorer",
    "Classification",
    "Extraction",
    "MCQOptions",
    "MCQScorer",
    "MCQSelectionScorer",
    "classify_question",
    "extract_choice",
    "make_cds_report_scorer",
    "make_mcq_scorer",
    "make_mcq_selection_scorer",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.mcq.answer_extraction": (
            "Extraction",
            "extract_choice",
        ),
        "clineval.mcq.question_types": (
            "Classification",
            "classify_question",
        ),
        "clineval.mcq.scorer": (
            "MCQOptions",
            "MCQScorer",
            "make_mcq_scorer",
        ),
        "clineval.mcq.selection": (
            "MCQSelectionScorer",
            "make_mcq_selection_scorer",
        ),
        "clineval.mcq.cds_report": (
            "CdsReportOptions",
            "CdsReportScorer",
            "make_cds_report_scorer",
        ),
    },
)
