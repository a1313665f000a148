"""The scorer registry: suite name -> factory ``(options: Mapping[str, Any]) -> Scorer``.

Factories validate their options with a pydantic model (``extra="forbid"``) and let
``pydantic.ValidationError`` propagate; the config layer turns it into ``suite.yaml:LINE: ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from clineval.core.protocols import Scorer
from clineval.core.registry import Registry

ScorerFactory = Callable[[Mapping[str, Any]], Scorer]

# Factories are named, not imported: a suite imports only the modules of the components it uses.
SCORERS: Registry[ScorerFactory] = Registry("scorer")
SCORERS.add_lazy("mcq", "clineval.mcq.scorer:make_mcq_scorer")
SCORERS.add_lazy("mcq_selection", "clineval.mcq.selection:make_mcq_selection_scorer")
SCORERS.add_lazy("cds_report", "clineval.mcq.cds_report:make_cds_report_scorer")
SCORERS.add_lazy("ddx", "clineval.ddx.scorer:make_ddx_scorer")
SCORERS.add_lazy("process", "clineval.ddx.process.scorer:make_process_scorer")
SCORERS.add_lazy("retrieval", "clineval.cds.retrieval.scorer:make_retrieval_scorer")
SCORERS.add_lazy("guideline_citation", "clineval.cds.retrieval.scorer:make_guideline_citation_scorer")
SCORERS.add_lazy("guideline_adherence", "clineval.cds.rules.guidelines:make_guideline_scorer")
SCORERS.add_lazy("judge_dimensions", "clineval.judging.dimensions:make_judge_dimensions_scorer")
SCORERS.add_lazy("rubric", "clineval.judging.rubric:make_rubric_scorer")
SCORERS.add_lazy("schema", "clineval.cds.guard.structural:make_schema_scorer")
SCORERS.add_lazy("citation_grounding", "clineval.cds.guard.structural:make_citation_grounding_scorer")
SCORERS.add_lazy("scope", "clineval.cds.guard.structural:make_scope_scorer")
SCORERS.add_lazy("contraindications", "clineval.cds.guard.structural:make_contraindications_scorer")
SCORERS.add_lazy("escalation", "clineval.cds.guard.structural:make_escalation_scorer")
SCORERS.add_lazy("latency", "clineval.cds.guard.structural:make_latency_scorer")
SCORERS.add_lazy("reasoning_quality", "clineval.quality.reasoning:make_reasoning_quality_scorer")
SCORERS.add_lazy("clinical_accuracy", "clineval.quality.clinical_accuracy:make_clinical_accuracy_scorer")
SCORERS.add_lazy("problems_identified", "clineval.cds.golden.problems:make_problems_scorer")
SCORERS.add_lazy("evidence_types_cited", "clineval.cds.golden.evidence:make_evidence_types_scorer")
SCORERS.add_lazy("severity_agreement", "clineval.cds.golden.severity:make_severity_scorer")
