"""The judge key (model + prompt + prompt hash + settings), the permuted output and adjudications as
labels."""

from __future__ import annotations

import pytest

from clineval.core import ComponentSpec, SystemOutput
from clineval.core.output import StructuredOutput
from clineval.judging.qualification import QualificationInputError
from clineval.judging.qualification.identity import judge_identities, reported_prompts
from clineval.judging.qualification.reorder import adjudication_labels, permuted_output, text_blocks

ARGS = {
    "base_url": "http://127.0.0.1:9/v1",
    "model": "judge-model",
    "api_key_env": "JUDGE_KEY",
    "prompt": "equivalence_judge_v1",
    "temperature": 0.7,
    "max_tokens": None,
    "seed": None,
    "system_prompt": None,
    "output": "text",
    "conversation": "messages",
    "prompts": {"judge_dimension_v1": "a" * 64, "rubric_healthbench_reference_v1": "b" * 64},
    "prompt_settings": {"rubric_healthbench_reference_v1": {"temperature": 0.5}},
}


def spec(**changes: object) -> ComponentSpec:
    return ComponentSpec(type="openai", args={**ARGS, **changes}, content_hash="c" * 64)


def test_one_identity_per_prompt_with_its_own_settings_and_no_credentials() -> None:
    found = judge_identities(spec())
    assert set(found) == {"equivalence_judge_v1", "judge_dimension_v1", "rubric_healthbench_reference_v1"}
    dims = found["judge_dimension_v1"]
    assert dims.prompt_hash == "a" * 64 and dims.settings["temperature"] == 0.7
    assert found["rubric_healthbench_reference_v1"].settings["temperature"] == 0.5
    assert found["equivalence_judge_v1"].prompt_hash == "c" * 64
    assert not {"base_url", "api_key_env", "model", "prompts"} & set(dims.settings)
    assert "model judge-model + prompt judge_dimension_v1@aaaaaaaa + settings" in dims.describe()
    assert reported_prompts(spec()) == ["judge_dimension_v1", "rubric_healthbench_reference_v1"]
    assert reported_prompts(spec(prompts=None)) == ["equivalence_judge_v1"]


def test_the_key_follows_model_prompt_and_settings_not_the_endpoint() -> None:
    key = judge_identities(spec())["judge_dimension_v1"].judge_key
    assert judge_identities(spec(base_url="https://gateway/v1"))["judge_dimension_v1"].judge_key == key
    assert judge_identities(spec(api_key_env="OTHER"))["judge_dimension_v1"].judge_key == key
    for change in ({"model": "other"}, {"temperature": 0.0}, {"prompts": {"judge_dimension_v1": "d" * 64}}):
        assert judge_identities(spec(**change))["judge_dimension_v1"].judge_key != key


def test_text_blocks_paragraphs_then_lines_then_sentences() -> None:
    assert text_blocks("A.\n\nB.\n\nC.") == (["A.", "B.", "C."], "\n\n")
    assert text_blocks("- a\n- b") == (["- a", "- b"], "\n")
    assert text_blocks("First one. Second one? Third!") == (["First one.", "Second one?", "Third!"], " ")


def test_the_permuted_output_has_the_same_parts_in_another_order() -> None:
    text = "line one\nline two\nline three\nline four"
    shown = permuted_output(SystemOutput(text=text), 0, "case-1")
    assert shown is not None and shown.text != text
    assert sorted((shown.text or "").split("\n")) == sorted(text.split("\n"))
    assert permuted_output(SystemOutput(text=text), 0, "case-1") == shown  # seeded
    assert permuted_output(SystemOutput(text="One block only"), 0, "c") is None
    assert permuted_output(SystemOutput.failure("timeout", "x"), 0, "c") is None
    structured = StructuredOutput(contraindications_checked=["a", "b", "c"], problems=["p"])
    moved = permuted_output(SystemOutput(structured=structured), 0, "c")
    assert moved is not None and moved.structured is not None
    assert moved.structured.contraindications_checked != ["a", "b", "c"]
    assert sorted(moved.structured.contraindications_checked or []) == ["a", "b", "c"]
    assert moved.structured.problems == ["p"]


def test_adjudications_become_grade_and_same_labels() -> None:
    rows = [
        ("c1", "judge_dimension", "judge_dimensions:coherence", 4, "dr_a"),
        ("c1", "ddx_pair", "ddx|Myocardial infarction|heart attack", True, "dr_a"),
        ("c2", "judge_dimension", "judge_dimensions:coherence", True, "dr_b"),  # not a grade: skipped
    ]
    labels = adjudication_labels(rows, source="run r1")
    assert labels.of_kind("grade") == {("c1", "coherence"): {"dr_a": 4}}
    assert labels.of_kind("same") == {("heart attack", "Myocardial infarction"): {"dr_a": True}}
    with pytest.raises(QualificationInputError, match="no judge-dimension"):
        adjudication_labels([], source="run r1")


def test_records_round_trip_on_each_backend(store_url: str) -> None:
    import math
    from datetime import UTC, datetime, timedelta

    from clineval.store import ResultStore
    from clineval.store.qualifications import (
        QualificationRecord,
        add_qualification,
        latest_for,
        list_qualifications,
    )

    now = datetime(2026, 12, 1, tzinfo=UTC)

    def record(qid: str, key: str, qualified: bool, when: datetime) -> QualificationRecord:
        return QualificationRecord(
            qualification_id=qid,
            created_at=when,
            judge_key=key,
            judge_model="m",
            prompt="p",
            prompt_hash="h" * 64,
            settings={"temperature": 0.7},
            settings_hash="s" * 64,
            samples=3,
            seed=0,
            suite="s.yaml",
            task_id="t",
            labels_hash="l" * 64,
            labels_source="file",
            labels_ref="labels.jsonl",
            n_labelled=30,
            reviewers=1,
            thresholds={"min_kappa": 0.6},
            figures=[{"group": "coherence", "bias": math.nan}],
            qualified=qualified,
            reasons=[],
            clineval_version="0.1.0",
        )

    with ResultStore(store_url) as store:
        add_qualification(store, record("q-1", "k1", True, now - timedelta(days=1)))
        add_qualification(store, record("q-2", "k1", False, now))
        add_qualification(store, record("q-3", "k2", True, now))
        assert [r.qualification_id for r in list_qualifications(store)][:1] in (["q-2"], ["q-3"])
        latest = latest_for(store, ["k1", "k2", "k3"])
        assert latest["k1"].qualification_id == "q-2" and not latest["k1"].qualified and "k3" not in latest
        assert math.isnan(latest["k2"].figures[0]["bias"]) and latest["k2"].created_at == now
