"""Core values of clineval: frozen pydantic models and protocols, no I/O.

Names are imported lazily (``clineval.core.helpers.lazy``): ``from clineval.core import UserInputError`` does
not build every pydantic model.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.core.case import Case, CaseInput, Reference
    from clineval.core.errors import (
        ClinevalError,
        DataFileError,
        RetryableCallError,
        RunNotFoundError,
        SuiteError,
        SystemCallError,
        UserInputError,
    )
    from clineval.core.eval_metric import RUN_TYPES, EvalMetric, RunType
    from clineval.core.gate_view import GateDecision, GateDecisionRow
    from clineval.core.judging import JudgeAware, JudgeDecision, JudgeRequest
    from clineval.core.output import (
        DifferentialItem,
        ErrorInfo,
        EvidenceRow,
        RecommendedAction,
        RetrievedDoc,
        StructuredOutput,
        SystemOutput,
        TranscriptTurn,
        Usage,
    )
    from clineval.core.protocols import LoadedDataset, Metric, Scorer, ScoringContext, System
    from clineval.core.registry import Registry
    from clineval.core.run import MetricValue, RunInfo, RunResult, TaskAggregate
    from clineval.core.score import CaseResult, Score
    from clineval.core.specs import ComponentSpec, SuiteSpec, TaskSpec, canonical_json, sha256_text

__all__ = [
    "RUN_TYPES",
    "Case",
    "CaseInput",
    "CaseResult",
    "ClinevalError",
    "ComponentSpec",
    "DataFileError",
    "DifferentialItem",
    "ErrorInfo",
    "EvalMetric",
    "EvidenceRow",
    "GateDecision",
    "GateDecisionRow",
    "JudgeAware",
    "JudgeDecision",
    "JudgeRequest",
    "LoadedDataset",
    "Metric",
    "MetricValue",
    "RecommendedAction",
    "Reference",
    "Registry",
    "RetrievedDoc",
    "RetryableCallError",
    "RunInfo",
    "RunNotFoundError",
    "RunResult",
    "RunType",
    "Score",
    "Scorer",
    "ScoringContext",
    "StructuredOutput",
    "SuiteError",
    "SuiteSpec",
    "System",
    "SystemCallError",
    "SystemOutput",
    "TaskAggregate",
    "TaskSpec",
    "TranscriptTurn",
    "Usage",
    "UserInputError",
    "canonical_json",
    "sha256_text",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.core.case": ("Case", "CaseInput", "Reference"),
        "clineval.core.errors": (
            "ClinevalError",
            "DataFileError",
            "RetryableCallError",
            "RunNotFoundError",
            "SuiteError",
            "SystemCallError",
            "UserInputError",
        ),
        "clineval.core.eval_metric": ("RUN_TYPES", "EvalMetric", "RunType"),
        "clineval.core.gate_view": ("GateDecision", "GateDecisionRow"),
        "clineval.core.judging": ("JudgeAware", "JudgeDecision", "JudgeRequest"),
        "clineval.core.output": (
            "DifferentialItem",
            "ErrorInfo",
            "EvidenceRow",
            "RecommendedAction",
            "RetrievedDoc",
            "StructuredOutput",
            "SystemOutput",
            "TranscriptTurn",
            "Usage",
        ),
        "clineval.core.protocols": ("LoadedDataset", "Metric", "Scorer", "ScoringContext", "System"),
        "clineval.core.registry": ("Registry",),
        "clineval.core.run": ("MetricValue", "RunInfo", "RunResult", "TaskAggregate"),
        "clineval.core.score": ("CaseResult", "Score"),
        "clineval.core.specs": ("ComponentSpec", "SuiteSpec", "TaskSpec", "canonical_json", "sha256_text"),
    },
)
