"""Diagnosis equivalence: tiers on real names (Open-XDDx, DDXPlus, LDDx), negatives, vocabulary files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from clineval.core.errors import DataFileError
from clineval.text import Equivalence, best_match, equivalent, load_vocabulary, name_forms
from clineval.text.names.diagnosis_vocab import diagnosis_vocab_sha256


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("acute kidney injury (AKI)", "Acute Kidney Injury"),  # Open-XDDx vs LDDx
        ("acute kidney injury (AKI)", "AKI"),
        ("Acute MI", "acute myocardial infarction"),  # packaged abbreviation inventory
        ("Hirschsprung disease", "Hirschsprung'S Disease"),
        ("Endometriosis: Endometriosis Can Cause Pelvic Pain", "endometriosis"),  # explanation cut
        ("Testicular Torsion-The Patient'S Presentation Includes Sudden Pain", "testicular torsion"),
        ("Possible NSTEMI / STEMI", "STEMI"),  # DDXPlus
        ("varicella (chickenpox)", "Varicella (Chickenpox)"),
        ("Oesophageal cancer", "esophageal cancer"),
        ("Guillain-Barré syndrome", "guillain barre syndrome"),
    ],
)
def test_exact_tier(a: str, b: str) -> None:
    assert equivalent(a, b) == Equivalence(True, "exact", 1.0, equivalent(a, b).explanation)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("acute kidney injury", "acute kidney failure"),
        ("AKI", "acute renal failure"),
        ("myocardial infarction", "Acute Myocardial Infarction"),
        ("PE", "pulmonary embolism"),
        ("CHF", "heart failure"),
        ("DVT", "deep venous thrombosis"),
        ("myocardial contusion", "Cardiac Contusion"),  # LDDx TP pair
        ("primary aldosteronism", "Primary Hyperaldosteronism"),  # LDDx TP pair
        ("Hirschsprung disease", "Congenital Megacolon"),  # LDDx TP pair
        ("Lewy body dementia", "Dementia With Lewy Bodies (Dlb)"),
    ],  # ("MI", "heart attack"), ("Whooping cough", "pertussis"): lay names since issue 25 (test_lay_names)
)
def test_synonym_tier(a: str, b: str) -> None:
    result = equivalent(a, b)
    assert (result.equivalent, result.tier, result.confidence) == (True, "synonym", 0.95)
    assert "synonym group" in result.explanation


def test_hierarchy_tier_is_weaker_and_symmetric() -> None:
    for a, b in [("AKI", "contrast-induced nephropathy"), ("contrast-induced nephropathy", "AKI")]:
        result = equivalent(a, b)
        assert (result.equivalent, result.tier, result.confidence) == (True, "hierarchy", 0.7)
        assert "subtype" in result.explanation
    deep = equivalent("acute kidney injury", "drug-induced interstitial nephritis")
    assert (deep.tier, deep.confidence) == ("hierarchy", 0.6)
    assert equivalent("community-acquired pneumonia", "Pneumonia").tier == "hierarchy"  # LDDx TP pair
    assert equivalent("type 1 diabetes", "diabetes").tier == "hierarchy"


@pytest.mark.parametrize(
    ("a", "b", "low", "high"),
    [
        ("pulmonary embolism", "Acute Pulmonary Embolism", 0.78, 0.79),  # J = 2/3
        ("diabetes mellitus type 2", "type 2 diabetes mellitus", 0.9, 0.9),
        ("left pneumothorax", "Pneumothorax", 0.9, 0.9),  # laterality on one side only is a detail
        ("fibroadenoma", "Benign Fibroadenoma", 0.72, 0.73),
    ],
)
def test_overlap_tier(a: str, b: str, low: float, high: float) -> None:
    result = equivalent(a, b)
    assert result.equivalent and result.tier == "overlap"
    assert low <= result.confidence <= high


@pytest.mark.parametrize(
    ("a", "b", "added"),
    [
        (
            "hemolytic uremic syndrome (HUS)",
            "Hemolytic Uremic Syndrome (Hus) Due To Shiga Toxin",
            "shiga toxin",
        ),
        ("type 1 neurofibromatosis", "neurofibromatosis", "type 1"),  # a number on one side only
        ("lung cancer", "small cell lung cancer", "small cell"),
    ],
)
def test_a_name_that_adds_a_narrowing_word_is_a_subtype(a: str, b: str, added: str) -> None:
    """Issue 13: subtypes are hierarchy, not overlap; severity/course words ("acute") do not narrow."""
    result = equivalent(a, b)
    assert (result.equivalent, result.tier, result.confidence) == (True, "hierarchy", 0.6)
    assert added in result.explanation.lower()
    assert equivalent(a, b, vocab=None).tier == best_match(a, [b])[1].tier
    assert best_match(a, [b], allow_hierarchy=False)[0] is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Type I diabetes", "Type II diabetes"),
        ("German measles", "measles"),  # a modifier that names another disease (rubella)
        ("diabetes insipidus", "diabetes mellitus"),
        ("hypertension", "hypotension"),
        ("hyperthyroidism", "hypothyroidism"),
        ("left pneumothorax", "right pneumothorax"),
        ("hepatitis A", "hepatitis B"),
        ("NSTEMI", "STEMI"),
        ("non-ST elevation MI", "ST elevation myocardial infarction"),
        ("vascular dementia", "dementia with Lewy bodies"),
        ("acute bronchitis", "chronic bronchitis"),
        ("pseudogout", "Gout"),  # LDDx calls this a TP; they are distinct crystal arthropathies
        ("Crohn's disease", "ulcerative colitis"),
        ("pneumonia", "pneumothorax"),
        ("", "pneumonia"),
        ("the", "pneumonia"),
    ],
)
def test_negatives(a: str, b: str) -> None:
    result = equivalent(a, b)
    assert result == Equivalence(False, None, 0.0, result.explanation)
    assert result.explanation


def test_name_forms() -> None:
    assert name_forms("acute kidney injury (AKI)") == ("acute kidney injury", "aki")
    # issue 13: a bracketed list of causes is not an alias; an alias whose inventory sense contradicts the
    # name is not expanded ("ASD" of autism is not atrial septal defect)
    assert name_forms("vascular insufficiency (atherosclerosis, arteriosclerosis)") == (
        "vascular insufficiency",
    )
    assert name_forms("Autism Spectrum Disorder (ASD)") == ("autism spectrum disorder", "asd")
    assert not equivalent("Autism Spectrum Disorder (ASD)", "Atrial Septal Defect (ASD)").equivalent
    assert name_forms("Type II diabetes")[0] == "type 2 diabetes"


def test_best_match_ordering() -> None:
    candidates = ["Contrast-induced nephropathy", "Acute pulmonary embolism", "acute renal failure", "AKI"]
    assert best_match("acute kidney injury (AKI)", candidates)[0] == 3  # exact beats synonym and hierarchy
    index, result = best_match("acute kidney injury", candidates[:3])
    assert (index, result.tier) == (2, "synonym")
    assert best_match("acute kidney injury", candidates[:2])[0] == 0
    assert best_match("acute kidney injury", candidates[:2], allow_hierarchy=False)[0] is None
    none_index, none = best_match("gout", candidates)
    assert none_index is None and not none.equivalent and none.tier is None
    assert best_match("gout", []) == (
        None,
        none.__class__(False, None, 0.0, none.explanation.replace("4", "0")),
    )


def test_user_extension_file(tmp_path: Path) -> None:
    extra = tmp_path / "mine.yaml"
    extra.write_text(
        "version: 3\ngroups:\n  - [AKI, renal shutdown]\n  - [moon fever, lunar pyrexia]\n"
        "hierarchy:\n  moon fever: [crescent moon fever]\n",
        encoding="utf-8",
    )
    vocab = load_vocabulary(extra_synonyms=extra)
    assert equivalent("acute renal failure", "renal shutdown", vocab=vocab).tier == "synonym"  # merged
    assert equivalent("lunar pyrexia", "moon fever", vocab=vocab).tier == "synonym"
    assert equivalent("crescent moon fever", "lunar pyrexia", vocab=vocab).tier == "hierarchy"
    assert equivalent("acute renal failure", "renal shutdown").tier is None  # packaged one unchanged
    assert "mine.yaml 3" in vocab.version and vocab.sha256 != load_vocabulary().sha256


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("version: 1\ngroups:\n  - [a b, c d]\n  - [e f\n", 5, "invalid YAML"),
        ("version: 1\ngroups:\n  - [aki, kidney]\n  - [AKI, renal]\n", 4, "already in the group"),
        ("version: 1\ngroups:\n  - [lonely]\n", 3, "two names"),
        ("version: 1\nsynonyms: []\n", 2, "unknown key"),
        ("version: 1\nhierarchy:\n  x: [y]\n  y: [x]\n", 3, "cycle"),
        ("version: 1\ngroups:\n  - [p q, r s]\nhierarchy:\n  p q: [r s]\n", 5, "not subtype"),
        ("version: 1\ngroups:\n  - [p q, {a: 1}]\n", 3, "non-empty name"),
    ],
)
def test_bad_file_names_file_and_line(tmp_path: Path, text: str, line: int, problem: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        load_vocabulary(extra_synonyms=bad)
    assert info.value.path == str(bad) and info.value.line == line
    assert problem in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="cannot read"):
        load_vocabulary(synonyms_path=tmp_path / "nope.yaml")


def test_vocabulary_hash_is_stable_and_provenance() -> None:
    vocab = load_vocabulary()
    assert vocab is load_vocabulary()  # cached
    hashes = diagnosis_vocab_sha256()
    assert [f[2] for f in vocab.files] == list(hashes.values())
    assert vocab.sha256 == hashlib.sha256("".join(hashes.values()).encode()).hexdigest()
    assert vocab.version == "diagnosis_synonyms.yaml 3 + diagnosis_hierarchy.yaml 3"
    assert len(vocab.groups) >= 100 and vocab.edge_count >= 150


def test_packaged_data_has_no_overmerge() -> None:
    """Distinct diseases stay distinct: no group holds two names the hierarchy or negatives keep apart."""
    vocab = load_vocabulary()
    for a, b in [
        ("gout", "pseudogout"),
        ("type 1 diabetes", "type 2 diabetes"),
        ("STEMI", "NSTEMI"),
        ("TIA", "ischemic stroke"),
        ("Crohn disease", "ulcerative colitis"),
    ]:
        assert equivalent(a, b, vocab=vocab).tier not in ("exact", "synonym")


# Issue 13: pairs any clinician matches at a glance, look-alikes that must stay apart, subtypes at hierarchy.
@pytest.mark.parametrize(
    ("a", "b", "tier"),
    [
        ("Cerebrovascular accident", "stroke", "synonym"),
        ("Kidney stone", "nephrolithiasis", "synonym"),  # Disease Ontology 2016 EXACT 'kidney stones'
        ("CHF exacerbation", "congestive heart failure", "exact"),  # a state word
        ("Rhabdo", "rhabdomyolysis", "synonym"),
        ("Lou Gehrig disease", "ALS", "synonym"),
        ("strep throat", "streptococcal pharyngitis", "exact"),  # issue 25: a cited lay name (lay_names.tsv)
        ("IgA vasculitis", "Henoch-Schonlein purpura", "synonym"),
        ("NAFLD", "nonalcoholic fatty liver disease", "synonym"),
        ("pre-eclampsia", "preeclampsia", "exact"),
        ("Haemorrhagic stroke", "hemorrhagic stroke", "exact"),
        ("German measles", "measles", None),
        ("pre-eclampsia", "eclampsia", None),  # curated distinct (the ontology says is_a)
        ("diabetes insipidus", "diabetes mellitus", None),
        ("Heat stroke", "stroke", None),
        ("simple obesity", "hypothalamic obesity", None),
        ("lung cancer", "small cell lung cancer", "hierarchy"),
        ("Hypoglycemia due to insulinoma", "insulinoma", "hierarchy"),  # a component
        ("Left pneumothorax with hemothorax", "hemothorax", "hierarchy"),
        (
            "Rh or ABO incompatibility",
            "Hemolytic disease of the newborn due to ABO incompatibility",
            "hierarchy",
        ),
        ("acute bronchitis", "chronic bronchitis", None),  # both EXACT of one DO concept: course conflicts
    ],
)
def test_issue_13_pairs(a: str, b: str, tier: str | None) -> None:
    result = equivalent(a, b)
    assert (result.equivalent, result.tier) == (tier is not None, tier), result.explanation
    assert equivalent(b, a).tier == tier  # symmetric


def test_ontology_explanation_names_concept_and_source() -> None:
    result = equivalent("kidney stones", "nephrolithiasis")
    assert result.explanation == (
        "DOID:585 nephrolithiasis, EXACT synonym 'kidney stones', Disease Ontology 2016; "
        "DOID:585 nephrolithiasis, label 'nephrolithiasis', Disease Ontology 2026"
    )


def test_user_distinct_pairs_override(tmp_path: Path) -> None:
    user = tmp_path / "mine.yaml"
    user.write_text("version: 1\ndistinct:\n  - [kidney stone, nephrolithiasis]\n")
    vocab = load_vocabulary(extra_synonyms=user)
    assert not equivalent("kidney stone", "nephrolithiasis", vocab=vocab).equivalent
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ndistinct:\n  - [a, b, c]\n")
    with pytest.raises(DataFileError, match="two names"):
        load_vocabulary(extra_synonyms=bad)


def test_misspelt_ontology_word_is_corrected_known_words_never_are() -> None:
    from clineval.text.names.ontology_match import spelling_fix

    assert spelling_fix("otosderosis") == "otosclerosis"  # one substitution + one deletion: 10+ letters
    assert spelling_fix("hypothyroidism") is None  # a known word is never changed
    assert spelling_fix("hyperthyroidism") is None
    assert equivalent("Otosderosis", "otosclerosis").tier == "exact"
    assert not equivalent("hyperthyroidism", "hypothyroidism").equivalent


@pytest.mark.parametrize(
    ("a", "b", "tier"),
    [
        ("Malignant neoplasm of the lung", "Malignancy of the lung", "overlap"),  # both read "lung cancer"
        ("Adenocarcinoma of the colon", "colon cancer", "hierarchy"),  # adds "adeno"
        ("Squamous cell carcinoma of the lung", "lung cancer", "hierarchy"),
    ],
)
def test_cancer_words(a: str, b: str, tier: str) -> None:
    assert equivalent(a, b).tier == tier


def test_ambiguous_abbreviation_is_read_by_context_only() -> None:
    """Issue 13: MS is multiple sclerosis or mitral stenosis; only the other names can say which."""
    assert not equivalent("MS", "multiple sclerosis").equivalent
    assert "no context" in equivalent("MS", "multiple sclerosis").explanation
    neuro = ["optic neuritis", "multiple sclerosis", "migraine"]
    resolved = equivalent("MS", "multiple sclerosis", context=neuro)
    assert (resolved.equivalent, resolved.tier, resolved.confidence) == (True, "exact", 0.85)
    assert not equivalent("MS", "mitral stenosis", context=neuro).equivalent
    both = equivalent("MS", "multiple sclerosis", context=["mitral stenosis", "multiple sclerosis"])
    assert not both.equivalent and "ambiguous abbreviation 'MS'" in both.explanation
    assert best_match("MS", ["optic neuritis", "multiple sclerosis"])[0] == 1  # the candidates are context
    assert best_match("MS", ["mitral stenosis", "multiple sclerosis"])[0] is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("inflammatory bowel diseases like ulcerative colitis and Crohn's disease", "Ulcerative colitis"),
        ("manic episode of bipolar disorder", "Bipolar disorder"),  # the disease it is an episode of
    ],
)
def test_examples_and_of_components_are_subtypes(a: str, b: str) -> None:
    result = equivalent(a, b)
    assert (result.equivalent, result.tier) == (True, "hierarchy"), result.explanation


def test_left_sided_is_left() -> None:
    assert equivalent("Acute left heart failure", "Acute left-sided heart failure").tier == "overlap"
