"""Race swap: stated descriptors only, three positions, canonical targets, case, and what is never touched."""

import pytest

from clineval.counterfactual.rewrite import rewrite, rewrite_attribute
from clineval.counterfactual.rewrite_race import find_race, race_variant_text

TAIL = " comes to the physician because of a cough. Which of the following is the most likely diagnosis?"


def test_issue_example() -> None:
    text = "A 45-year-old African American man" + TAIL
    assert rewrite(text, "race", "white") == "A 45-year-old White man" + TAIL
    assert rewrite(text, "race", "black") == "A 45-year-old Black man" + TAIL


@pytest.mark.parametrize(
    ("source", "white", "black"),
    [
        ("A 44-year-old African-American woman", "A 44-year-old White woman", "A 44-year-old Black woman"),
        ("A 61-year-old Caucasian male", "A 61-year-old White male", "A 61-year-old Black male"),
        ("A 58-year-old white man", "A 58-year-old white man", "A 58-year-old black man"),
        (
            "A 44-year-old obese African-American male",
            "A 44-year-old obese White male",
            "A 44-year-old obese Black male",
        ),
        (
            "A 5-year-old boy of African descent",
            "A 5-year-old boy of European descent",
            "A 5-year-old boy of African descent",
        ),
        ("A 24-year-old Asian woman", "A 24-year-old White woman", "A 24-year-old Black woman"),
    ],
)
def test_positions_and_case(source: str, white: str, black: str) -> None:
    result = rewrite_attribute(source + TAIL, "race")
    assert result.status == "swapped"
    assert result.texts["white"] == white + TAIL
    assert result.texts["black"] == black + TAIL


def test_changed_flag() -> None:
    result = rewrite_attribute("A 58-year-old white man" + TAIL, "race")
    assert result.changed == {"white": False, "black": True}
    result = rewrite_attribute("A 58-year-old Caucasian man" + TAIL, "race")
    assert result.changed == {"white": True, "black": True}  # "Caucasian" -> "White": canonical terms


def test_predicate_of_the_patient() -> None:
    text = "A 30-year-old woman has a cough. The patient is African American. She smokes."
    assert (
        rewrite(text, "race", "white") == "A 30-year-old woman has a cough. The patient is White. She smokes."
    )


@pytest.mark.parametrize(
    "text",
    [
        "A 30-year-old man has a cough. White blood cells 16,000/mm3.",
        "A 60-year-old man has black tarry stools in the morning.",
        "A 40-year-old man has a nipple discharge. The fluid is white, and he wonders about it.",
        "A 20-year-old man has a rash. Black hemorrhagic eschars are noted.",
        "A 30-year-old man has white patches on the tongue. His temperature is 37°C.",
        "A 70-year-old man is dressed in black and wears a long black coat.",
    ],
)
def test_colours_and_other_uses_are_not_race(text: str) -> None:
    result = rewrite_attribute(text, "race")
    assert result.status == "not_applicable" and result.reason == "race not stated"


def test_mixed_descriptors_skip() -> None:
    text = "A 30-year-old Asian woman and her 5-year-old Black son come to the clinic."
    result = rewrite_attribute(text, "race")
    assert result.status == "skipped" and result.skipped_by == ("race.coherence.mixed_descriptors",)


def test_descriptor_outside_the_groups_is_reported() -> None:
    result = rewrite_attribute("A 30-year-old Japanese woman is brought to the emergency department.", "race")
    assert result.status == "not_applicable" and "Japanese" in (result.reason or "")


def test_other_groups_on_request() -> None:
    result = rewrite_attribute("A 45-year-old African American man" + TAIL, "race", ["asian", "hispanic"])
    assert result.texts["asian"] == "A 45-year-old Asian man" + TAIL
    assert result.texts["hispanic"] == "A 45-year-old Hispanic man" + TAIL


def test_unknown_group() -> None:
    with pytest.raises(ValueError):
        rewrite_attribute("A 45-year-old White man" + TAIL, "race", ["martian"])
    finding = find_race("A 45-year-old White man" + TAIL)
    with pytest.raises(ValueError):
        race_variant_text("A 45-year-old White man", finding, "martian")


def test_all_mentions_replaced() -> None:
    text = "A 45-year-old Black man of African descent has a cough. He is Black."
    result = rewrite_attribute(text, "race")
    assert result.texts["white"] == "A 45-year-old White man of European descent has a cough. He is White."
