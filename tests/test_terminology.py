"""The packaged Disease Ontology terminology (clineval.text.terminology); facts checked by hand against
HumanDO_2016-06-17.obo and HumanDO_labels_parents_2026.tsv."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from clineval.text.diagnosis_vocab import name_key
from clineval.text.terminology import NameSource, Terminology, load_terminology

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "disease_ontology"


@pytest.fixture(scope="module")
def term() -> Terminology:
    return load_terminology()


@pytest.mark.skipif(not DATA.exists(), reason="shared Disease Ontology data not available")
def test_packaged_artefact_is_a_fresh_deterministic_build() -> None:
    pytest.importorskip("obonet")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_terminology.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_kidney_stones_is_an_exact_2016_synonym_of_nephrolithiasis(term: Terminology) -> None:
    # 2016 file, DOID:585 nephrolithiasis: synonym: "kidney stones" EXACT []
    assert term.concepts(name_key("kidney stones")) == ("DOID:585",)
    source = term.name_source(name_key("kidney stones"), "DOID:585")
    assert source == NameSource("kidney stones", "EXACT", "2016", "CC BY 3.0")
    assert source.explain("DOID:585", term.label("DOID:585")) == (
        "DOID:585 nephrolithiasis, EXACT synonym 'kidney stones', Disease Ontology 2016"
    )


def test_label_source_is_the_2026_release(term: Terminology) -> None:
    assert term.name_source("nephrolithiasis", "DOID:585") == NameSource(
        "nephrolithiasis", "LABEL", "2026", "CC0 1.0"
    )


def test_cerebrovascular_accident_is_exact_for_cerebrovascular_disease(term: Terminology) -> None:
    # 2016 file, DOID:6713 cerebrovascular disease: synonym: "cerebrovascular accident" EXACT []
    assert term.concepts(name_key("Cerebrovascular accident")) == ("DOID:6713",)
    assert term.label("DOID:6713") == "cerebrovascular disease"


def test_snomed_semantic_tag_stripped_and_omim_heading_dropped(term: Terminology) -> None:
    # 2016: "Inferior myocardial infarction NOS (disorder)" EXACT on DOID:5850
    assert term.concepts(name_key("Inferior myocardial infarction NOS (disorder)")) == ()
    assert term.concepts(name_key("inferior myocardial infarction")) == ("DOID:5850",)
    # 2016: "NEPHROLITHIASIS, CALCIUM OXALATE" EXACT on DOID:585 (an OMIM heading): not a name of DOID:585
    assert "DOID:585" not in term.concepts(name_key("NEPHROLITHIASIS, CALCIUM OXALATE"))


def test_nephrolithiasis_ancestors(term: Terminology) -> None:
    # 2026 table: nephrolithiasis < kidney disease < urinary system disease < disease of anatomical entity
    # < disease (the root, DOID:4)
    ancestors = term.ancestors("DOID:585")
    assert term.parents("DOID:585") == ("DOID:557",)
    assert {term.label(cid): depth for cid, depth in ancestors.items()} == {
        "kidney disease": 1,
        "urinary system disease": 2,
        "disease of anatomical entity": 3,
        "disease": 4,
    }
    assert term.ancestors("DOID:585") is ancestors  # computed once


def test_multiple_inheritance_keeps_the_shortest_depth(term: Terminology) -> None:
    for cid in ("DOID:0080652", "DOID:6713", "DOID:585"):
        ancestors = term.ancestors(cid)
        for parent in term.parents(cid):
            assert ancestors[parent] == 1
            for above, depth in term.ancestors(parent).items():
                assert ancestors[above] <= depth + 1


def test_obsolete_terms_are_absent(term: Terminology) -> None:
    # 2016 and 2026: DOID:0050001 "Actinomadura madurae infectious disease" is_obsolete: true
    with pytest.raises(KeyError):
        term.label("DOID:0050001")
    assert term.concepts(name_key("Actinomadura madurae infectious disease")) == ()
    # DOID:14091 is an alt_id of DOID:0050026 in 2016: not a concept of its own
    with pytest.raises(KeyError):
        term.label("DOID:14091")


def test_related_synonym_is_not_a_concept_name(term: Terminology) -> None:
    # 2016, DOID:0050026 human monocytic ehrlichiosis: synonym: "Ehrlichiosis chafeensis" RELATED []
    key = name_key("Ehrlichiosis chafeensis")
    assert term.concepts(key) == ()
    assert "DOID:0050026" in term.related(key)
    assert term.name_source(key, "DOID:0050026").scope == "RELATED"


def test_ambiguous_key_gives_every_concept(term: Terminology) -> None:
    ambiguous = [key for key in ("clinical depression",) if term.is_ambiguous(key)]
    assert ambiguous
    assert len(term.concepts(ambiguous[0])) >= 2
    assert not term.is_ambiguous("nephrolithiasis")


def test_provenance_and_size(term: Terminology) -> None:
    assert term.version.startswith("DO 2016-06-17 + 2026-")
    assert len(term.sha256) == 64
    assert len(term) > 12000


def test_import_of_clineval_text_does_not_load_the_terminology() -> None:
    code = "import clineval, clineval.text, sys; print('clineval.text.terminology' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
