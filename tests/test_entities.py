"""Clinical entity extraction (clineval.text.entities): categories, keys, spans, negation, vocabulary."""

from __future__ import annotations

from pathlib import Path

import pytest

from clineval.quality.clinical_accuracy import entity_sets, extract_entities
from clineval.text.entities import (
    CATEGORIES,
    Category,
    build_vocabulary,
    default_vocabulary,
    drug_names,
    tokenize,
)
from clineval.text.entities import extract_entities as plain_extract


def keys(text: str) -> set[tuple[str, str]]:
    return {(e.category, e.key) for e in extract_entities(text) if not e.negated}


def test_categories_and_concept_keys() -> None:
    found = keys(
        "Acute MI with AKI after cardiac catheterization; started Tylenol and aspirin, troponin elevated. "
        "CT scan of the chest showed a pleural effusion."
    )
    assert ("diagnoses", "myocardial infarction") in found
    assert ("diagnoses", "acute kidney injury") in found  # abbreviation of a synonym group
    assert ("procedures", "cardiac catheterization") in found
    assert ("medications", "acetaminophen") in found  # brand name -> the drug's canonical name
    assert ("medications", "aspirin") in found
    assert ("labs_findings", "troponin") in found
    assert ("procedures", "computed tomography") in found
    # a diagnosis since vocabulary v3 lists it (pleural effusion > parapneumonic effusion); once, not twice
    assert ("diagnoses", "pleural effusion") in found and ("labs_findings", "pleural effusion") not in found


def test_synonyms_share_a_key() -> None:
    assert entity_sets("acute renal failure")["diagnoses"] == entity_sets("AKI")["diagnoses"]
    assert entity_sets("paracetamol")["medications"] == entity_sets("acetaminophen")["medications"]
    assert entity_sets("shortness of breath")["labs_findings"] == {"dyspnea"}
    assert entity_sets("ECG and EKG")["procedures"] == {"electrocardiogram"}


def test_spans_point_into_the_text() -> None:
    text = "Pt has Crohn's disease.\nStarted métformin? No: metformin 500mg."
    for e in plain_extract(text):
        assert text[e.start : e.end] == e.text
    (crohn,) = [e for e in plain_extract(text) if e.category == "diagnoses"]
    assert crohn.text == "Crohn's disease" and crohn.key == "crohn disease"


def test_longest_match_wins() -> None:
    (entity,) = plain_extract("type 2 diabetes mellitus")
    assert entity.key == "type 2 diabetes mellitus" and (entity.start, entity.end) == (0, 24)
    (entity,) = plain_extract("oxygen saturation 92%")
    assert entity.category == "labs_findings"  # not the medication "oxygen"


def test_negated_entities_are_not_claimed() -> None:
    text = "No fever or chest pain. Pulmonary embolism was ruled out. Started heparin."
    negated = {e.key: e.negated for e in extract_entities(text)}
    assert negated == {"fever": True, "chest pain": True, "pulmonary embolism": True, "heparin": False}
    assert entity_sets(text) == {
        "diagnoses": set(),
        "medications": {"heparin"},
        "procedures": set(),
        "labs_findings": set(),
    }
    # a possibility is not a negation ("cannot be ruled out")
    assert entity_sets("Pulmonary embolism cannot be ruled out.")["diagnoses"] == {"pulmonary embolism"}
    # the scope ends at the sentence: the second sentence is not negated
    assert entity_sets("No fever. Cough for 3 days.")["labs_findings"] == {"cough"}
    # without a detector nothing is negated
    assert not any(e.negated for e in plain_extract(text))


def test_english_words_are_not_drugs_or_diseases() -> None:
    # brand names whose stem is an English word's ("Prominal", "Beforal"), adjectives sharing a disease's stem
    text = "Before admission a prominent, rapid, agitated vaginal bleeding; cervical tenderness."
    found = entity_sets(text)
    assert found["medications"] == set()
    assert "vaginitis" not in found["diagnoses"] and "cervicitis" not in found["diagnoses"]


def test_tokenize_contractions_and_offsets() -> None:
    words, starts, ends = tokenize("Doesn't take Sjögren's 75mg")
    assert words == ["doesn", "not", "take", "sjogren", "75", "mg"]
    assert (starts[3], ends[3]) == (13, 20)


def test_empty_and_no_entity_texts() -> None:
    assert plain_extract("") == []
    assert plain_extract("The weather is nice today.") == []
    assert set(entity_sets("")) == set(CATEGORIES)


def test_vocabulary_sizes_and_sources() -> None:
    vocab = default_vocabulary()
    sizes = vocab.sizes()
    assert sizes["diagnoses"]["concepts"] > 1000
    assert sizes["medications"]["concepts"] > 10000  # drug-named-entity-recognition is installed
    assert sizes["procedures"]["concepts"] > 100 and sizes["labs_findings"]["concepts"] > 150
    assert any("drug_named_entity_recognition" in s for s in vocab.sources)
    assert len(vocab.sha256) == 64
    assert ("hydrochlorothiazide", "Hydrochlorothiazide") in set(drug_names())


def test_extra_files_and_no_drug_package(tmp_path: Path) -> None:
    extra = tmp_path / "local.txt"
    extra.write_text("# local procedures\nwidget insertion | widgetectomy\n", encoding="utf-8")
    vocab = build_vocabulary(drugs=False, extra_files=[(extra, "procedures")])
    found = {(e.category, e.key) for e in plain_extract("Widgetectomy then metformin", vocabulary=vocab)}
    assert found == {("procedures", "widget insertion")}


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_category_is_found_in_medqa_text(category: Category) -> None:
    text = (
        "A 61-year-old man with type 2 diabetes mellitus takes insulin and naproxen. He underwent cardiac "
        "catheterization with stenting. His creatinine is 2.1 mg/dL and he has fever."
    )
    assert entity_sets(text)[category]
