"""A CDS report that names several options where the answer belongs has not chosen: ``ambiguous`` unless
the correct option is named first. Hand-built reports, the option-naming tie-breaks, and the list-all
stand-in pipeline (every option in every section), whose type-aware accuracy is computed independently:
the share of questions where its first-listed option is the correct one."""

from __future__ import annotations

from pathlib import Path

import pytest

from clineval.core import Case, CaseInput, Reference, Score, ScoringContext, SystemOutput
from clineval.core.cds_report import CdsReport
from clineval.datasets.medqa import load_medqa
from clineval.mcq.cds_report import CdsReportScorer
from clineval.runs import run as api
from clineval.testing import Script
from clineval.testing.cds_pipeline import list_all_report, running_pipeline
from clineval.text.matching import check_match, fuzzy_match, names_phrase
from tests.conftest import StartServer
from tests.helpers import shared_data
from tests.test_cds_pipeline_suite import suite_for

OPTIONS = {
    "A": "Pulmonary embolism",
    "B": "Aortic dissection",
    "C": "Cholesterol embolization",
    "D": "Acute pericarditis",
}


def case(answer: str, qtype: str, options: dict[str, str] | None = None) -> Case:
    options = options or OPTIONS
    return Case(
        id="1",
        input=CaseInput(question="Q?", options=options),
        reference=Reference(answer=answer, answer_text=options[answer]),
        metadata={"question_type": qtype},
    )


def report(**sections: object) -> SystemOutput:
    return SystemOutput(structured=CdsReport.model_validate(sections).to_structured())


def score(c: Case, output: SystemOutput) -> Score:
    return CdsReportScorer()(ScoringContext(case=c, output=output))


def test_all_four_in_the_differential_with_the_correct_one_second_is_ambiguous() -> None:
    out = report(differential=[OPTIONS[k] for k in "ACBD"])
    s = score(case("C", "diagnostic"), out)
    assert (s.label, s.value) == ("ambiguous", 0.0)
    assert (s.breakdown["top1"], s.breakdown["top3"], s.breakdown["ambiguous"]) == (False, False, True)
    assert s.breakdown["match_location"] == "differential" and s.breakdown["match_rank"] == 2
    assert s.breakdown["in_differential"] is True and s.breakdown["mentioned"] is True  # "in", not "chosen"
    assert s.breakdown["first_named"] == ["A"]
    assert s.breakdown["other_options"] == [
        {"option": "A", "section": "differential", "rank": 1},
        {"option": "B", "section": "differential", "rank": 3},
        {"option": "D", "section": "differential", "rank": 4},
    ]


def test_correct_first_with_the_others_below_is_correct() -> None:
    s = score(case("C", "diagnostic"), report(differential=[OPTIONS[k] for k in "CADB"]))
    assert (s.label, s.value, s.breakdown["ambiguous"], s.breakdown["top1"]) == ("top1", 1.0, False, True)
    assert [o["option"] for o in s.breakdown["other_options"]] == ["A", "D", "B"]


def test_a_single_correct_mention_is_correct() -> None:
    s = score(case("C", "diagnostic"), report(differential=["Cholesterol embolization syndrome"]))
    assert (s.label, s.value, s.breakdown["other_options"], s.breakdown["first_named"]) == (
        "top1",
        1.0,
        [],
        ["C"],
    )


def test_one_item_naming_two_options_is_ambiguous_even_at_rank_1() -> None:
    s = score(case("A", "diagnostic"), report(differential=["Pulmonary embolism or aortic dissection"]))
    assert (s.label, s.value, s.breakdown["first_named"]) == ("ambiguous", 0.0, ["A", "B"])


def test_items_that_name_no_option_do_not_count_as_a_choice() -> None:
    # the choice is among the options: a non-option diagnosis first, then the correct option, then others
    out = report(differential=["Musculoskeletal chest pain", OPTIONS["C"], OPTIONS["A"]])
    s = score(case("C", "diagnostic"), out)
    assert (s.label, s.value, s.breakdown["match_rank"]) == ("top3", 1.0, 2)


def test_the_location_is_read_across_the_types_sections_in_order() -> None:
    options = {"A": "Aspirin", "B": "Clopidogrel", "C": "Warfarin", "D": "CT angiography"}
    # treatment: next steps come before recommendations; D named first there, so B is not the choice
    out = report(next_steps=["CT angiography"], recommendations=["Start clopidogrel 75 mg daily"])
    s = score(case("B", "treatment", options), out)
    assert (s.label, s.value, s.breakdown["match_location"]) == ("ambiguous", 0.0, "recommendations")
    assert s.breakdown["other_options"] == [{"option": "D", "section": "next_steps", "rank": 1}]
    alone = score(case("B", "treatment", options), report(recommendations=["Start clopidogrel"]))
    assert (alone.label, alone.value) == ("other_section", 1.0)
    # a wrong option in a section outside the type's location (the differential) does not count
    outside = report(differential=["Aspirin"], next_steps=["Clopidogrel"])
    assert score(case("B", "treatment", options), outside).label == "top1"


def test_an_item_names_the_option_it_matches_best() -> None:
    drugs = {"A": "Ceftriaxone", "B": "Ceftriaxone and doxycycline", "C": "Azithromycin", "D": "Penicillin"}
    both = score(case("B", "treatment", drugs), report(next_steps=["Ceftriaxone and doxycycline"]))
    assert (both.label, both.breakdown["first_named"]) == ("top1", ["B"])  # not also "Ceftriaxone"
    one = score(case("A", "treatment", drugs), report(next_steps=["IM ceftriaxone", "Doxycycline"]))
    assert (one.label, one.breakdown["first_named"]) == ("top1", ["A"])
    labs = {
        "A": "Increased PTH, decreased calcium",
        "B": "Decreased PTH, increased calcium",
        "C": "Normal PTH, normal calcium",
        "D": "Increased PTH, increased calcium",
    }
    same_words = score(case("B", "lab_finding", labs), report(recommended_workup=[labs["B"]]))
    assert (same_words.label, same_words.breakdown["first_named"]) == ("top1", ["B"])


def test_phrase_naming_is_one_way_and_check_match_decides_like_fuzzy_match() -> None:
    assert names_phrase("Start clopidogrel 75 mg", "Clopidogrel")
    assert not names_phrase("PTH", "Low PTH") and fuzzy_match("PTH", "Low PTH")  # rule 1 is both ways
    assert names_phrase("Acute MI", "acute myocardial infarction")  # abbreviations expanded
    near = check_match("Histrionic personality disorder", "Borderline personality disorder")
    assert near.matched and near.rule == "token_recall" and near.recall == pytest.approx(2 / 3)


def test_a_near_miss_for_another_option_does_not_locate_the_answer() -> None:
    disorders = {
        "A": "Histrionic personality disorder",
        "B": "Borderline personality disorder",
        "C": "Dependent personality disorder",
        "D": "Narcissistic personality disorder",
    }
    # "Histrionic personality disorder" fuzzy-matches "Borderline personality disorder" (recall 2/3), but
    # it names option A: the report chose A, the correct B is not in the differential
    s = score(case("B", "diagnostic", disorders), report(differential=[disorders["A"]]))
    assert (s.value, s.breakdown["in_differential"], s.breakdown["first_named"]) == (0.0, False, ["A"])
    assert s.label == "mentioned_only"  # the full text still fuzzy-matches: "mentioned" stays loose


def test_ambiguous_rate_and_the_headline_metrics() -> None:
    scorer = CdsReportScorer()
    scores = [
        score(case("C", "diagnostic"), report(differential=[OPTIONS[k] for k in "ACBD"])),  # ambiguous
        score(case("C", "diagnostic"), report(differential=[OPTIONS[k] for k in "CABD"])),  # top1
        score(case("A", "diagnostic"), report(differential=[OPTIONS["A"]])),  # top1
        score(case("B", "diagnostic"), SystemOutput.failure("http_500", "boom")),  # failed
    ]
    values: dict[str, object] = {}
    for metric in scorer.metrics:
        values.update(metric.compute(scores))
    assert values["type_aware_accuracy"] == 2 / 4 and values["top1_accuracy"] == 2 / 4
    assert values["ambiguous_rate"] == 1 / 4 and values["in_differential_rate"] == 3 / 4


def list_all_expected(cases: list[Case]) -> int:
    """Questions where the list-all stand-in's first-listed option is the correct one (its one choice)."""
    first = [list_all_report(c.input.question or "", c.input.options)["next_steps"][0] for c in cases]
    return sum(1 for c, f in zip(cases, first, strict=True) if f == c.input.options[c.reference.answer or ""])


def test_list_all_stand_in_is_right_only_where_its_first_option_is(
    tmp_path: Path, start_server: StartServer
) -> None:
    model = start_server(Script(latency_s=0.0))
    with running_pipeline(list_all=True) as (url, _):
        run = api.run_suite(
            api.RunRequest(
                suite_path=suite_for(tmp_path, url, model.base_url),
                store_url=f"sqlite:///{tmp_path}/s.db",
                limit=50,
                seed=42,
                cache_path=None,
            )
        )
    cases = [r.case_id for r in run.results]
    loaded = {c.id: c for c in load_medqa({"path": str(medqa())}, Path(".")).cases}
    chosen = list_all_expected([loaded[i] for i in cases])
    scores = run.aggregates["cds"].scores
    assert len(cases) == 50 and chosen == 13  # measured: 13 of 50, near the 1 in 4 of a guess
    assert scores["type_aware_accuracy"] == chosen / 50 and scores["top1_accuracy"] == chosen / 50
    assert scores["ambiguous_rate"] == (50 - chosen) / 50
    assert scores["in_differential_rate"] == 1.0 and scores["mentioned_rate"] == 1.0  # "in", not "chosen"


def medqa() -> Path:
    return shared_data("medqa_usmle_4opt", "phrases_no_exclude_test.jsonl")


def test_list_all_on_every_medqa_test_question() -> None:
    cases = load_medqa({"path": str(medqa())}, Path(".")).cases
    scorer = CdsReportScorer()
    values = []
    for c in cases:
        out = report(**list_all_report(c.input.question or "", c.input.options))
        values.append(scorer(ScoringContext(case=c, output=out)).value)
    assert len(cases) == 1273
    assert sum(values) == list_all_expected(cases) == 328  # 25.8%; 99.9% before the ambiguous rule
    assert sum(values) / len(cases) == pytest.approx(0.2577, abs=1e-4)
