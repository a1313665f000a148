"""make_variants on MedQA-, MedMCQA- and generic JSONL-shaped records; the generation report."""

import json
from pathlib import Path

import pytest

from clineval.counterfactual.generation_report import render_markdown, word_diff
from clineval.counterfactual.make import FORMATS, make_variants, read_jsonl, write_jsonl
from tests.helpers import SHARED_DATA

MEDQA = SHARED_DATA / "medqa_usmle_4opt" / "phrases_no_exclude_test.jsonl"

RECORDS = [
    {
        "question": "A 45-year-old African American man has a cough. His temperature is 38°C. "
        "What is the cause?",
        "options": {"A": "Reassure him", "B": "Asthma"},
        "answer_idx": "B",
        "meta_info": "step1",
    },
    {
        "question": "A 28-year-old woman at 10 weeks' gestation has nausea. Which drug is safe?",
        "options": {"A": "Doxylamine", "B": "Isotretinoin"},
        "answer_idx": "A",
        "meta_info": "step2&3",
    },
    {
        "question": "Which enzyme is deficient in phenylketonuria?",
        "options": {"A": "Phenylalanine hydroxylase", "B": "Tyrosinase"},
        "answer_idx": "A",
        "meta_info": "step1",
    },
]


def test_ids_groups_reference_and_metadata() -> None:
    out, _ = make_variants(RECORDS, ["sex", "race", "ses"], "question", option_fields=("options",))
    ids = [r["id"] for r in out]
    assert ids == [
        "0:reference",
        "0:male",
        "0:female",
        "0:white",
        "0:black",
        "0:high_income",
        "0:low_income",
        "1:reference",
        "1:high_income",
        "1:low_income",
    ]
    female = next(r for r in out if r["id"] == "0:female")
    assert female["question"].startswith("A 45-year-old African American woman has a cough. Her temperature")
    assert female["options"] == {"A": "Reassure her", "B": "Asthma"}
    assert female["group"] == "0" and female["variant"] == "female" and female["attribute"] == "sex"
    assert female["changed"] is True and female["cf_rule"] == "sex@1" and len(female["cf_rule_sha256"]) == 64
    assert female["answer_idx"] == "B" and female["meta_info"] == "step1"
    reference = out[0]
    assert reference["question"] == RECORDS[0]["question"] and reference["attribute"] is None
    assert next(r for r in out if r["id"] == "0:male")["changed"] is False
    assert RECORDS[0]["options"] == {"A": "Reassure him", "B": "Asthma"}  # input untouched


def test_report_counts_add_up() -> None:
    _, report = make_variants(RECORDS, ["sex", "race", "ses"], "question", option_fields=("options",))
    data = report.to_dict()
    for row in data["attributes"].values():
        assert row["swapped"] + row["skipped"] + row["not_applicable"] == len(RECORDS)
    assert data["attributes"]["sex"]["skipped_by_rule"] == {"sex.pregnancy": 1}
    assert data["attributes"]["race"]["not_applicable_by_reason"] == {"race not stated": 2}
    assert data["attributes"]["ses"]["not_applicable_by_reason"] == {
        "no patient introduced (no age phrase)": 1
    }
    assert data["n_groups"] == 2 and data["n_variants"] == 10
    assert "sex@1" in data["rules"] and "exclusion:sex.pregnancy@1" in data["rules"]


def test_medmcqa_shape_uses_its_id() -> None:
    record = {
        "id": "abc-1",
        "question": "A 30-year-old man has a cough. He smokes. What is the cause?",
        "opa": "He has asthma",
        "opb": "b",
        "opc": "c",
        "opd": "d",
        "cop": 1,
    }
    out, _ = make_variants([record], ["sex"], **FORMATS["medmcqa"])
    assert [r["id"] for r in out] == ["abc-1:reference", "abc-1:male", "abc-1:female"]
    assert out[2]["opa"] == "She has asthma" and out[2]["group"] == "abc-1"


def test_generic_jsonl_field_and_keep_unvaried() -> None:
    records = [
        {"id": 7, "vignette": "A 50-year-old man has a cough."},
        {"id": 8, "vignette": "No patient here."},
    ]
    out, _ = make_variants(records, ["sex"], "vignette")
    assert [r["id"] for r in out] == ["7:reference", "7:male", "7:female"]
    out, _ = make_variants(records, ["sex"], "vignette", keep_unvaried=True)
    assert [r["id"] for r in out][-1] == "8:reference"


def test_errors() -> None:
    with pytest.raises(ValueError):
        make_variants(RECORDS, ["age"], "question")
    with pytest.raises(ValueError):
        make_variants([{"text": "x"}], ["sex"], "question")
    with pytest.raises(ValueError):
        make_variants(RECORDS, ["race"], "question", variants={"race": ["martian"]})


def test_deterministic_and_jsonl_roundtrip(tmp_path: Path) -> None:
    first, r1 = make_variants(RECORDS, ["sex", "race", "ses"], "question", option_fields=("options",))
    second, r2 = make_variants(RECORDS, ["sex", "race", "ses"], "question", option_fields=("options",))
    assert first == second and r1.to_dict() == r2.to_dict()
    path = tmp_path / "v.jsonl"
    assert write_jsonl(path, first) == len(first)
    assert read_jsonl(path) == json.loads(json.dumps(first))


def test_markdown_report_and_word_diff() -> None:
    _, report = make_variants(RECORDS, ["sex", "race", "ses"], "question", option_fields=("options",))
    text = render_markdown(report, title="t")
    assert "| sex | 1 | 1 | 1 |" in text and "`sex.pregnancy@1`" in text and "## Rules (provenance)" in text
    assert word_diff("A man has a cough.", "A woman has a cough.") == "…A [man → woman]"


@pytest.mark.skipif(not MEDQA.exists(), reason="shared MedQA file not present")
def test_first_medqa_records() -> None:
    records = read_jsonl(MEDQA)[:60]
    out, report = make_variants(records, ["sex", "race", "ses"], **FORMATS["medqa"])
    data = report.to_dict()
    for row in data["attributes"].values():
        assert row["swapped"] + row["skipped"] + row["not_applicable"] == 60
    assert len({r["id"] for r in out}) == len(out)
    for record in out:
        assert record["options"].keys() == records[int(record["group"])]["options"].keys()
