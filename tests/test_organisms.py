"""Issue 25 round 3: an organism named for the infection it causes (clineval.text.names.organisms). The
expectations are clinical facts checked by hand (which disease an organism causes, and where it causes
several), not read off the code. Also the double eponym cut at its hyphen ("Guillain"), the other round-3 rule
(clineval.text.names.ontology_match.truncated_eponym)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from clineval.text.names import ontology_match, organisms
from clineval.text.names.equivalence import equivalent
from clineval.text.names.organisms import organism_forms


@pytest.mark.parametrize(
    ("organism", "disease", "concept"),
    [
        ("Toxoplasma gondii", "toxoplasmosis", "DOID:9965"),
        ("Histoplasma capsulatum", "histoplasmosis", "DOID:1731"),
        ("Giardia lamblia", "giardiasis", "DOID:10718"),
        ("Candida albicans", "candidiasis", "DOID:1508"),
        ("Zika virus", "Zika virus infection", "NCIT:C128423"),
        ("H1N1 virus", "H1N1 influenza", "NCIT:C80444"),
        ("Clostridium difficile", "Clostridium difficile colitis", "NCIT:C35286"),
        ("E. coli", "Escherichia coli infection", "NCIT:C34594"),
    ],
)
def test_an_organism_reads_as_the_infection_the_ontologies_name_for_it(
    organism: str, disease: str, concept: str
) -> None:
    eq = equivalent(organism, disease)
    assert eq.equivalent and eq.tier in ("exact", "synonym"), eq
    assert "organism named for the infection it causes" in eq.explanation
    assert concept in eq.explanation  # the source concept is named


def test_an_abbreviated_genus_is_written_out_when_one_genus_fits() -> None:
    eq = equivalent("C. difficile colitis", "Clostridium difficile colitis")
    assert eq.equivalent and eq.tier == "exact"
    assert "abbreviated genus: 'clostridium'" in eq.explanation


@pytest.mark.parametrize(
    ("organism", "disease"),
    [
        ("Candida albicans", "oral thrush"),  # one of candidiasis's forms
        ("cytomegalovirus (CMV)", "CMV retinitis"),
        ("Toxoplasma gondii", "congenital toxoplasmosis"),
        ("Epstein-Barr virus", "infectious mononucleosis"),  # EBV causes more than mono
        ("varicella-zoster virus", "chickenpox"),  # and shingles: never 'same' as one of them
    ],
)
def test_a_disease_of_the_organism_is_a_subtype_never_the_same(organism: str, disease: str) -> None:
    eq = equivalent(organism, disease)
    assert eq.equivalent and eq.tier == "hierarchy", eq
    assert eq.broader == "a"  # the organism's reading is the broader name


@pytest.mark.parametrize(
    "name",
    [
        "Urinary tract",  # capitalised + lower case, but "tract" is no Latin epithet; UTI is a site infection
        "Streptococcus",  # a genus alone: no binomial
        "Staphylococcus aureus colonization",  # colonisation is not infection: more than the bare organism
        "GBS carrier",
        "H. pylori serology",
        "Zika virus exposure",
        "sclera",  # would read as sclerosis by "-osis"
        "Thrombus",
        "Streptococcus pyogenes",  # several diseases (strep throat, scarlet fever, impetigo), no name of it
    ],
)
def test_names_the_rule_must_not_read_as_an_infection(name: str) -> None:
    assert not [f for f, why in organism_forms(name) if why.startswith("organism")]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("H. pylori", "peptic ulcer disease"),  # a cause, not the disease
        ("Zika virus", "dengue"),
        ("sclera", "sclerosis"),
        ("Hepatitis B virus", "hepatitis C"),
        ("Herpes simplex virus", "herpes zoster"),
    ],
)
def test_distinct_pairs_stay_distinct(a: str, b: str) -> None:
    assert not equivalent(a, b).equivalent


def test_several_diseases_none_covering_the_others_give_no_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """A genus whose "-osis" and "-iasis" forms name two unrelated diseases is read as neither."""
    names = {"testarosis": ("DOID:1",), "testariasis": ("DOID:2",)}
    term = SimpleNamespace(
        concepts=lambda key: names.get(key, ()),
        canonical=lambda cid: cid,
        ancestors=lambda cid: {"DOID:0050117": 2},
        label=lambda cid: "fake",
    )
    monkeypatch.setattr(ontology_match, "terminology", lambda: term)
    assert organisms._reading("testaria species", "testaria", True) == []
    names["testariasis"] = ("DOID:1",)  # one disease under two names: read as it
    assert organisms._reading("testaria species", "testaria", True) == [("testariasis", "DOID:1")]


def test_a_misspelt_word_with_two_spellings_of_one_word_is_corrected() -> None:
    assert ontology_match.spelling_fix("generalhed") == "generalized"  # generalized / generalised


@pytest.mark.parametrize(
    ("cut", "whole"),
    [
        ("Guillain", "Guillain-Barré syndrome"),
        ("Budd", "Budd-Chiari syndrome"),
        ("Zollinger", "Zollinger-Ellison syndrome"),
    ],
)
def test_a_double_eponym_cut_at_its_hyphen_is_read_whole(cut: str, whole: str) -> None:
    eq = equivalent(cut, whole)
    assert eq.equivalent and eq.tier != "hierarchy", eq
    assert "a double eponym cut at its hyphen" in eq.explanation


@pytest.mark.parametrize(
    "word",
    [
        "Wolff",  # Wolff-Parkinson-White and Wolff-Chaikoff
        "Charcot",  # Charcot-Marie-Tooth and Charcot joint
        "Down",  # no hyphenated name: a common word
        "Cushing",  # Cushing disease and Cushing syndrome
        "Kartagener",  # a single eponym, not a cut one
        "Brown",
        "guillain",  # as written: an eponym is capitalised
    ],
)
def test_a_word_that_begins_several_names_or_none_hyphenated_is_not_read(word: str) -> None:
    assert ontology_match.truncated_eponym(word) is None
