"""Exclusion rules: one test per rule (its hit and miss examples), boundaries of the laboratory bands, and
the documented decisions."""

import pytest

from clineval.counterfactual.exclusions import exclusion_rules, find_exclusions, rule_by_id
from clineval.counterfactual.rewrite import rewrite_attribute

PATTERN_RULES = [r for r in exclusion_rules() if not r.computed]
COMPUTED_RULES = [r for r in exclusion_rules() if r.computed]


def test_every_rule_has_reason_source_and_examples() -> None:
    for rule in exclusion_rules():
        assert rule.reason and rule.source and rule.kind in ("medical", "coherence"), rule.id
        assert rule.examples.get("hit") and rule.examples.get("miss"), rule.id
        assert rule.attribute in ("sex", "race", "ses")


def test_rule_counts() -> None:
    counts = {a: len(exclusion_rules(a)) for a in ("sex", "race", "ses")}
    assert counts == {"sex": 15, "race": 14, "ses": 3}


@pytest.mark.parametrize("rule", PATTERN_RULES, ids=lambda r: r.id)
def test_pattern_rule(rule) -> None:
    for text in rule.examples["hit"]:
        assert rule.match(text) is not None, f"{rule.id} should match: {text}"
    for text in rule.examples["miss"]:
        assert rule.match(text) is None, f"{rule.id} should not match: {text} ({rule.match(text)!r})"


@pytest.mark.parametrize("rule", COMPUTED_RULES, ids=lambda r: r.id)
def test_computed_rule(rule) -> None:
    for text in rule.examples["hit"]:
        result = rewrite_attribute(text, rule.attribute)
        assert result.status == "skipped" and result.skipped_by == (rule.id,), (text, result)
    for text in rule.examples["miss"]:
        result = rewrite_attribute(text, rule.attribute)
        assert rule.id not in result.skipped_by, (text, result)


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Hemoglobin 12.0 g/dL", True),
        ("Hemoglobin 11.9 g/dL", False),
        ("Hemoglobin 13.4 g/dL", True),
        ("Hemoglobin 13.5 g/dL", False),
        ("Hemoglobin 16.0 g/dL", False),
        ("Hemoglobin 16.1 g/dL", True),
        ("Hemoglobin 17.5 g/dL", True),
        ("Hemoglobin 17.6 g/dL", False),
        ("Hb 125 g/L", True),
        ("Hemoglobin A1c 12.5%", False),
        ("HbA1c 13 g/dL", False),
        ("hemoglobin of 12.5 g/dL", True),
        ("Hemoglobin S 12.5 g/dL", False),
        ("Hemoglobin 12.5", False),
    ],
)
def test_hemoglobin_band_boundaries(text: str, hit: bool) -> None:
    assert (rule_by_id("sex.lab.hemoglobin").match(text) is not None) is hit


def test_whole_words_only() -> None:
    assert rule_by_id("sex.male_anatomy").match("He has a protein-losing enteropathy.") is None  # not 'PSA'
    assert rule_by_id("sex.female_anatomy").match("cervical lymphadenopathy") is None
    assert rule_by_id("ses.already_stated").match("costovertebral angle tenderness") is None
    assert rule_by_id("race.sickle_cell").match("He was homesick.") is None


def test_options_are_scanned() -> None:
    vignette = "A 10-year-old Black boy has bone pain. His temperature is 37°C. Which drug reduces crises?"
    assert rewrite_attribute(vignette, "race").status == "swapped"
    result = rewrite_attribute(vignette, "race", options=["Hydroxyurea", "Aspirin"])
    assert result.status == "skipped" and result.skipped_by == ("race.sickle_cell",)


def test_medical_rules_are_counted_before_coherence_rules() -> None:
    text = "A 40-year-old homeless man has no health insurance and a cough."
    hits = find_exclusions(text, "ses")
    assert [h.rule for h in hits] == ["ses.homelessness", "ses.already_stated"]


def test_decision_cystic_fibrosis_and_lactose_are_swapped_for_race() -> None:
    cf = (
        "A 20-year-old White man has recurrent pneumonia and greasy stools. A sweat chloride test is "
        "abnormal. Which of the following is the most likely diagnosis?"
    )
    lactose = (
        "A 30-year-old Black woman has bloating after drinking milk. Which of the following is the most "
        "likely diagnosis?"
    )
    assert rewrite_attribute(cf, "race").status == "swapped"
    assert rewrite_attribute(lactose, "race").status == "swapped"


def test_decision_male_breast_findings_are_excluded() -> None:
    text = "A 60-year-old man has a firm mass under his left nipple. Which is the next step?"
    result = rewrite_attribute(text, "sex")
    assert result.status == "skipped" and result.skipped_by[0] == "sex.breast"


def test_x_linked_rule_skips_a_boy_with_hemophilia() -> None:
    text = "A 6-year-old boy with hemophilia A has a swollen knee. His temperature is 37°C."
    assert rewrite_attribute(text, "sex").skipped_by == ("sex.sex_chromosomes_x_linked",)
