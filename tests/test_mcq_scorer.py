"""The MCQ scorer: labels, breakdown, where the answer is read from, gold handling, registry factory."""

from __future__ import annotations

import math

import pydantic
import pytest

from clineval.core import (
    Case,
    CaseInput,
    Reference,
    Scorer,
    ScoringContext,
    StructuredOutput,
    SuiteError,
    SystemOutput,
)
from clineval.mcq.scorer import MCQOptions, MCQScorer
from clineval.metrics import Accuracy
from clineval.scoring import SCORERS

OPTIONS = {"A": "Carboplatin", "B": "Oxaliplatin", "C": "Cisplatin", "D": "Paclitaxel"}


def ctx(
    output: SystemOutput, gold: str | None = "C", options: dict[str, str] | None = None
) -> ScoringContext:
    case = Case(
        id="q1",
        input=CaseInput(
            question="Which drug is most ototoxic?", options=OPTIONS if options is None else options
        ),
        reference=Reference(answer=gold),
    )
    return ScoringContext(case=case, output=output, task_id="t")


SCORER = MCQScorer()


@pytest.mark.parametrize(
    ("text", "value", "label", "extracted"),
    [
        ('{"answer_choice": "C. Cisplatin"}', 1.0, "correct", "C"),
        ("The answer is B", 0.0, "incorrect", "B"),
        ("Cisplatin", 1.0, "correct", "C"),
        ("None of the above", 0.0, "unparsed", None),
        ("A or C", 0.0, "unparsed", None),
        ("", 0.0, "unparsed", None),
    ],
)
def test_labels(text: str, value: float, label: str, extracted: str | None) -> None:
    score = SCORER(ctx(SystemOutput(text=text)))
    assert (score.value, score.label) == (value, label)
    assert score.breakdown["extracted"] == extracted
    assert score.breakdown["gold"] == "C"
    assert "method" in score.breakdown


def test_failed_output_is_failed_not_wrong() -> None:
    score = SCORER(ctx(SystemOutput.failure("http_500", "server error")))
    assert (score.value, score.label) == (0.0, "failed")
    assert score.breakdown["error"] == "http_500"
    assert score.breakdown["extracted"] is None


def test_structured_answer_is_preferred_over_text() -> None:
    output = SystemOutput(text="The answer is A", structured=StructuredOutput(answer="C"))
    score = SCORER(ctx(output))
    assert (score.label, score.breakdown["method"]) == ("correct", "bare_letter")
    assert (
        SCORER(ctx(SystemOutput(text="The answer is A", structured=StructuredOutput()))).label == "incorrect"
    )


def test_no_gold_is_not_scorable() -> None:
    for gold in (None, "", "  "):
        score = SCORER(ctx(SystemOutput(text="C"), gold=gold))
        assert math.isnan(score.value)
        assert score.label == "no_reference"
        assert not score.scorable


def test_gold_must_be_an_option() -> None:
    score = SCORER(ctx(SystemOutput(text="C"), gold="E"))
    assert score.label == "no_reference"
    assert "not one of the options" in (score.explanation or "")


def test_gold_given_as_option_text_is_mapped_to_its_letter() -> None:
    ynm = {"A": "yes", "B": "no", "C": "maybe"}
    score = SCORER(ctx(SystemOutput(text='{"answer_choice": "B. no"}'), gold="no", options=ynm))
    assert (score.label, score.breakdown["gold"]) == ("correct", "B")


def test_case_without_options_accepts_letters() -> None:
    assert SCORER(ctx(SystemOutput(text="The answer is B"), gold="B", options={})).label == "correct"
    assert SCORER(ctx(SystemOutput(text="E"), gold="E", options={})).label == "correct"
    assert SCORER(ctx(SystemOutput(text="F"), gold="E", options={})).label == "unparsed"


def test_scorer_protocol_and_metric_keys() -> None:
    assert isinstance(SCORER, Scorer)
    assert SCORER.name == "mcq"
    scores = [SCORER(ctx(SystemOutput(text=t))) for t in ("C", "C", "B", "?")]
    scores.append(SCORER(ctx(SystemOutput.failure("timeout", "slow"))))
    values: dict[str, object] = {}
    for metric in SCORER.metrics:
        values.update(metric.compute(scores))
    assert set(values) == {"accuracy", "accuracy_ci", "unparsed_rate", "failed_rate", "n", "macro_f1"}
    assert values["accuracy"] == pytest.approx(2 / 5)
    assert values["unparsed_rate"] == pytest.approx(1 / 5)
    assert values["failed_rate"] == pytest.approx(1 / 5)
    assert values["n"] == 5
    # gold is always C: F1_C = 2*2 / (2*2 + 0 + 3) (B, unparsed and failed are misses)
    assert values["macro_f1"] == pytest.approx(4 / 7)


def test_registry_factory_validates_options() -> None:
    factory = SCORERS.get("mcq")
    scorer = factory({})
    assert isinstance(scorer, MCQScorer)
    assert scorer.options == MCQOptions()
    boot = factory({"ci": "bootstrap", "seed": 3})
    accuracy = boot.metrics[0]
    assert isinstance(accuracy, Accuracy)
    assert (accuracy.ci, accuracy.seed) == ("bootstrap", 3)
    with pytest.raises(pydantic.ValidationError):
        factory({"cii": "wilson"})
    with pytest.raises(pydantic.ValidationError):
        factory({"ci": "wald"})
    with pytest.raises(SuiteError, match="did you mean 'mcq'"):
        SCORERS.get("mcqq")
