"""Sex swap: pronouns, nouns, titles, partner, case, possessives, the her heuristic, coherence skips."""

import pytest

from clineval.counterfactual.rewrite import rewrite, rewrite_attribute
from clineval.counterfactual.rewrite_sex import find_sex, her_is_object


def female(text: str) -> str | None:
    return rewrite(text, "sex", "female")


def male(text: str) -> str | None:
    return rewrite(text, "sex", "male")


def test_man_to_woman_keeps_case_and_possessives() -> None:
    text = (
        "A 45-year-old man comes because of a cough. He says his cough started after he visited "
        "the man's farm."
    )
    assert female(text) == (
        "A 45-year-old woman comes because of a cough. She says her cough started after "
        "she visited the woman's farm."
    )
    assert male(text) == text  # the variant that is already stated is the text itself


def test_woman_to_man_and_the_her_heuristic() -> None:
    text = (
        "A 30-year-old woman comes to her physician. She says her back hurts. The physician examined her, "
        "asked her to walk, gave her the medication, and sent her home. She took herself to her home. "
        "Her husband told her that she should rest."
    )
    assert male(text) == (
        "A 30-year-old man comes to his physician. He says his back hurts. The physician examined him, "
        "asked him to walk, gave him the medication, and sent him home. He took himself to his home. "
        "His wife told him that he should rest."
    )


@pytest.mark.parametrize(
    ("text", "obj"),
    [
        ("examined her.", True),
        ("asked her to", True),
        ("her last menstrual", False),
        ("her 3 children", False),
        ("gave her 2 mg", True),
        ("her own", False),
        ("sent her home", True),
        ("at her home", False),
        ("her back pain", False),
        ("helped her control", True),
        ("told her she", True),
        ("found her unconscious", True),
        ('and her "face looked', False),
        ('he hates her" and', True),
        ("with her daily routine", False),
    ],
)
def test_her_object_or_possessive(text: str, obj: bool) -> None:
    start = text.index("her")
    assert her_is_object(text, start, start + 3) is obj


def test_his_at_the_end_of_a_phrase_becomes_hers() -> None:
    text = "A 40-year-old man says the decision is his. He agrees."
    assert female(text) == "A 40-year-old woman says the decision is hers. She agrees."


def test_never_inside_other_words() -> None:
    text = (
        "A 50-year-old man from Manchester is the department chairman. He is human; he has herpes, "
        "a hernia, and a shepherd dog named Sheila. There, the other hero manages."
    )
    out = female(text)
    assert out == (
        "A 50-year-old woman from Manchester is the department chairman. She is human; she has herpes, "
        "a hernia, and a shepherd dog named Sheila. There, the other hero manages."
    )


def test_all_caps_tokens_are_abbreviations() -> None:
    text = "A 50-year-old man has HE (hepatic encephalopathy). He is confused."
    assert female(text) == "A 50-year-old woman has HE (hepatic encephalopathy). She is confused."


def test_partner_is_swapped_with_the_patient() -> None:
    text = "A 45-year-old man is brought by his wife. She says he fainted. His wife's brother is a nurse."
    assert female(text) == (
        "A 45-year-old woman is brought by her husband. He says she fainted. "
        "Her husband's brother is a nurse."
    )


def test_titles() -> None:
    assert (
        female("Mr. Smith, a 45-year-old man, has a cough.") == "Ms. Smith, a 45-year-old woman, has a cough."
    )
    assert (
        male("Mrs. Jones, a 60-year-old woman, has a cough.") == "Mr. Jones, a 60-year-old man, has a cough."
    )


def test_male_female_nouns_and_hyphenated_anchor() -> None:
    assert male("A 37-year-old-woman presents. She is well.") == "A 37-year-old-man presents. He is well."
    assert female("A 61-year-old Caucasian male presents. He is well.") == (
        "A 61-year-old Caucasian female presents. She is well."
    )


def test_son_daughter_only_as_the_patient() -> None:
    text = "A 5-year-old son of farm workers has a fever. He has a cough. His son is healthy."
    assert (
        female(text)
        == "A 5-year-old daughter of farm workers has a fever. She has a cough. Her son is healthy."
    )


def test_other_sex_pronoun_for_a_relative_skips() -> None:
    text = "A 4-year-old boy is brought by his mother. She says he has had a fever."
    result = rewrite_attribute(text, "sex")
    assert result.status == "skipped" and result.skipped_by == ("sex.coherence.other_person",)
    assert result.texts == {}


def test_same_sex_relative_acting_skips() -> None:
    text = "A mother brings her 6-year-old daughter because she has a rash."
    assert rewrite_attribute(text, "sex").skipped_by == ("sex.coherence.other_person",)
    text = "A 6-year-old girl has a rash. Her mother says she scratches at night."
    assert rewrite_attribute(text, "sex").skipped_by == ("sex.coherence.other_person",)


def test_same_sex_relative_in_the_history_is_a_warning() -> None:
    text = "A 55-year-old man has chest pain. His father had a myocardial infarction at 50. He smokes."
    result = rewrite_attribute(text, "sex")
    assert result.status == "swapped"
    assert result.texts["female"] == (
        "A 55-year-old woman has chest pain. Her father had a myocardial infarction at 50. She smokes."
    )
    assert result.warnings and "father" in result.warnings[0]


def test_sex_from_pronouns_with_a_neutral_noun() -> None:
    assert find_sex("A 62-year-old patient has a stroke. He develops a fever.").sex == "M"
    assert find_sex("A 3-month-old infant is brought to her pediatrician.").sex == "F"
    assert find_sex("A 30-year-old presents with a rash.").reason == "patient's sex not stated"
    assert find_sex("A microbiologist studies a virus. He proposes a theory.").reason.startswith("no patient")


def test_not_applicable_without_a_patient() -> None:
    result = rewrite_attribute("An investigator studies 200 patients. She finds a difference.", "sex")
    assert result.status == "not_applicable"


def test_options_follow_the_patient() -> None:
    result = rewrite_attribute(
        "A 30-year-old man has anxiety. He cannot sleep. What should the physician do?",
        "sex",
        options=["Reassure him", "Refer him to a psychiatrist", "Ask his wife"],
    )
    assert result.options["female"] == ("Reassure her", "Refer her to a psychiatrist", "Ask her husband")
    assert result.options["male"] == ("Reassure him", "Refer him to a psychiatrist", "Ask his wife")


def test_swap_twice_returns_the_text() -> None:
    text = (
        "A 45-year-old man says his chest hurts. The nurse gave him aspirin. "
        "He thanked the nurse for his care."
    )
    there = female(text)
    assert there is not None
    assert male(there) == text


def test_provenance_is_recorded() -> None:
    result = rewrite_attribute("A 45-year-old man has a cough. He smokes.", "sex")
    assert result.rule == "sex@1" and len(result.rule_sha256) == 64
