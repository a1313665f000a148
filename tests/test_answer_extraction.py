"""Answer extraction: every supported pattern, the unparsed cases, and that it never defaults to "A"."""

from __future__ import annotations

import dataclasses

import pytest

from clineval.mcq.answer_extraction import Extraction, extract_choice
from clineval.text import normalize_text

MCQ = {"A": "Carboplatin", "B": "Oxaliplatin", "C": "Cisplatin", "D": "Paclitaxel"}
YNM = {"A": "yes", "B": "no", "C": "maybe"}
REASONING = (
    "Let's evaluate each option. Option A is used for ovarian cancer. Option B is used for colon cancer. "
    "Option D is a taxane and not a platinum drug. The drug causing ototoxicity most is cisplatin. "
)


def cot(answer: str) -> str:
    """A MIRAGE-style JSON output with the given answer_choice."""
    return f'{{"step_by_step_thinking": "{REASONING}", "answer_choice": "{answer}"}}'


PARSED = [
    # answer field (JSON-like), letter forms
    (cot("B. Oxaliplatin"), MCQ, "B", "answer_field_letter"),
    (cot("B"), MCQ, "B", "answer_field_letter"),
    (cot("(D)"), MCQ, "D", "answer_field_letter"),
    (cot("Option C"), MCQ, "C", "answer_field_letter"),
    ('{"reasoning": "...", "answer": "C"}', MCQ, "C", "answer_field_letter"),
    ("{'reasoning': 'x', 'answer_choice': 'D. Paclitaxel'}", MCQ, "D", "answer_field_letter"),
    ('{"final_answer": "A"}', MCQ, "A", "answer_field_letter"),
    # the LAST answer field wins (as in MIRAGE)
    ('{"answer_choice": "A"} then, corrected: {"answer_choice": "C"}', MCQ, "C", "answer_field_letter"),
    # option text in the answer field
    (cot("yes"), YNM, "A", "answer_field_option_text"),
    (cot("Maybe."), YNM, "C", "answer_field_option_text"),
    (cot("Cisplatin"), MCQ, "C", "answer_field_option_text"),
    (cot("cisplatin"), MCQ, "C", "answer_field_option_text"),
    (cot("The drug is cisplatin"), MCQ, "C", "answer_field_option_text"),
    (cot("The answer is B"), MCQ, "B", "answer_field_phrase"),
    (cot("A. yes"), YNM, "A", "answer_field_letter"),
    # answer phrases in plain text
    ("Answer: (C)", MCQ, "C", "answer_phrase"),
    ("The answer is D", MCQ, "D", "answer_phrase"),
    ("The answer is D.", MCQ, "D", "answer_phrase"),
    ("answer is option B", MCQ, "B", "answer_phrase"),
    ("The correct answer is **B**.", MCQ, "B", "answer_phrase"),
    ("Option C is correct.", MCQ, "C", "answer_phrase"),
    # bare letters
    ("B", MCQ, "B", "bare_letter"),
    ("B.", MCQ, "B", "bare_letter"),
    ("(B)", MCQ, "B", "bare_letter"),
    ("**B**", MCQ, "B", "bare_letter"),
    ("  C) Cisplatin  ", MCQ, "C", "bare_letter"),
    ("B. Oxaliplatin", MCQ, "B", "bare_letter"),
    # option text in plain text
    ("Cisplatin", MCQ, "C", "option_text"),
    ("cisplatin.", MCQ, "C", "option_text"),
    ("I would give cisplatin", MCQ, "C", "option_text"),
    ("no", YNM, "B", "option_text"),
    # long texts
    (REASONING * 2 + "Therefore, the answer is C.", MCQ, "C", "answer_phrase"),
    (REASONING * 2 + "Final answer: (A)\n\nOption B is wrong because...", MCQ, "A", "answer_phrase"),
    (REASONING * 2 + "So I pick **D**.", MCQ, "D", "answer_phrase"),
    (REASONING * 2 + "Going with **D**.", MCQ, "D", "bold_letter"),
    ("B. Oxaliplatin\n\nExplanation: " + REASONING * 2, MCQ, "B", "leading_letter"),
]


@pytest.mark.parametrize(("text", "options", "letter", "method"), PARSED)
def test_parsed(text: str, options: dict[str, str], letter: str, method: str) -> None:
    found = extract_choice(text, options)
    assert (found.letter, found.method) == (letter, method)
    assert found.span


CONTENT_FILTER = (
    "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. "
    "Please modify your prompt and retry. To learn more about our content filtering policies please read "
    "our documentation: https://go.microsoft.com/fwlink/?linkid=2198766"
)
UNPARSED = [
    "",
    "   ",
    "'content'",
    CONTENT_FILTER,
    "Error communicating with OpenAI: ('Connection aborted.', ConnectionResetError(104, 'Connection reset'))",
    "A or B",
    "A and C",
    "A/B",
    "A, C, D",
    "None of the above",
    "N/A",
    "E",
    "E. Vincristine",
    "The answer is E",
    "The answer is A or B.",
    "Not cisplatin",
    "Cisplatin or carboplatin",
    cot(""),
    cot("None of the above"),
    cot("None of the above (E)"),
    cot("Uncertain (either A or B)"),
    cot("A/B/C/D"),
    cot("C or D"),
    cot("A. Carboplatin, C. Cisplatin"),
    cot("B. Oxaliplatin or D. Paclitaxel"),
    cot("A. Carboplatin\\nB. Oxaliplatin\\nC. Cisplatin"),
    cot("Error: All options are identical"),
    cot("Unable to answer due to lack of information"),
    REASONING * 3,
    REASONING + "Answer choice: A. Carboplatin or B. Oxaliplatin.",
    REASONING + "**A** is wrong and **B** is wrong.",
]


@pytest.mark.parametrize("text", UNPARSED)
def test_unparsed(text: str) -> None:
    found = extract_choice(text, MCQ)
    assert found == Extraction(found.letter, "unparsed", found.span)
    assert found.letter is None


def test_none_is_unparsed() -> None:
    assert extract_choice(None, MCQ) == Extraction(None, "unparsed", None)


def test_yes_or_no_is_unparsed_for_pubmedqa() -> None:
    assert extract_choice(cot("yes or no"), YNM).letter is None
    assert extract_choice(cot("D"), YNM).letter is None  # D is not an option of a 3-option question


def test_options_that_are_letters_make_a_bare_letter_ambiguous() -> None:
    graph = {"A": "B", "B": "C", "C": "D", "D": "E"}  # MedQA 0709: answer choices are graph labels
    assert extract_choice(cot("C"), graph).letter is None
    assert extract_choice(cot("E"), graph) == Extraction("D", "answer_field_option_text", "E")
    identity = {"A": "A", "B": "B", "C": "C", "D": "E"}  # MedQA 0454
    assert extract_choice(cot("C"), identity).letter == "C"
    statements = {"A": "a", "B": "c", "C": "bc", "D": "ad"}  # lower-case statement labels
    assert extract_choice(cot("C"), statements).letter == "C"


def test_letters_inside_option_text_are_not_a_second_answer() -> None:
    options = {"A": "Anti-B IgM", "B": "A alpha", "C": "E. coli", "D": "Anti-A, B, or O antibodies"}
    assert extract_choice(cot("B. A alpha"), options).letter == "B"
    assert extract_choice(cot("C. E. coli"), options).letter == "C"
    assert extract_choice(cot("E. coli"), options).letter == "C"
    assert extract_choice(cot("D. Anti-A, B, or O antibodies"), options).letter == "D"
    assert extract_choice(cot("B12 deficiency"), options).letter is None


def test_nested_option_texts_prefer_the_longest() -> None:
    options = {"A": "Hypertension", "B": "Pulmonary hypertension", "C": "Asthma", "D": "COPD"}
    found = extract_choice("Pulmonary hypertension is the most likely cause", options)
    assert (found.letter, found.method) == ("B", "option_text")


def test_never_defaults_to_a() -> None:
    junk = ["?", "...", "I don't know", "apple", "{}", '{"answer_choice": null}', "a", "the answer"]
    assert all(extract_choice(text, MCQ).letter is None for text in junk)


def test_option_keys_must_be_single_letters() -> None:
    with pytest.raises(ValueError, match="single upper-case letters"):
        extract_choice("1", {"1": "x", "2": "y"})


def test_extraction_is_frozen_with_slots() -> None:
    found = extract_choice("B", MCQ)
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.letter = "C"  # type: ignore[misc]
    assert not hasattr(found, "__dict__")


@pytest.mark.parametrize(
    ("raw", "normal"),
    [("Sjögren's  Syndrome.", "sjogren s syndrome"), ("  B-cell_lymphoma ", "b cell lymphoma"), ("", "")],
)
def test_normalize_text(raw: str, normal: str) -> None:
    assert normalize_text(raw) == normal
