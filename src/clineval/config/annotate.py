"""Annotators: add derived metadata to every case before a run, so results can be stratified by it.

``annotate: [question_type]`` (or ``{question_type: {appropriate: [...], rules: my_rules.yaml}}``) adds
``question_type`` and the rule that fired (``question_type_rule``), the question's ``vignette``,
``stem`` and full ``question``, and ``pipeline_appropriate`` ("yes" / "no": whether a CDS pipeline is
expected to answer this type; diagnostic, treatment and lab_finding by default).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from clineval.core import Case, ComponentSpec, Registry

# The question-type rules (a compiled rule set and its classifier) are imported by the annotator that uses
# them: every suite load imports this module (fast start).

Annotator = Callable[[Sequence[Case]], list[Case]]
AnnotatorFactory = Callable[[Mapping[str, Any], Path], tuple[Annotator, ComponentSpec]]
ANNOTATORS: Registry[AnnotatorFactory] = Registry("annotator")
DEFAULT_APPROPRIATE = ("diagnostic", "treatment", "lab_finding")


class QuestionTypeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    appropriate: list[str] = Field(default_factory=lambda: list(DEFAULT_APPROPRIATE))
    rules: str | None = None

    @field_validator("appropriate")
    @classmethod
    def _known_types(cls, value: list[str]) -> list[str]:
        from clineval.mcq.question_rules import QUESTION_TYPES

        unknown = sorted(set(value) - set(QUESTION_TYPES))
        if unknown:
            raise ValueError(f"unknown question types {unknown}; known: {', '.join(QUESTION_TYPES)}")
        return value


def question_type_annotator(options: Mapping[str, Any], base_dir: Path) -> tuple[Annotator, ComponentSpec]:
    from clineval.mcq.question_rules import load_rules
    from clineval.mcq.question_types import classify_question
    from clineval.text.stems import split_question

    opts = QuestionTypeOptions.model_validate(dict(options))
    rules_path = (
        None
        if opts.rules is None
        else (base_dir / opts.rules if not Path(opts.rules).is_absolute() else Path(opts.rules))
    )
    rules = load_rules(rules_path)
    appropriate = set(opts.appropriate)

    def annotate(cases: Sequence[Case]) -> list[Case]:
        out = []
        for case in cases:
            question = case.input.question or ""
            parts = split_question(question)
            found = classify_question(question, case.input.options, answer=case.reference.answer, rules=rules)
            meta = {
                **case.metadata,
                "question_type": found.type,
                "question_type_rule": found.rule,
                "pipeline_appropriate": "yes" if found.type in appropriate else "no",
                "vignette": parts.vignette,
                "stem": parts.stem,
                "question": question,
            }
            out.append(case.model_copy(update={"metadata": meta}))
        return out

    spec = ComponentSpec(
        type="question_type",
        args=opts.model_dump(mode="json"),
        content_hash=f"rules-{rules.version}:{rules.sha256}",
    )
    return annotate, spec


ANNOTATORS.add("question_type", question_type_annotator)
