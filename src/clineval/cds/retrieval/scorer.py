"""Tier 2 retrieval scorers: ranked-retrieval measures and the guideline citation rate.

``retrieval``: per query (case), the configured measures (default ``nDCG@10, P@5, Rprec, RR, AP,
R@100``, ir_measures spelling) of the system's ranked ``StructuredOutput.retrieved`` against
``reference.data["qrels"] = {doc_id: grade}``. The measures are computed by ``ir_measures`` with its
``pytrec_eval`` provider, i.e. by trec_eval's own C code (Van Gysel & de Rijke 2018, pytrec_eval;
MacAvaney et al. 2022, ir_measures), never by hand-written formulas. Measure names (``nDCG@10``,
``P(rel=2)@5``) are read by ``parse_measure`` below with the grammar of ir_measures' own parser, which
cannot run on Python 3.14 (ir_measures 0.4.3 uses ``ast.Num``, removed there):

- ``P@k = |rel ∩ top k| / k``; ``R@k = |rel ∩ top k| / |rel|``; ``Rprec = P@|rel|``;
  ``RR = 1 / rank of the first relevant doc`` (0 if none); ``AP = (1/|rel|) Σ_{d ∈ rel retrieved} P@rank(d)``;
  with rel = docs of grade >= 1 (trec_eval's default ``relevance_level``).
- ``nDCG@k = DCG@k / IDCG@k``, ``DCG@k = Σ_{i<=k} grade_i / log2(i + 1)`` (trec_eval's ``ndcg_cut``: the
  grade itself is the gain, Järvelin & Kekäläinen 2002).

The list order is the ranking (scores are ignored, so no tie-breaking is needed; the ``trec_run`` system
already orders a run as trec_eval does). A doc listed twice counts at its first rank. A judged query with
no relevant document scores 0, and so does a failed system call (label ``failed``) or an empty ranking,
as ``trec_eval -c`` averages over every judged query. A case without qrels is not scorable (NaN).

Per source type t (when ``reference.data["source_types"] = {doc_id: type}``): ``R@k[t]`` = recall@k against
the relevant docs of type t only, for each k of ``source_type_recall``, for queries with such docs.

``guideline_citation``: for treatment queries (``metadata["query_type"] == "treatment"`` or
``reference.data["treatment_query"]``), pass if at least ``min_rows`` (2) distinct evidence rows of
source_type ``guideline`` are cited by a recommended action **and relevant to it** (they name the guideline
of a rule the action satisfies, or share the action's key terms:
``clineval.cds.retrieval.citation_relevance``; ``rules`` option: the rule file whose sources name the
guidelines, default the packaged v2 rules); when the output has no evidence table, retrieved docs of that
type, and where the case has qrels only those judged relevant (grade >= 1). Metric ``guideline_citation_rate``
(with a Wilson interval); other queries are not applicable (NaN). Breakdown: ``ids`` counted, ``uncited`` /
``irrelevant`` ids left out, ``relevance`` (id -> why it counts).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from typing import Any

import ir_measures
from pydantic import BaseModel, ConfigDict, Field, field_validator

from clineval.cds.retrieval.citation_relevance import relevant_rows
from clineval.cds.retrieval.measures import MeasureMeans
from clineval.cds.rules.model import load_rules
from clineval.core.output import StructuredOutput
from clineval.core.protocols import Metric, ScoringContext
from clineval.core.score import Score
from clineval.metrics.breakdown import BreakdownRate

DEFAULT_MEASURES = ("nDCG@10", "P@5", "Rprec", "RR", "AP", "R@100")
_QUERY = "q"


def _literal(node: ast.expr) -> Any:
    """A parameter value: a number, string, True/False/None or a dict of them (what ir_measures accepts)."""
    value = ast.literal_eval(node)
    if value is not None and not isinstance(value, int | float | str | dict):
        raise ValueError("values must be numbers, strings, True/False/None or {...}")
    return value


def _build_measure(name: str) -> Any:
    """``Measure(k1=v1, k2=v2)@cutoff`` -> ``registry[Measure](k1=v1, k2=v2, <at-param>=cutoff)``: the
    grammar of ``ir_measures.parse_measure``, read with Python's ``ast`` as it is on every version."""
    node = ast.parse(name, mode="eval").body
    params: dict[str, Any] = {}
    at_value = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        at_value = _literal(node.right)
        node = node.left
    if isinstance(node, ast.Call):
        if node.args or any(k.arg is None for k in node.keywords):
            raise ValueError("parameters must be named: Measure(param=value)@cutoff")
        params = {str(k.arg): _literal(k.value) for k in node.keywords}
        node = node.func
    if not isinstance(node, ast.Name):
        raise ValueError("expected the form Measure(param=value)@cutoff")
    measure = ir_measures.measures.registry.get(node.id)
    if measure is None:
        raise ValueError(f"measure not found: {node.id}")
    if at_value is not None:
        params[measure.AT_PARAM] = at_value
    unknown = sorted(set(params) - set(measure.SUPPORTED_PARAMS))
    if unknown:  # ir_measures would accept them and fail at evaluation
        known = ", ".join(measure.SUPPORTED_PARAMS)
        raise ValueError(f"{node.id} has no parameter {unknown[0]} (it has {known})")
    return measure(**params)


def parse_measure(name: str) -> Any:
    """An ir_measures measure from its name (``nDCG@10``); ValueError for an unknown name."""
    try:
        return _build_measure(name)
    except (NameError, ValueError, SyntaxError, TypeError) as err:
        raise ValueError(
            f"unknown retrieval measure {name!r} ({err}); e.g. {', '.join(DEFAULT_MEASURES)}"
        ) from None


def evaluate(measures: Sequence[str], qrels: Mapping[str, int], ranking: Sequence[str]) -> dict[str, float]:
    """``{measure: value}`` of one query: ``ranking`` (doc ids, best first) against ``qrels`` (trec_eval)."""
    parsed = [parse_measure(m) for m in measures]
    values = dict.fromkeys(measures, 0.0)
    run: dict[str, float] = {}
    for doc in ranking:
        run.setdefault(doc, float(len(ranking) - len(run)))  # strictly decreasing: the list order ranks
    if not run or not qrels:
        return values
    evaluator = ir_measures.pytrec_eval.evaluator(parsed, {_QUERY: {d: int(g) for d, g in qrels.items()}})
    by_str = {str(p): name for p, name in zip(parsed, measures, strict=True)}
    for metric in evaluator.iter_calc({_QUERY: run}):
        values[by_str[str(metric.measure)]] = float(metric.value)
    return values


class RetrievalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    measures: list[str] = Field(default_factory=lambda: list(DEFAULT_MEASURES), min_length=1)
    source_type_recall: list[int] = Field(default_factory=lambda: [100])

    @field_validator("measures")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        for name in value:
            parse_measure(name)
        return value


def _qrels(data: Mapping[str, Any]) -> dict[str, int] | None:
    qrels = data.get("qrels")
    if not isinstance(qrels, Mapping) or not qrels:
        return None
    if not all(isinstance(g, int) and not isinstance(g, bool) for g in qrels.values()):
        return None
    return {str(d): int(g) for d, g in qrels.items()}


def _ranking(structured: StructuredOutput | None, unit: str) -> list[str]:
    docs = (structured.retrieved if structured is not None else None) or []
    if unit == "chunk":
        return [str(getattr(d, "chunk_id", None) or d.doc_id) for d in docs]
    return [d.doc_id for d in docs]


class RetrievalScorer:
    """Ranked-retrieval measures per query; task metrics are their means (trec_eval's ``all`` line)."""

    tier = 2

    def __init__(self, options: RetrievalOptions | None = None, *, name: str = "retrieval") -> None:
        self.options = options or RetrievalOptions()
        self.name = name
        self.metrics: Sequence[Metric] = (MeasureMeans("measures"), MeasureMeans("by_source_type"))
        # the per-case value is the first measure, so that is what the combined score averages
        self.primary_metric = self.options.measures[0]

    def _by_source_type(
        self, qrels: dict[str, int], types: Mapping[str, Any], ranking: list[str]
    ) -> dict[str, float]:
        out: dict[str, float] = {}
        for kind in sorted({str(t) for t in types.values()}):
            subset = {d: g for d, g in qrels.items() if str(types.get(d)) == kind}
            if not any(g >= 1 for g in subset.values()):
                continue
            names = [f"R@{k}" for k in self.options.source_type_recall]
            for measure, value in evaluate(names, subset, ranking).items():
                out[f"{measure}[{kind}]"] = value
        return out

    def __call__(self, ctx: ScoringContext) -> Score:
        data = ctx.case.reference.data
        qrels = _qrels(data)
        if qrels is None:
            return Score(value=math.nan, label="no_reference", explanation="the case has no integer qrels")
        measures = self.options.measures
        relevant = sum(1 for g in qrels.values() if g >= 1)
        if ctx.output.error is not None:
            zeros = dict.fromkeys(measures, 0.0)
            return Score(
                value=0.0,
                label="failed",
                explanation=ctx.output.error.message[:500],
                breakdown={"measures": zeros, "error": ctx.output.error.kind, "n_relevant": relevant},
            )
        ranking = _ranking(ctx.output.structured, str(data.get("unit", "doc")))
        values = evaluate(measures, qrels, ranking)
        breakdown: dict[str, Any] = {"measures": values, "n_retrieved": len(ranking), "n_relevant": relevant}
        types = data.get("source_types")
        if isinstance(types, Mapping) and types and self.options.source_type_recall:
            breakdown["by_source_type"] = self._by_source_type(qrels, types, ranking)
        label = "scored" if ranking else "empty"
        return Score(value=values[measures[0]], label=label, breakdown=breakdown)


def make_retrieval_scorer(options: Mapping[str, Any]) -> RetrievalScorer:
    return RetrievalScorer(RetrievalOptions.model_validate(dict(options)))


class GuidelineCitationOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    min_rows: int = Field(default=2, ge=1)
    source_type: str = "guideline"
    rules: str | None = None  # guideline rules (YAML) whose sources name the guidelines; None: packaged v2


def is_treatment_query(ctx: ScoringContext) -> bool:
    return ctx.case.metadata.get("query_type") == "treatment" or bool(
        ctx.case.reference.data.get("treatment_query")
    )


class GuidelineCitationScorer:
    """Treatment queries must cite >= ``min_rows`` relevant guideline rows; ``guideline_citation_rate``."""

    tier = 2

    def __init__(
        self, options: GuidelineCitationOptions | None = None, *, name: str = "guideline_citation"
    ) -> None:
        self.options = options or GuidelineCitationOptions()
        self.name = name
        self.ruleset = load_rules(self.options.rules)
        self.metrics: Sequence[Metric] = (BreakdownRate("guideline_cited", name="guideline_citation_rate"),)

    def _rows(self, ctx: ScoringContext) -> tuple[str, set[str], dict[str, Any]]:
        """Where the guidelines were read, the ids that count, and what was left out."""
        structured = ctx.output.structured
        wanted = self.options.source_type
        if structured is not None and structured.evidence_table is not None:
            typed = [r for r in structured.evidence_table if r.source_type == wanted]
            citing: dict[str, list[str]] = {}
            for action in structured.recommended_actions or ():
                for ref in action.evidence_refs:
                    citing.setdefault(ref.strip(), []).append(action.action)
            relevant, uncited, irrelevant = relevant_rows(typed, citing, self.ruleset)
            left_out = {"uncited": uncited, "irrelevant": irrelevant, "relevance": relevant}
            return "evidence_table", set(relevant), left_out
        types = ctx.case.reference.data.get("source_types") or {}
        qrels = _qrels(ctx.case.reference.data)
        docs = (structured.retrieved if structured is not None else None) or []
        found = {d.doc_id for d in docs if (d.source_type or types.get(d.doc_id)) == wanted}
        if qrels is None:
            return "retrieved", found, {}
        judged = {d for d in found if qrels.get(d, 0) >= 1}
        return "retrieved", judged, {"irrelevant": sorted(found - judged)}

    def __call__(self, ctx: ScoringContext) -> Score:
        if not is_treatment_query(ctx):
            return Score(value=math.nan, label="not_applicable", breakdown={"guideline_cited": None})
        if ctx.output.error is not None:
            return Score(
                value=0.0,
                label="failed",
                explanation=ctx.output.error.message[:500],
                breakdown={"guideline_cited": False, "error": ctx.output.error.kind},
            )
        where, rows, left_out = self._rows(ctx)
        wanted = self.options.source_type
        cited = len(rows) >= self.options.min_rows
        dropped = len(left_out.get("uncited", ())) + len(left_out.get("irrelevant", ()))
        note = f"; {dropped} not counted (uncited or not relevant to the action)" if dropped else ""
        return Score(
            value=1.0 if cited else 0.0,
            label="cited" if cited else "too_few_guidelines",
            explanation=f"{len(rows)} relevant {wanted} rows in {where} (need {self.options.min_rows}){note}",
            breakdown={
                "guideline_cited": cited,
                "n_guideline": len(rows),
                "from": where,
                "ids": sorted(rows),
                **left_out,
            },
        )


def make_guideline_citation_scorer(options: Mapping[str, Any]) -> GuidelineCitationScorer:
    return GuidelineCitationScorer(GuidelineCitationOptions.model_validate(dict(options)))
