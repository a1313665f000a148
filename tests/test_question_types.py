"""Question-type classifier: rules as data, first match wins, stem before whole question, two-pass ethics."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

import pytest
import yaml

from clineval.mcq.question_rules import (
    QUESTION_TYPE_RULES_SHA256,
    QUESTION_TYPE_RULES_VERSION,
    QUESTION_TYPES,
    load_rules,
    rules_sha256,
)
from clineval.mcq.question_types import Classification, classify_question
from tests.helpers import shared_data

DATA = Path(__file__).parent / "data"
# Correct labels with rules version 3 (docs/mcq/question_types.md, "Classifier"), with the gold answer and
# without it. Development (the version 3 rules were tuned on all 330): medqa_question_types = the 210 first
# labels, heldout2 = 120 labels that were held out for version 2. heldout3 = 150 labels of an independent
# annotator, scored once after version 3's tuning had ended. Exact counts: a change that moves them fails
# here; update them (and the docs) when a change is meant to.
DEVELOPMENT = ("medqa_question_types.jsonl", "medqa_question_types_heldout2.jsonl")
HELDOUT3 = ("medqa_question_types_heldout3.jsonl",)
LABEL_SETS = {
    "development": DEVELOPMENT,
    "medqa_question_types": DEVELOPMENT[:1],
    "heldout2": DEVELOPMENT[1:],
    "heldout3": HELDOUT3,
}
CORRECT = {
    "development": {"n": 330, "answer": 325, "blind": 314},
    "medqa_question_types": {"n": 210, "answer": 209, "blind": 202},
    "heldout2": {"n": 120, "answer": 116, "blind": 112},
    "heldout3": {"n": 150, "answer": 131, "blind": 130},
}
VIGNETTE = "A 34-year-old woman comes to the physician because of fatigue for 3 months. Her pulse is 96/min."
TESTS = {
    "A": "Serum ferritin level",
    "B": "CT scan of the abdomen",
    "C": "Colonoscopy",
    "D": "Bone marrow biopsy",
}
ACTIONS = {
    "A": "Oral iron supplementation",
    "B": "Red blood cell transfusion",
    "C": "Colonoscopy",
    "D": "Reassurance",
}
DISEASES = {"A": "Iron deficiency anemia", "B": "Celiac disease", "C": "Hypothyroidism", "D": "Colon cancer"}
PROCESSES = {
    "A": "Decreased production of erythropoietin",
    "B": "Impaired absorption of iron",
    "C": "Increased destruction of red cells",
    "D": "Defective heme synthesis",
}
DRUGS = {"A": "Metformin", "B": "Lisinopril", "C": "Omeprazole", "D": "Atorvastatin"}


def ask(
    stem: str, options: dict[str, str] | None = None, vignette: str = VIGNETTE, answer: str | None = None
) -> Classification:
    return classify_question(f"{vignette} {stem}", options, answer=answer)


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        ("Which of the following is the most likely diagnosis?", "diagnostic"),
        ("What is the most likely causal organism?", "diagnostic"),
        ("Which of the following is the most appropriate pharmacotherapy?", "treatment"),
        ("This patient should be started on which of the following medications?", "treatment"),
        ("Which of the following is most likely to confirm the diagnosis?", "lab_finding"),
        ("A biopsy of the lesion is most likely to show which of the following findings?", "lab_finding"),
        (
            "Which of the following is the most likely underlying mechanism of this patient's symptoms?",
            "mechanism",
        ),
        ("Which of the following is the mode of inheritance of this disorder?", "mechanism"),
        ("Which of the following is the mechanism of action of the drug she is taking?", "pharmacology"),
        ("Which of the following adverse effects is most likely with this drug?", "pharmacology"),
        ("Which of the following best describes the sensitivity of this test?", "epidemiology"),
        ("This is an example of what type of study design?", "epidemiology"),
        ("Which of the following is the most appropriate way to obtain informed consent?", "ethics"),
        ("Which of the following nerves is most likely injured?", "anatomy"),
        ("This tissue is most likely derived from which of the following embryologic structures?", "anatomy"),
        ("This patient is at greatest risk of developing which of the following complications?", "other"),
        ("Which of the following defense mechanisms is this patient using?", "other"),
    ],
)
def test_one_case_per_type(stem: str, expected: str) -> None:
    found = ask(stem)
    assert found.type == expected, found
    assert found.matched_on == "stem"
    assert found.rule in {rule.id for rule in load_rules().rules}


def test_next_step_is_decided_by_the_options() -> None:
    stem = "Which of the following is the most appropriate next step in management?"
    assert ask(stem, TESTS) == Classification("lab_finding", "next-step-tests", "options")
    assert ask(stem, ACTIONS).type == "treatment"
    assert ask(stem).type == "treatment"  # no options: the stem alone


def test_most_likely_cause_is_decided_by_the_options() -> None:
    stem = "Which of the following is the most likely cause of this patient's condition?"
    assert ask(stem, DISEASES) == Classification("diagnostic", "cause-diseases", "options")
    assert ask(stem, PROCESSES) == Classification("mechanism", "cause-processes", "options")
    assert ask(stem, DRUGS) == Classification("pharmacology", "cause-drugs", "options")
    assert ask(stem).type == "diagnostic"


MIXED_STEPS = {
    "A": "Radiograph of the wrist",
    "B": "MRI of the wrist",
    "C": "Thumb spica cast",
    "D": "Reassurance",
}
MIXED_CAUSES = {
    "A": "Anxiety disorder",
    "B": "Metformin",
    "C": "Decreased production of erythropoietin",
    "D": "History of abdominal surgery",
}


def test_with_the_answer_the_correct_option_decides_a_next_step_stem() -> None:
    stem = "Which of the following is the best next step in management?"
    assert ask(stem, MIXED_STEPS).type == "treatment"  # 2 tests of 4: not the 3/4 the vote needs
    assert ask(stem, MIXED_STEPS, answer="A") == Classification("lab_finding", "next-step-tests", "answer")
    assert ask(stem, MIXED_STEPS, answer="c") == Classification("treatment", "treatment-stem", "stem")
    # the answer decides both ways: mostly tests, but the correct option is an intervention
    assert ask(stem, TESTS).type == "lab_finding"
    assert ask(stem, {**TESTS, "D": "Reassurance"}, answer="D").type == "treatment"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("A", Classification("diagnostic", "cause-diseases", "answer")),
        ("B", Classification("pharmacology", "cause-drugs", "answer")),
        ("C", Classification("mechanism", "cause-processes", "answer")),
        ("D", Classification("other", "cause-risk", "answer")),
    ],
)
def test_with_the_answer_the_correct_option_decides_a_cause_stem(
    answer: str, expected: Classification
) -> None:
    stem = "Which of the following is the most likely cause of this patient's condition?"
    assert ask(stem, MIXED_CAUSES, answer=answer) == expected


def test_an_answer_in_no_category_or_not_an_option_leaves_the_vote() -> None:
    stem = "Which of the following is the most likely cause of this patient's condition?"
    options = {**DRUGS, "D": "Idiopathic"}  # "Idiopathic" is in no category
    assert ask(stem, options, answer="D") == Classification("pharmacology", "cause-drugs", "options")
    assert ask(stem, DRUGS, answer="E") == ask(stem, DRUGS)  # not an option letter: not used
    assert ask(stem, DRUGS, answer="") == ask(stem, DRUGS)


def test_answer_ignored_rules_always_vote() -> None:
    legal = {
        "A": "Obtain a court order",
        "B": "Respect the patient's wishes",
        "C": "Transfuse packed red cells",
        "D": "Consult ethics committee",
    }
    stem = "Which of the following is the most appropriate next step in management?"
    assert ask(stem, legal, answer="C") == Classification("ethics", "ethics-options", "options")


def test_drug_mechanism_options_are_pharmacology_and_other_findings_are_findings() -> None:
    moa = {
        "A": "Inhibition of beta-tubulin polymerization",
        "B": "Inhibition of dihydrofolate reductase",
        "C": "Creation of free radicals that unwind DNA",
        "D": "Incorporation of false pyrimidine analogues into DNA",
    }
    stem = "Which of the following is the most likely underlying mechanism of this patient's neuropathy?"
    assert ask(stem, moa).type == "pharmacology"  # guide clarification 7
    assert ask(stem, moa, answer="A") == Classification("pharmacology", "drug-action-options", "answer")
    assert ask(stem, PROCESSES, answer="A").type == "mechanism"
    symptoms = {"A": "Leaden paralysis", "B": "Mania", "C": "Stereotypies", "D": "Psychosis"}
    found = ask("What other symptom is most likely present in this patient?", symptoms, answer="A")
    assert found == Classification("lab_finding", "other-finding", "stem")  # guide clarification 10


def test_development_and_heldout3_label_sets_are_disjoint() -> None:
    ids = {
        name: {json.loads(line)["id"] for line in (DATA / files[0]).read_text(encoding="utf-8").splitlines()}
        for name, files in LABEL_SETS.items()
        if len(files) == 1
    }
    assert not ids["heldout3"] & (ids["medqa_question_types"] | ids["heldout2"])
    assert not ids["medqa_question_types"] & ids["heldout2"]


# --- version 3: general rules --------------------------------------------------------------------------

CAUSE = "Which of the following is the most likely cause of this patient's condition?"


def test_insulin_sensitivity_is_not_the_statistics_term() -> None:
    stem = "Which of the following hormones will increase insulin sensitivity in this patient?"
    assert ask(stem).type != "epidemiology"
    assert ask("What is the sensitivity of this test?").type == "epidemiology"


def test_additional_history_is_other() -> None:
    stem = "Further evaluation of this patient's history is most likely to reveal which of the following?"
    assert ask(stem) == Classification("other", "other-history", "stem")
    assert ask("Which of the following is most likely to be found in this patient's history?").type == "other"
    assert ask("Further evaluation is most likely to show which of the following?").type == "lab_finding"


def test_a_treatment_stem_mentioning_the_responsible_substance_is_treatment() -> None:
    stem = (
        "Which of the following treatments would most improve the urinary excretion of the substance "
        "likely responsible for these symptoms?"
    )
    assert ask(stem).type == "treatment"
    assert ask("Which of the following best explains these findings?").type == "mechanism"


def test_processes_and_physiological_changes_asked_for_are_mechanism() -> None:
    cellular = "Which of the following cellular processes is typical of the injury noted in this patient?"
    assert ask(cellular) == Classification("mechanism", "process-stem", "stem")
    stem = "Which of the following changes in respiratory function is most likely present in this patient?"
    assert ask(stem).type == "mechanism"
    assert ask("Which of the following changes would you expect to see on biopsy?").type == "lab_finding"
    assert ask("Which of the following defense mechanisms is this patient using?").type == "other"


def test_a_tumours_cell_of_origin_is_diagnostic_and_antibody_targets_are_not_anatomy() -> None:
    assert ask("The mass is most likely derived from which of the following types of cells?") == (
        Classification("diagnostic", "tumour-origin", "stem")
    )
    embryology = "This mass is most likely derived from which of the following embryologic structures?"
    assert ask(embryology).type == "anatomy"
    targeted = "Which of the following structures is most likely being targeted by antibodies?"
    assert ask(targeted).type == "mechanism"


def test_a_nutrient_deficiency_is_the_condition() -> None:
    nutrients = {"A": "Niacin", "B": "Cobalamin", "C": "Iron", "D": "Zinc"}
    stem = "A deficiency of which of the following is the most likely cause of this patient's condition?"
    assert ask(stem, nutrients, answer="D") == Classification("diagnostic", "nutrient-deficiency", "answer")
    assert ask(stem, nutrients) == Classification("diagnostic", "nutrient-deficiency", "options")
    assert ask(CAUSE, DRUGS).type == "pharmacology"  # drugs are still drugs


def test_drug_disposition_and_interaction_options_are_pharmacology() -> None:
    pk = {
        "A": "Induction of CYP3A4 by rifampin",
        "B": "Increased renal clearance",
        "C": "Medication noncompliance",
        "D": "Inhibition of P-glycoprotein",
    }
    stem = "Which of the following mechanisms best explains the failure of oral contraceptives?"
    assert ask(stem, pk, answer="A") == Classification("pharmacology", "pk-options", "answer")
    assert ask(stem, PROCESSES, answer="A").type == "mechanism"


def test_an_injured_structure_as_the_cause_is_anatomy() -> None:
    nerves = {
        "A": "Internal laryngeal nerve injury",
        "B": "Recurrent laryngeal nerve injury",
        "C": "External laryngeal nerve injury",
        "D": "Laryngeal carcinoma",
    }
    stem = "What could be the most likely cause of her hoarseness?"
    assert ask(stem, nerves, answer="B") == Classification("anatomy", "cause-structures", "answer")
    assert ask(stem, nerves, answer="D").type == "diagnostic"
    lesions = {
        "A": "Tearing of the middle meningeal artery",  # a lesion of a structure is a condition
        "B": "Dural arteriovenous fistula",
        "C": "Charcot-Bouchard microaneurysm",
        "D": "Arteriovenous malformation",
    }
    assert ask(CAUSE, lesions, answer="A").type == "diagnostic"


def test_organ_events_are_conditions_and_named_processes_are_processes() -> None:
    organs = {
        "A": "Perforation of the duodenal wall",
        "B": "Inflammation of the gallbladder wall",
        "C": "Obstruction of the common bile duct",
        "D": "Torsion of the large intestine",
    }
    assert ask(CAUSE, organs, answer="B") == Classification("diagnostic", "cause-diseases", "answer")
    passage = {
        "A": "Transplacental passage of thyroid peroxidase antibodies",
        "B": "Transplacental passage of TSH receptor antibodies",
        "C": "Transplacental viral infection",
        "D": "Opiate use in the mother",
    }
    assert ask("Which of the following is the most likely cause?", passage, answer="B").type == "mechanism"
    airway = {"A": "Airway epithelial shedding", "B": "Airway remodeling", "C": "Airway hyperresponsiveness"}
    stem = "Which of the following is most likely to be associated with the loss of asthma control?"
    assert ask(stem, airway, answer="B") == Classification("mechanism", "fallback-processes", "answer")


def test_a_precipitating_factor_is_other_and_associated_features_are_findings() -> None:
    options = {"A": "Iodine deficiency", "B": "Thyroglossal cyst", "C": "Infection", "D": "Renal disease"}
    stem = "Which of the following likely precipitated the patient's condition?"
    assert ask(stem, options, answer="C") == Classification("other", "precipitant", "stem")
    assert ask(stem, DRUGS, answer="A").type == "pharmacology"  # a drug that precipitated it: the drug
    assert ask("Which of the following is a technique for protein precipitation?").type != "other"
    associated = "Which of the following is associated with the patient's most likely diagnosis?"
    assert ask(associated, DISEASES, answer="A").type == "lab_finding"  # guide clarification 10


def test_option_categories_words_and_suffixes(tmp_path: Path) -> None:
    categories = [
        {"name": "drug", "words": ["folic acid"], "suffixes": ["olol"]},
        {"name": "test", "words": ["biopsy"], "patterns": ["\\bct\\b"]},
    ]
    rule = {"id": "r", "type": "pharmacology", "where": "options", "patterns": ["."]}
    rules = write_rules(tmp_path, [{**rule, "options_category": "drug"}], option_categories=categories)
    ruleset = load_rules(rules)
    drug, test = ruleset.option_categories
    assert drug.matches("metoprolol", ("metoprolol",)) and drug.matches("folic acid", ("folic", "acid"))
    assert not drug.matches("olol", ("olol",))  # a suffix must leave part of a word
    assert test.matches("ct of the head", ("ct", "of", "the", "head"))
    assert not drug.matches("folic", ("folic",))
    one = {"A": "Metoprolol", "B": "Biopsy", "C": "Biopsy", "D": "CT scan"}
    assert classify_question("Which?", one, rules=ruleset).type == "other"  # 1 drug of 4: the default
    assert classify_question("Which?", one, answer="A", rules=ruleset) == Classification(
        "pharmacology", "r", "answer"
    )


def test_two_pass_ethics_rule() -> None:
    stem = "Which of the following is the most appropriate next step in management?"
    clinical = f"{VIGNETTE} Her hemoglobin is 6.1 g/dL."
    dilemma = f"{clinical} She refuses a blood transfusion because of her religious beliefs."
    assert ask(stem, vignette=clinical).type == "treatment"
    assert ask(stem, vignette=dilemma) == Classification("ethics", "ethics-dilemma", "stem")
    # The keywords alone do not make a diagnostic question an ethics one.
    assert ask("Which of the following is the most likely diagnosis?", vignette=dilemma).type == "diagnostic"
    # Options that are ethical / legal actions do it too.
    legal = {
        "A": "Obtain a court order",
        "B": "Respect the patient's wishes",
        "C": "Transfuse",
        "D": "Consult ethics committee",
    }
    assert ask(stem, legal, vignette=clinical) == Classification("ethics", "ethics-options", "options")


def test_what_to_say_is_ethics_in_a_dilemma_or_with_quoted_options() -> None:
    stem = "Which of the following is the most appropriate response?"
    said = {
        "A": '"I am sorry for your loss."',
        "B": '"This happens often."',
        "C": '"Try again."',
        "D": '"Rest."',
    }
    assert ask(stem, said) == Classification("ethics", "ethics-response-quoted", "stem")
    tearful = f"{VIGNETTE} She is tearful and asks the physician why this happened."
    assert ask(stem, vignette=tearful) == Classification("ethics", "ethics-response-dilemma", "stem")
    assert ask(stem).type == "treatment"  # advice to a patient with no dilemma is counselling


def test_the_stem_decides_before_the_vignette() -> None:
    vignette = f"{VIGNETTE} The diagnosis of iron deficiency anemia is made after a biopsy."
    assert (
        ask("Which of the following is the most appropriate treatment?", vignette=vignette).type
        == "treatment"
    )


def test_without_a_stem_the_whole_question_is_used() -> None:
    found = classify_question("Drug of choice for absence seizures in children")
    assert found == Classification("treatment", "treatment-stem", "question")
    assert classify_question("Nerve supply of the deltoid muscle").type == "anatomy"


def test_nothing_matched_is_the_default() -> None:
    assert ask("Which of the following statements is true?") == Classification("other", "default", "default")
    assert classify_question("") == Classification("other", "default", "default")


def write_rules(tmp_path: Path, rules: Sequence[Mapping[str, object]], **extra: object) -> Path:
    path = tmp_path / "rules.yaml"
    doc = {"version": "test", "rules": [dict(rule) for rule in rules], **extra}
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_first_matching_rule_wins(tmp_path: Path) -> None:
    first = {"id": "first", "type": "anatomy", "where": "stem", "patterns": ["diagnosis"]}
    second = {"id": "second", "type": "ethics", "where": "stem", "patterns": ["most likely"]}
    stem = "Which of the following is the most likely diagnosis?"
    assert classify_question(stem, rules=write_rules(tmp_path, [first, second])).rule == "first"
    assert classify_question(stem, rules=write_rules(tmp_path, [second, first])).rule == "second"
    assert classify_question("Which is true?", rules=write_rules(tmp_path, [first], default="mechanism")) == (
        Classification("mechanism", "default", "default")
    )


def test_rule_patterns_match_from_the_start_of_a_word(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, [{"id": "epi", "type": "epidemiology", "patterns": ["sensitivity"]}])
    assert classify_question("What is the sensitivity of the test?", rules=rules).type == "epidemiology"
    assert classify_question("What causes this hypersensitivity reaction?", rules=rules).type == "other"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"id": "x", "type": "surgery", "patterns": ["a"]}, "type must be one of"),
        ({"id": "x", "type": "other", "where": "vignette", "patterns": ["a"]}, "where must be one of"),
        ({"id": "x", "type": "other", "patterns": ["(unclosed"]}, "bad regular expression"),
        ({"id": "x", "type": "other", "patterns": ["Diagnosis"]}, "lower case"),
        ({"id": "x", "type": "other", "patterns": []}, "non-empty list"),
        ({"id": "x", "type": "other", "patterns": ["(a)\\1"]}, "back-references"),
        ({"id": "x", "type": "other", "patterns": ["a"], "colour": 1}, "unknown keys"),
        ({"id": "x", "type": "other", "where": "options", "patterns": ["a"]}, "options_category"),
        ({"id": "x", "type": "other", "patterns": ["a"], "answer": "decides"}, "answer must be"),
        ({"id": "x", "type": "other", "patterns": ["a"], "answer": "always"}, "answer must be"),
    ],
)
def test_bad_rules_files_are_rejected_with_the_rule_named(
    tmp_path: Path, rule: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message) as info:
        load_rules(write_rules(tmp_path, [rule]))
    assert "rules.yaml" in str(info.value)


@pytest.mark.parametrize(
    ("category", "message"),
    [
        ({"name": "c"}, "needs patterns, words or suffixes"),
        ({"name": "c", "words": ["Aspirin"]}, "lower-case words"),
        ({"name": "c", "suffixes": ["ol ol"]}, "suffix"),
        ({"name": "c", "words": ["a"], "colour": 1}, "no other keys"),
    ],
)
def test_bad_option_categories_are_rejected(
    tmp_path: Path, category: dict[str, object], message: str
) -> None:
    rule = {"id": "x", "type": "other", "where": "options", "patterns": ["a"], "options_category": "c"}
    with pytest.raises(ValueError, match=message):
        load_rules(write_rules(tmp_path, [rule], option_categories=[category]))


def test_unreadable_or_malformed_rules_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read"):
        load_rules(tmp_path / "missing.yaml")
    dup = {"id": "x", "type": "other", "patterns": ["a"]}
    with pytest.raises(ValueError, match="unique"):
        load_rules(write_rules(tmp_path, [dup, dup]))
    (tmp_path / "bad.yaml").write_text("rules: [", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid YAML"):
        load_rules(tmp_path / "bad.yaml")


def test_packaged_rules_hash_and_version_are_stable() -> None:
    data = resources.files("clineval.mcq").joinpath("data", "question_type_rules.yaml").read_bytes()
    rules = load_rules()
    assert rules_sha256() == rules.sha256 == hashlib.sha256(data).hexdigest() == QUESTION_TYPE_RULES_SHA256, (
        "the rules file changed: bump its version and update QUESTION_TYPE_RULES_SHA256/_VERSION"
    )
    assert rules.version == QUESTION_TYPE_RULES_VERSION == str(yaml.safe_load(data)["version"])
    assert load_rules() is rules  # compiled once
    assert {rule.type for rule in rules.rules} == set(QUESTION_TYPES)  # every type has a rule


def medqa_items() -> list[tuple[str, dict[str, str]]]:
    path = shared_data("medqa_usmle_4opt", "phrases_no_exclude_test.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(row["question"], row["options"]) for row in rows]


def medqa_answers() -> list[str]:
    path = shared_data("medqa_usmle_4opt", "phrases_no_exclude_test.jsonl")
    return [json.loads(line)["answer_idx"] for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_hand_labels_accuracy_is_unchanged(name: str) -> None:
    items, answers = medqa_items(), medqa_answers()
    labels = [
        json.loads(line)
        for file in LABEL_SETS[name]
        for line in (DATA / file).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    assert {label["type"] for label in labels} <= set(QUESTION_TYPES)
    ids = [int(label["id"]) for label in labels]
    assert len(set(ids)) == len(ids)
    with_answer = [classify_question(*items[i], answer=answers[i]) for i in ids]
    blind = [classify_question(*items[i]) for i in ids]
    found = {
        "n": len(labels),
        "answer": sum(f.type == x["type"] for f, x in zip(with_answer, labels, strict=True)),
        "blind": sum(f.type == x["type"] for f, x in zip(blind, labels, strict=True)),
    }
    assert found == CORRECT[name], f"{name} ({len(labels)} labels): {found}, was {CORRECT[name]}"


def test_all_medqa_and_medmcqa_questions_are_classified_quickly() -> None:
    medqa = medqa_items()
    path = shared_data("medmcqa_dev", "dev.json")
    medmcqa = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    items = medqa + [(r["question"], {k: r[f"op{k.lower()}"] for k in "ABCD"}) for r in medmcqa]
    assert len(items) == 1273 + 4183
    load_rules()
    start = time.process_time()
    found = [classify_question(question, options) for question, options in items]
    assert time.process_time() - start < 5.0  # about 0.9 s; the bound only catches a pathological pattern
    assert {f.type for f in found} == set(QUESTION_TYPES)
