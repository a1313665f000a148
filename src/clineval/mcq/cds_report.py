"""``cds_report``: type-aware scoring of a CDS pipeline's report against an MCQ's correct option.

A report is not a letter. Where the correct answer should appear depends on what the question asks
(``question_type``, see ``clineval.mcq.question_types``); the report's sections are searched in this
order and the first section holding an item that names the correct option (``clineval.text.matching``,
``fuzzy_match`` rules: containment, all content tokens, token recall >= threshold; with the case's options,
an item names the option it matches best, see below) is recorded:

- diagnostic: differential -> full text
- treatment: next steps -> recommendations -> reasoning -> full text
- mechanism: reasoning chain -> differential reasoning -> full text
- lab_finding: recommended workup -> next steps -> full text
- other types: every section, then full text

Per case ``breakdown``: ``question_type``, ``match_location`` (section or None), ``match_rank`` (1-based
rank in that section; None for full text), ``match_rule``, ``top1`` / ``top3`` (answer at rank 1 / <= 3 of
the type's first section, and chosen), ``mentioned`` (anywhere, full text included), ``ambiguous`` and, for
diagnostic questions, ``in_differential`` (anywhere in the differential).

**Several options named** (``clineval.mcq.cds_options``): the type's sections, read in order as one
ranked list, are the *location*; the report's choice is the first option named there. When the correct
option is in the location but is not that choice (another option is named before it, or the same item
names two options), the case is ``ambiguous``: value 0, not top-1/top-3, with ``other_options`` (the
other options named in the location up to the correct one's section, or in all of it when the correct
one is not there, each with section and rank) and ``first_named`` in the breakdown. A report listing
every option is therefore right only when it lists the correct one first. An item that fuzzy-matches the
correct option's text but names another option better ("Histrionic personality disorder" for
"Borderline personality disorder") does not locate the correct option. ``value`` = 1
when the answer is in the location and chosen (not merely somewhere in the text). ``in_differential`` and
``mentioned`` stay "is it there at all" (a list-all report maximises them; read them with
``ambiguous_rate``). Labels: ``top1``, ``top3``, ``ranked``, ``other_section``, ``ambiguous``,
``mentioned_only``, ``missed``, ``failed``, ``no_reference``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.core import Case, Metric, Score, ScoringContext, StructuredOutput, SystemOutput
from clineval.mcq.cds_options import chosen, correct_letter, named_in, others
from clineval.mcq.question_types import classify_question
from clineval.metrics.basic import Accuracy, LabelRate
from clineval.metrics.breakdown import BreakdownRate
from clineval.text.matching import PreparedText, explain_match, prepare

FULL_TEXT = "full_text"
DEFAULT_ORDER: dict[str, list[str]] = {
    "diagnostic": ["differential"],
    "treatment": ["next_steps", "recommendations", "reasoning"],
    "mechanism": ["reasoning", "differential_reasoning"],
    "lab_finding": ["workup", "next_steps"],
    "other": [
        "differential",
        "next_steps",
        "recommendations",
        "workup",
        "reasoning",
        "differential_reasoning",
    ],
}


class CdsReportOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float = Field(default=0.6, gt=0.0, le=1.0)
    sections: dict[str, list[str]] = Field(default_factory=dict)  # per type, overrides DEFAULT_ORDER


def report_sections(output: SystemOutput) -> dict[str, list[str]]:
    """Ranked texts of each section of a report; ``full_text`` is the text or every section joined."""
    s = output.structured or StructuredOutput()
    diff = s.differential or []
    sections = {
        "differential": [d.diagnosis for d in diff],
        "differential_reasoning": [d.reasoning for d in diff if d.reasoning],
        "next_steps": s.actions("next_step"),
        "recommendations": s.actions("recommendation"),
        "workup": s.actions("workup"),
        "reasoning": list(s.reasoning or []),
    }
    pieces = [output.text or "", s.summary or "", *(t for texts in sections.values() for t in texts)]
    sections[FULL_TEXT] = ["\n".join(p for p in pieces if p)]
    return sections


def _target(case: Case) -> str | None:
    ref = case.reference
    if ref.answer_text:
        return ref.answer_text
    return case.input.options.get(ref.answer or "")


def _question_type(case: Case) -> str:
    known = case.metadata.get("question_type")
    if isinstance(known, str) and known:
        return known
    return classify_question(case.input.question or "", case.input.options, answer=case.reference.answer).type


class CdsReportScorer:
    name = "cds_report"

    def __init__(self, options: CdsReportOptions | None = None) -> None:
        self.options = options or CdsReportOptions()
        self.order = {**DEFAULT_ORDER, **self.options.sections}
        self.metrics: Sequence[Metric] = (
            Accuracy(name="type_aware_accuracy"),
            BreakdownRate("top1", name="top1_accuracy"),
            BreakdownRate("top3", name="top3_accuracy"),
            BreakdownRate("mentioned", name="mentioned_rate"),
            BreakdownRate("in_differential", name="in_differential_rate"),
            BreakdownRate("ambiguous", name="ambiguous_rate"),
            LabelRate("failed", name="report_failed_rate"),
        )

    def _find(self, sections: Mapping[str, list[str]], order: list[str], target: str) -> dict[str, Any]:
        for section in [*order, FULL_TEXT]:
            for rank, text in enumerate(sections.get(section, []), start=1):
                candidate: str | PreparedText = prepare(text) if section == FULL_TEXT else text
                result = explain_match(candidate, target, self.options.threshold)
                if result.matched:
                    return {
                        "match_location": section,
                        "match_rank": None if section == FULL_TEXT else rank,
                        "match_rule": result.rule,
                        "match_score": round(result.score, 4),
                        "matched_text": text[:200],
                    }
        return {
            "match_location": None,
            "match_rank": None,
            "match_rule": None,
            "match_score": None,
            "matched_text": None,
        }

    def __call__(self, ctx: ScoringContext) -> Score:
        qtype = _question_type(ctx.case)
        order = self.order.get(qtype, self.order["other"])
        target = _target(ctx.case)
        base: dict[str, Any] = {"question_type": qtype, "target": target}
        if not target:
            return Score(
                value=math.nan,
                label="no_reference",
                breakdown=base,
                explanation="the case has no answer text to look for",
            )
        diagnostic = qtype == "diagnostic"
        if ctx.output.failed:
            error = ctx.output.error
            facts = {
                "top1": False,
                "top3": False,
                "mentioned": False,
                "in_differential": False if diagnostic else None,
                "ambiguous": False,
            }
            return Score(
                value=0.0,
                label="failed",
                explanation=error.message[:500] if error else None,
                breakdown={
                    **base,
                    **facts,
                    "match_location": None,
                    "match_rank": None,
                    "error": error.kind if error else None,
                },
            )
        sections = report_sections(ctx.output)
        letter = correct_letter(ctx.case, target) if len(ctx.case.input.options) >= 2 else None
        if letter is None:  # nothing to tell apart: the first fuzzy match of the answer text
            found, choice = self._find(sections, order, target), {"ambiguous": None}
        else:
            found, choice = self._find_option(sections, order, target, letter, ctx.case.input.options)
        where, rank = found["match_location"], found["match_rank"]
        in_section = where is not None and where != FULL_TEXT
        ambiguous = bool(in_section and choice.pop("chosen", True) is False)
        primary = where == order[0] and not ambiguous
        facts = {
            "top1": primary and rank == 1,
            "top3": primary and rank is not None and rank <= 3,
            "mentioned": where is not None,
            "in_differential": (where == "differential") if diagnostic else None,
            "ambiguous": ambiguous if letter is not None else None,
        }
        label = (
            "ambiguous"
            if ambiguous
            else "top1"
            if facts["top1"]
            else "top3"
            if facts["top3"]
            else "ranked"
            if primary
            else "other_section"
            if in_section
            else "mentioned_only"
            if where
            else "missed"
        )
        value = 1.0 if in_section and not ambiguous else 0.0
        return Score(value=value, label=label, breakdown={**base, **choice, **facts, **found})

    def _find_option(
        self,
        sections: Mapping[str, list[str]],
        order: list[str],
        target: str,
        letter: str,
        options: Mapping[str, str],
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The first item of the location that names the correct option (else the full text, by fuzzy
        match), and the report's choice there (see ``clineval.mcq.cds_options``)."""
        named = named_in(sections, order, options, self.options.threshold, until=letter)
        hit = next((n for n in named if letter in n.letters), None)
        if hit is None:
            found = self._find(sections, [], target)
        else:
            text = sections[hit.section][hit.rank - 1]
            result = explain_match(text, target, self.options.threshold)
            found = {
                "match_location": hit.section,
                "match_rank": hit.rank,
                "match_rule": result.rule or "named",
                "match_score": round(result.score, 4),
                "matched_text": text[:200],
            }
        choice = {
            "chosen": chosen(named, letter),
            "first_named": list(named[0].letters) if named else [],
            "other_options": others(named, letter),
        }
        return found, choice


def make_cds_report_scorer(options: Mapping[str, Any]) -> CdsReportScorer:
    return CdsReportScorer(CdsReportOptions.model_validate(dict(options)))
