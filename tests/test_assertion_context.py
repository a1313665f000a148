"""ConText rules of issue 13: comparatives, conditionals, subtypes, exclusion by reference, synonyms."""

from __future__ import annotations

import pytest

from clineval.text.assertion import Passage, ruled_out_mentions


def _out(target: str, text: str) -> bool:
    return bool(ruled_out_mentions([target], [Passage(text)])[target])


@pytest.mark.parametrize(
    ("sentence", "negated"),
    [
        ("Sepsis is not as immediately life-threatening as pneumonia.", False),
        ("Pneumonia is not as immediately life-threatening as sepsis.", False),
        ("Sepsis is less likely than pneumonia in this patient.", False),
        ("Pneumonia is less likely than sepsis.", False),
        ("Pneumonia is not as likely as heart failure.", False),
        ("Sepsis is more urgent than pneumonia.", False),
        ("Pneumonia is less likely given the clear film.", True),
        ("Pneumonia is less likely, and sepsis more likely.", True),
    ],
)
def test_comparatives_are_not_exclusions(sentence: str, negated: bool) -> None:
    assert _out("pneumonia", sentence) is negated


@pytest.mark.parametrize(
    ("sentence", "negated"),
    [
        ("If pneumonia is not the primary cause, consider sepsis.", False),
        ("Should pneumonia be excluded, we would treat for sepsis.", False),
        ("Sepsis is the leading diagnosis unless pneumonia is confirmed.", False),
        ("A clear film would argue against pneumonia if it were repeated.", False),
        ("In case pneumonia is ruled out, we will stop antibiotics.", False),
        ("We will check whether pneumonia is present.", False),
        ("The clear chest film argues against pneumonia.", True),
        ("Pneumonia has been ruled out by the CT.", True),
    ],
)
def test_conditionals_are_not_exclusions(sentence: str, negated: bool) -> None:
    assert _out("pneumonia", sentence) is negated


@pytest.mark.parametrize(
    ("target", "sentence", "negated"),
    [
        ("dysmenorrhea", "There is no evidence of secondary dysmenorrhea.", False),
        ("dysmenorrhea", "Secondary dysmenorrhea is unlikely.", False),
        ("pancreatitis", "No signs of chronic pancreatitis on imaging.", False),
        ("meningitis", "Bacterial meningitis is very unlikely.", False),
        ("dysmenorrhea", "There is no evidence of dysmenorrhea.", True),
        ("secondary dysmenorrhea", "There is no evidence of secondary dysmenorrhea.", True),
        ("chronic pancreatitis", "No signs of chronic pancreatitis.", True),
    ],
)
def test_negated_subtype_does_not_exclude_parent(target: str, sentence: str, negated: bool) -> None:
    assert _out(target, sentence) is negated


@pytest.mark.parametrize(
    ("text", "negated"),
    [
        ("Pneumonia and sepsis were considered. These diagnoses are less likely.", True),
        ("We discussed pneumonia and pulmonary embolism. Both are unlikely given the normal labs.", True),
        ("- pneumonia\n- sepsis\nThe above can be ruled out.", True),
        ("Pneumonia fits the fever. All of these are unlikely now.", True),
        ("Pneumonia fits the fever. This is unlikely.", False),
        ("Pneumonia was discussed. These symptoms are not typical.", False),
        ("Pneumonia was discussed. The film was clear. These are unlikely.", False),
        ("We need to rule out pneumonia. These are less likely.", False),
        ("Pneumonia and sepsis were considered. Both are likely.", False),
    ],
)
def test_exclusion_by_reference(text: str, negated: bool) -> None:
    assert _out("pneumonia", text) is negated


def test_reference_counts_only_the_preceding_sentence_targets() -> None:
    text = "Asthma is likely. Pneumonia and sepsis were raised. These are unlikely."
    found = ruled_out_mentions(["asthma", "pneumonia", "sepsis"], [Passage(text)])
    assert not found["asthma"] and found["pneumonia"] and found["sepsis"]
    assert "(by reference)" in found["sepsis"][0].trigger


_SYNONYMS = {"myocardial infarction": ["MI", "heart attack"], "pulmonary embolism": ["PE"]}


def _names(target: str) -> list[str]:
    return _SYNONYMS.get(target, [])


@pytest.mark.parametrize(
    ("target", "sentence", "negated"),
    [
        ("myocardial infarction", "An MI is unlikely with normal troponins.", True),
        ("myocardial infarction", "Heart attack was ruled out.", True),
        ("pulmonary embolism", "No evidence of PE on CTPA.", True),
        ("pulmonary embolism", "We must rule out PE.", False),
        ("myocardial infarction", "An MI is likely.", False),
    ],
)
def test_synonyms_from_names_for(target: str, sentence: str, negated: bool) -> None:
    found = ruled_out_mentions([target], [Passage(sentence)], names_for=_names)
    assert bool(found[target]) is negated


def test_without_names_for_synonyms_are_not_searched() -> None:
    assert not ruled_out_mentions(["myocardial infarction"], [Passage("An MI is unlikely.")])[
        "myocardial infarction"
    ]
