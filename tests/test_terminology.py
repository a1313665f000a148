"""The packaged Disease Ontology terminology (clineval.text.names.terminology); facts checked by hand against
HumanDO_2016-06-17.obo and HumanDO_labels_parents_2026.tsv."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from clineval.text.names.diagnosis_vocab import name_key
from clineval.text.names.terminology import NameSource, Terminology, load_terminology

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
    # and NCIt 2018-06-08, NCIT:C3390 is labelled "Cerebrovascular Accident" (not linked: DO xrefs C2938)
    assert term.concepts(name_key("Cerebrovascular accident")) == ("DOID:6713", "NCIT:C3390")
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
    # kidney disease DOID:557 is NCIT:C3149 Kidney Disorder (one-to-one xref), child of NCIt's
    # C3430 Urinary System Disorder, which no DOID links to one-to-one: the merged graph holds both
    assert term.parents("DOID:557") == ("DOID:18", "NCIT:C3430")
    assert {term.label(cid): depth for cid, depth in ancestors.items()} == {
        "kidney disease": 1,
        "urinary system disease": 2,
        "Urinary System Disorder": 2,
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
    code = "import clineval, clineval.text, sys; print('clineval.text.names.terminology' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


# Common symptoms, signs and results (issue 22, data/finding_names.tsv): none may resolve, through an EXACT
# synonym, to a Disease Ontology concept named otherwise, except those clinical usage names the diagnosis by.
COMMON_FINDINGS = tuple(
    f.strip()
    for f in (
        "bronchospasm | wheezing | wheeze | cough | fever | pyrexia | dyspnea | dyspnoea | shortness of "
        "breath | chest pain | abdominal pain | headache | nausea | vomiting | diarrhea | constipation | "
        "fatigue | malaise | syncope | palpitations | tachycardia | bradycardia | hypotension | "
        "hypertension | hypoxia | hypoxemia | cyanosis | jaundice | edema | ascites | hepatomegaly | "
        "splenomegaly | lymphadenopathy | adenopathy | rash | pruritus | seizure | convulsion | tremor | "
        "weakness | paralysis | numbness | paresthesia | vertigo | dizziness | hematuria | proteinuria | "
        "oliguria | anuria | polyuria | dysuria | hemoptysis | hematemesis | melena | epistaxis | "
        "stridor | tachypnea | apnea | hypothermia | hyperthermia | dehydration | hypovolemia | shock | "
        "anemia | leukocytosis | leukopenia | thrombocytopenia | neutropenia | eosinophilia | "
        "hyperkalemia | hypokalemia | hyponatremia | hypernatremia | hypoglycemia | hyperglycemia | "
        "acidosis | alkalosis | confusion | delirium | coma | dysphagia | odynophagia | hoarseness | "
        "dysphonia | back pain | arthralgia | myalgia | parasitemia | bacteremia | viremia | sepsis | "
        "hypersensitivity | angioedema | urticaria | chills | night sweats | weight loss | anorexia | "
        "cachexia | bleeding | hemorrhage | pallor | clubbing | heart murmur | crackles | papilledema | "
        "photophobia | diplopia | ptosis | aphasia | dysarthria | ataxia | nystagmus | myocardial "
        "ischemia | ischemia | claudication | laryngospasm | muscle spasm | colic | polydipsia | "
        "respiratory distress | respiratory failure | hemiparesis | hemiplegia | altered mental status | "
        "lethargy | irritability | failure to thrive | hypercalcemia | hypocalcemia | azotemia | uremia "
        "| hyperbilirubinemia | pleural effusion | pericardial effusion | effusion | inflammation | "
        "infection | mass | lesion | nodule | tumor | cyst | pain | hyperreactivity | bronchial "
        "hyperreactivity | airway hyperresponsiveness | insulin resistance | hypogammaglobulinemia | "
        "granulocytopenia | lymphopenia | lymphocytopenia | hyperuricemia | hyperlipidemia | "
        "hypercholesterolemia | dyslipidemia | hypoalbuminemia | hyperammonemia | lactic acidosis | "
        "metabolic acidosis | respiratory acidosis | hypomagnesemia | hypophosphatemia | "
        "hyperphosphatemia | polycythemia | erythrocytosis | pancytopenia | hematochezia | steatorrhea | "
        "hepatosplenomegaly | cardiomegaly | wheezes | dyspepsia | heartburn | regurgitation | orthopnea "
        "| pleuritic chest pain | ankle swelling | leg swelling | sore throat | rhinorrhea | nasal "
        "congestion | sneezing | earache | otalgia | hearing loss | tinnitus | blurred vision | visual "
        "loss | vision loss | visual impairment | eye pain | red eye | conjunctival injection | joint "
        "pain | joint swelling | stiffness | muscle weakness | fasciculation | spasticity | rigidity | "
        "bradykinesia | dystonia | chorea | myoclonus | tetany | cramps | insomnia | anxiety | "
        "depression | hallucinations | psychosis | agitation | amnesia | memory loss | obesity | weight "
        "gain | hirsutism | gynecomastia | amenorrhea | menorrhagia | dysmenorrhea | infertility | "
        "erectile dysfunction | urinary retention | urinary incontinence | frequency | urgency | "
        "nocturia | flank pain | pelvic pain | dyspareunia | vaginal discharge | pruritus ani | tenesmus "
        "| bloating | abdominal distension | hiccups | halitosis | dry mouth | xerostomia | mouth ulcers "
        "| petechiae | purpura | ecchymosis | bruising | easy bruising | hypercoagulability | "
        "thrombophilia | hypoperfusion | hypoxaemia | hypercapnia | hypoventilation | hyperventilation | "
        "apnoea | tachypnoea | respiratory arrest | cardiac arrest | arrhythmia | heart block | heart "
        "failure | cardiogenic shock | septic shock | hypovolemic shock | anaphylactic shock | "
    ).split("|")
    if f.strip()
)
KEPT_FINDING_NAMES = {
    "rash": "exanthem",
    "lymphocytopenia": "lymphopenia",
    "granulocytopenia": "agranulocytosis",
    "dyslipidemia": "lipid metabolism disorder",
    "chorea": "choreatic disease",
    "anxiety": "anxiety disorder",
    "amnesia": "amnestic disorder",
    "erectile dysfunction": "impotence",
    "myocardial ischemia": "coronary artery disease",
    # issue 25, NCIt 2018-06-08 (reviewed): a finding named by a finding concept of NCIt's Finding branch ...
    "wheeze": "Wheezing",
    "pyrexia": "Fever",
    "shortness of breath": "Dyspnea",
    "convulsion": "Seizure",
    "bleeding": "Hemorrhage",
    "tumor": "Tumor Mass",
    "mouth ulcer": "Mouth Sore",
    # ... or the disease a differential means by it
    "sepsis": "Septicemia",
    "infection": "Infectious Disorder",  # a category: relates to its members by is_a only
    "colic": "Infantile Colic",  # issue 25 lay name (diagnosis context only): colic in a differential
}


def test_no_common_finding_resolves_to_a_differently_named_disease_concept() -> None:
    from clineval.text.names.diagnosis_vocab import load_vocabulary
    from clineval.text.names.resolution import resolve

    term, vocab = load_terminology(), load_vocabulary()
    assert len(COMMON_FINDINGS) == 265
    found = {}
    for finding in COMMON_FINDINGS:
        key = name_key(finding)
        for cid in resolve(finding, vocab).concepts.exact:
            by_synonym = cid in term.concepts(key) and term.name_source(key, cid).scope != "LABEL"
            if by_synonym:
                found[key] = term.label(cid)
    assert found == KEPT_FINDING_NAMES
