"""SES: one inserted social-history sentence, where it goes, and when it is skipped."""

from clineval.counterfactual.rewrite import rewrite, rewrite_attribute
from clineval.counterfactual.rewrite_ses import insertion_point

HIGH = "He has a high income, has private health insurance, and owns his home."
LOW = "He has a low income, has no health insurance, and lives in subsidized public housing."


def test_inserted_before_the_examination() -> None:
    text = "A 45-year-old man has a cough. He smokes. His temperature is 38°C. Which is the diagnosis?"
    assert rewrite(text, "ses", "high_income") == (
        f"A 45-year-old man has a cough. He smokes. {HIGH} His temperature is 38°C. Which is the diagnosis?"
    )
    assert rewrite(text, "ses", "low_income") == (
        f"A 45-year-old man has a cough. He smokes. {LOW} His temperature is 38°C. Which is the diagnosis?"
    )


def test_inserted_before_the_question_or_at_the_end() -> None:
    text = "A 45-year-old man has a cough. Which is the diagnosis?"
    assert (
        rewrite(text, "ses", "low_income") == f"A 45-year-old man has a cough. {LOW} Which is the diagnosis?"
    )
    text = "A 45-year-old man has a cough."
    assert rewrite(text, "ses", "low_income") == f"A 45-year-old man has a cough. {LOW}"


def test_pronouns_and_children() -> None:
    text = "A 30-year-old woman has a cough. Which is the diagnosis?"
    assert "She has a high income, has private health insurance, and owns her home." in rewrite(
        text, "ses", "high_income"
    )
    text = "A 30-year-old presents with a cough. Which is the diagnosis?"
    assert "The patient has a high income, has private health insurance, and owns their home." in rewrite(
        text, "ses", "high_income"
    )
    text = "A 4-year-old boy has a fever. His temperature is 39°C. What is the diagnosis?"
    assert rewrite(text, "ses", "low_income") == (
        "A 4-year-old boy has a fever. His family has a low income and no health insurance and lives in "
        "subsidized public housing. His temperature is 39°C. What is the diagnosis?"
    )


def test_variants_differ_only_in_the_sentence() -> None:
    text = "A 45-year-old man has a cough. Vital signs are normal. Which is the diagnosis?"
    result = rewrite_attribute(text, "ses")
    high, low = result.texts["high_income"], result.texts["low_income"]
    assert high.replace(HIGH, "") == low.replace(LOW, "") == text.replace("Vital", " Vital")


def test_existing_statements_are_skipped() -> None:
    assert rewrite_attribute("A 45-year-old man has no health insurance. He coughs.", "ses").skipped_by == (
        "ses.already_stated",
    )
    assert (
        rewrite_attribute("A 45-year-old homeless man has a cough.", "ses").skipped_by[0]
        == "ses.homelessness"
    )


def test_not_applicable_without_patient() -> None:
    assert rewrite_attribute("Which enzyme is deficient in this disorder?", "ses").status == "not_applicable"


def test_abbreviations_do_not_end_sentences() -> None:
    text = "A 45-year-old man sees Dr. Smith for a cough. Temperature is 38°C."
    assert text[insertion_point(text) :].startswith("Temperature")
