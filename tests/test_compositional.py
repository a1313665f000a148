"""Diagnosis names split into components: hand-written expectations on real names from the DDx data."""
# ruff: noqa: E501  (the table holds real names, one case a line)

from __future__ import annotations

import pytest

from clineval.text.names.compositional import LINKS, components

# (name as found in the data, role, expected value), each written by hand
CASES = [
    ("Hypoglycemia Due To Insulinoma", "condition", "Hypoglycemia"),
    ("Hypoglycemia Due To Insulinoma", "causes", ("Insulinoma",)),
    ("Left Pneumothorax With Hemothorax", "condition", "Pneumothorax"),
    ("Left Pneumothorax With Hemothorax", "with_", ("Hemothorax",)),
    ("Left Pneumothorax With Hemothorax", "qualifiers_dropped", ("Left",)),
    ("Hemochromatosis-Related Osteoarthritis", "condition", "Osteoarthritis"),
    ("Hemochromatosis-Related Osteoarthritis", "causes", ("Hemochromatosis",)),
    ("Hemolytic Disease Of The Newborn (Hdn) Due To Abo Incompatibility", "condition", "Hemolytic Disease Of The Newborn"),
    ("Hemolytic Disease Of The Newborn (Hdn) Due To Abo Incompatibility", "causes", ("Abo Incompatibility",)),
    ("Rh or ABO incompatibility", "alternatives", ("Rh incompatibility", "ABO incompatibility")),
    ("vascular insufficiency (atherosclerosis, arteriosclerosis)", "condition", "vascular insufficiency"),
    ("vascular insufficiency (atherosclerosis, arteriosclerosis)", "causes", ("atherosclerosis", "arteriosclerosis")),
    ("vascular insufficiency (atherosclerosis, arteriosclerosis)", "aliases", ()),
    ("Atherosclerotic Peripheral Artery Disease (Pad)", "aliases", ("Pad",)),
    ("Atherosclerotic Peripheral Artery Disease (Pad)", "condition", "Atherosclerotic Peripheral Artery Disease"),
    ("Acute Liver Failure Secondary To Hepatitis C", "causes", ("Hepatitis C",)),
    ("Acute Liver Failure Secondary To Hepatitis C", "condition", "Acute Liver Failure"),
    ("Cocaine-induced myocardial ischemia", "condition", "myocardial ischemia"),
    ("Cocaine-induced myocardial ischemia", "causes", ("Cocaine",)),
    ("HIV-associated dementia", "causes", ("HIV",)),
    ("deep vein thrombosis with pulmonary embolism", "with_", ("pulmonary embolism",)),
    ("dementia with Lewy bodies", "condition", "dementia with Lewy bodies"),
    ("dementia with Lewy bodies", "with_", ()),
    ("Major depressive disorder with suicidal ideation", "condition", "Major depressive disorder with suicidal ideation"),
    ("Migraine with sensory aura", "with_", ()),
    ("drug rash with eosinophilia and systemic symptoms (DRESS)", "condition", "drug rash with eosinophilia and systemic symptoms"),
    ("drug rash with eosinophilia and systemic symptoms (DRESS)", "aliases", ("DRESS",)),
    ("esophageal atresia with or without tracheoesophageal fistula (TEF)", "with_", ()),
    ("constitutional delay of growth and puberty", "with_", ()),
    ("Subdural or epidural hematoma", "alternatives", ("Subdural hematoma", "epidural hematoma")),
    ("Hemophilia A or B", "alternatives", ("Hemophilia A", "Hemophilia B")),
    ("anxiety disorder or panic attack", "alternatives", ("anxiety disorder", "panic attack")),
    ("bladder or kidney cancer", "alternatives", ("bladder cancer", "kidney cancer")),
    ("Bronchospasm / acute asthma exacerbation", "alternatives", ("Bronchospasm", "acute asthma exacerbation")),
    ("Right-sided heart failure", "condition", "heart failure"),
    ("Right-sided heart failure", "qualifiers_dropped", ("Right-sided",)),
    ("Acute left heart failure", "condition", "Acute heart failure"),
    ("sexually transmitted infection (gonorrhea, chlamydia, syphilis)", "examples", ("gonorrhea", "chlamydia", "syphilis")),
    ("sexually transmitted infection (gonorrhea, chlamydia, syphilis)", "causes", ()),
    ("dementia (such as Alzheimer's disease)", "examples", ("Alzheimer's disease",)),
    ("adhesive capsulitis (frozen shoulder)", "aliases", ("frozen shoulder",)),
    ("cerebrovascular accident (CVA or stroke)", "aliases", ("CVA", "stroke")),
    ("Cardiac arrhythmia (causing syncope)", "notes", ("causing syncope",)),
    ("drug intoxication (opioids, benzodiazepines, GHB, or others)", "causes", ("opioids", "benzodiazepines", "GHB")),
    ("Orthostatic hypotension due to dehydration(diarrhea, diuretic use)", "condition", "Orthostatic hypotension"),
    ("malignancies such as Wilms' tumor or Neuroblastoma", "examples", ("Wilms' tumor", "Neuroblastoma")),
    ("malignancies such as Wilms' tumor or Neuroblastoma", "condition", "malignancies"),
    ("Possible NSTEMI / STEMI", "alternatives", ("NSTEMI", "STEMI")),
    ("Akathisia: While Akathisia Can Present With Restlessness And Repetitive Movements", "condition", "Akathisia"),
    ("Akathisia: While Akathisia Can Present With Restlessness And Repetitive Movements", "with_", ()),
    ("Insomnia related to major depressive disorder", "causes", ("major depressive disorder",)),
    ("Antiphospholipid Syndrome With Thrombotic Microangiopathy", "with_", ("Thrombotic Microangiopathy",)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "role", "expected"), CASES)
def test_components_of_real_names(name: str, role: str, expected: object) -> None:
    assert getattr(components(name), role) == expected


def test_plain_name_has_no_components() -> None:
    comp = components("pneumonia")
    assert comp.condition == "pneumonia" and comp.patterns == () and comp.causes == comp.with_ == ()


def test_explanation_names_the_patterns() -> None:
    comp = components("Left Pneumothorax With Hemothorax")
    assert "with 'Hemothorax'" in comp.explanation and "laterality" in comp.explanation


def test_registry_is_table_driven() -> None:
    assert [link.name for link in LINKS] == [
        "examples",
        "due_to",
        "with",
        "prefix_cause",
        "or",
        "slash",
        "and",
    ]
