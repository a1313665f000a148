"""DDx importers: Open-XDDx, DDXPlus, generic DDx JSONL, DDx predictions, LDDx outputs, DDXPlus replay.

Expected values were read by hand from the files in ../shared/data (see each folder's SOURCE.md).
"""

from __future__ import annotations

import ast
import asyncio
import csv
import glob
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from clineval.core import Case
from clineval.core.errors import DataFileError
from clineval.core.output import SystemOutput
from clineval.datasets import DATASETS
from clineval.ddx.lddx import text_key
from clineval.ddx.lddx_records import load_lddx_file
from clineval.scoring.registry import SCORERS
from clineval.systems.registry import SYSTEMS
from tests.helpers import shared_data

ROOT = Path("/")


def cases(fmt: str, **options: Any) -> list[Case]:
    return DATASETS.get(fmt)(options, ROOT).cases


def call(system: Any, case: Case) -> SystemOutput:
    output: SystemOutput = asyncio.run(system.call(case))
    return output


def open_xddx() -> list[Case]:
    return cases("open_xddx", path=str(shared_data("open_xddx", "open_xddx.jsonl")))


def ddxplus(**extra: Any) -> list[Case]:
    base = shared_data("ddxplus")
    options: dict[str, Any] = {
        "path": str(base / "test_patients_sample_first1000.csv"),
        "evidences": str(base / "release_evidences.json"),
        "conditions": str(base / "release_conditions.json"),
    }
    return cases("ddxplus", **{**options, **extra})


# ---------------------------------------------------------------- Open-XDDx


def test_open_xddx_counts_and_first_case_by_hand() -> None:
    loaded = open_xddx()
    assert len(loaded) == 570
    assert [c.id for c in loaded] == [str(i) for i in range(1, 571)]
    first = loaded[0]
    assert first.reference.differential == [
        "acute kidney injury (AKI)",
        "contrast-induced nephropathy",
        "drug-induced interstitial nephritis",
        "cholesterol embolization",
        "diabetic nephropathy",
    ]
    assert first.reference.findings["cholesterol embolization"] == [
        "mottled, reticulated purplish discoloration of the feet",
        "Serum Urea nitrogen 25 mg/dL",
        "Creatinine 4.2 mg/dL",
        "intravascular spindle-shaped vacuoles",
    ]
    assert first.metadata == {"specialty": "Endocrine disorder", "disease_num": 5}
    assert first.input.vignette is not None and first.input.vignette.startswith("Two weeks after undergoing")
    assert first.input.question == first.input.vignette and not first.input.options
    assert all(len(c.reference.differential) == c.metadata["disease_num"] for c in loaded)
    assert len(Counter(c.metadata["specialty"] for c in loaded)) == 9


# ---------------------------------------------------------------- DDXPlus


def test_ddxplus_counts_and_first_row_by_hand() -> None:
    loaded = ddxplus()
    assert len(loaded) == 1000 and loaded[0].id == "0" and loaded[-1].id == "999"
    assert Counter(c.metadata["sex"] for c in loaded) == {"F": 546, "M": 454}
    first = loaded[0]  # age 8, M, Pneumonia, initial evidence E_66
    assert first.reference.differential == ["Pneumonia"]
    ddx = first.reference.data["ddxplus_differential"]
    assert len(ddx) == 17 and ddx[0] == ["Pneumonia", pytest.approx(0.09872966099247019)]
    assert ddx[-1][0] == "Chagas"
    assert first.reference.data["severity"] == 3
    assert first.metadata == {"sex": "M", "age_band": "0-17", "initial_evidence": "E_66"}
    vignette = first.input.vignette or ""
    assert vignette.startswith("Patient: 8-year-old male.\nPresenting complaint (initial evidence): Are you")
    assert "- Characterize your pain: a knife stroke, sharp\n" in vignette
    assert "- How intense is the pain? 2 (0-10)\n" in vignette
    assert "- Have you traveled out of the country in the last 4 weeks? no\n" in vignette
    assert "History and risk factors:\n- Do you drink alcohol excessively" in vignette
    assert "E_" not in vignette and first.input.question == vignette
    assert [c.input.vignette for c in ddxplus()[:50]] == [c.input.vignette for c in loaded[:50]]


def test_ddxplus_without_catalogues_lists_codes() -> None:
    base = shared_data("ddxplus")
    plain = cases("ddxplus", path=str(base / "test_patients_sample_first1000.csv"))
    assert len(plain) == 1000 and "E_54: V_179, V_192" in (plain[0].input.vignette or "")
    assert "severity" not in plain[0].reference.data


def test_ddxplus_must_show_top1_and_recall_match_independent_count() -> None:
    """Treating the dataset's own differential as a system output: top-1 exactly as computed by hand."""
    path = shared_data("ddxplus", "test_patients_sample_first1000.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    top1_hits = 0
    recall_hits = 0
    for row in rows:
        pairs = ast.literal_eval(row["top5_diagnoses"])
        best = max(pairs, key=lambda pair: pair[1])  # first of the most probable
        top1_hits += best[0] == row["diagnosis"]
        recall_hits += row["diagnosis"] in [name for name, _ in pairs]
    assert len(rows) == 1000 and top1_hits == 732 and recall_hits == 1000  # SOURCE.md: 732/1000, 1000/1000

    system = SYSTEMS.get("ddxplus_differential")({}, ROOT)
    loaded = ddxplus()
    ours_top1 = 0
    ours_recall = 0
    for case in loaded:
        output = call(system, case)
        assert output.structured is not None and output.structured.differential
        names = [item.diagnosis for item in output.structured.differential]
        ours_top1 += names[0] == case.reference.differential[0]
        ours_recall += case.reference.differential[0] in names
    assert ours_top1 == top1_hits and ours_top1 / len(loaded) == pytest.approx(0.732)
    assert ours_recall == len(loaded)


def test_ddxplus_differential_system_ranks_and_fails_cleanly() -> None:
    case = ddxplus()[0]
    output = call(SYSTEMS.get("ddxplus_differential")({"top_k": 3}, ROOT), case)
    assert output.structured is not None and output.structured.differential is not None
    items = output.structured.differential
    assert [i.diagnosis for i in items] == ["Pneumonia", "Influenza", "Bronchitis"]
    assert items[0].confidence == pytest.approx(0.09872966099247019) and items[0].status == "proposed"
    bare = Case(id="x", input=case.input)
    failed = call(SYSTEMS.get("ddxplus_differential")({}, ROOT), bare)
    assert failed.error is not None and failed.error.kind == "missing_prediction"
    assert not SYSTEMS.get("ddxplus_differential")({}, ROOT).live


def test_ddx_scorer_on_ddxplus_replay_matches_independent_top1() -> None:
    if "ddx" not in SCORERS:
        pytest.skip("the ddx scorer is not registered yet")
    scorer = SCORERS.get("ddx")({})
    system = SYSTEMS.get("ddxplus_differential")({}, ROOT)
    from clineval.core.protocols import ScoringContext

    loaded = ddxplus()
    outputs = [call(system, c) for c in loaded]
    scores = [scorer(ScoringContext(case=c, output=o)) for c, o in zip(loaded, outputs, strict=True)]
    values: dict[str, Any] = {}
    for metric in scorer.metrics:
        values.update(metric.compute(scores))
    assert values["top1_accuracy"] == pytest.approx(0.732)
    # the replayed list holds the dataset's whole differential (up to 29 pathologies); only the first 10 are
    # scored (max_differential): recall = the share of patients whose pathology is among them, = top-10 here
    assert values["recall"] == pytest.approx(0.997) == values["top10_accuracy"]
    longer = sum(len(o.structured.differential or []) > 10 for o in outputs if o.structured)
    assert values["truncated_rate"] == pytest.approx(longer / len(loaded)) == pytest.approx(0.345)
    whole = SCORERS.get("ddx")({"max_differential": None})
    pairs = zip(loaded, outputs, strict=True)
    all_scored = [whole(ScoringContext(case=c, output=o)) for c, o in pairs]
    assert {s.breakdown["beyond_k"] for s in all_scored} == {0}
    assert sum(s.value for s in all_scored) == len(loaded)  # the whole list: the pathology is always in it


# ---------------------------------------------------------------- generic DDx JSONL + predictions


def test_generic_jsonl_ddx_rows(tmp_path: Path) -> None:
    rows = [
        {
            "id": "a",
            "vignette": "A 50-year-old man with chest pain.",
            "ground_truth": ["MI", "PE"],
            "site": "er",
        },
        {"vignette": "Fever and cough.", "ground_truth": {"pneumonia": ["fever", "cough"], "flu": []}},
        {"id": "c", "question": "What is it?", "ground_truth": "asthma; COPD", "answer": "A"},
    ]
    (tmp_path / "ddx.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    loaded = DATASETS.get("jsonl")({"path": "ddx.jsonl"}, tmp_path).cases
    assert [c.id for c in loaded] == ["a", "1", "c"]
    first, second, third = loaded
    assert first.reference.differential == ["MI", "PE"] and first.reference.findings == {}
    assert first.input.vignette == first.input.question == "A 50-year-old man with chest pain."
    assert first.metadata == {"site": "er"} and first.reference.answer is None and not first.input.options
    assert second.reference.differential == ["pneumonia", "flu"]
    assert second.reference.findings == {"pneumonia": ["fever", "cough"]}
    assert third.reference.differential == ["asthma", "COPD"] and third.reference.answer == "A"
    assert third.input.question == "What is it?" and third.input.vignette is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"ground_truth": ["x"]}, "missing field 'vignette' (or 'question')"),
        ({"vignette": "v", "ground_truth": [1]}, "ground_truth should list diagnosis names"),
        ({"vignette": "v", "ground_truth": {"x": 3}}, "findings of 'x' should be a list"),
        ({"vignette": "v", "ground_truth": []}, "non-empty list"),
    ],
)
def test_generic_jsonl_ddx_errors_name_the_line(tmp_path: Path, line: dict[str, Any], message: str) -> None:
    good = {"vignette": "ok", "ground_truth": ["x"]}
    (tmp_path / "bad.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(DataFileError) as err:
        DATASETS.get("jsonl")({"path": "bad.jsonl"}, tmp_path)
    assert err.value.line == 2 and message in str(err.value)


def test_ddx_predictions_file_gives_structured_differential(tmp_path: Path) -> None:
    line = {
        "id": "a",
        "output": {"differential": [{"diagnosis": "MI"}, {"diagnosis": "PE", "status": "excluded"}]},
    }
    (tmp_path / "p.jsonl").write_text(json.dumps(line) + "\n")
    system = SYSTEMS.get("predictions")({"path": "p.jsonl"}, tmp_path)
    output = call(system, Case.model_validate({"id": "a", "input": {"vignette": "v"}}))
    assert output.structured is not None and output.structured.differential is not None
    assert [(i.diagnosis, i.status) for i in output.structured.differential] == [
        ("MI", "proposed"),
        ("PE", "excluded"),
    ]


# ---------------------------------------------------------------- LDDx


def lddx(folder: str, **options: Any) -> Any:
    return SYSTEMS.get("lddx")({"path": str(shared_data("lddx", folder)), **options}, ROOT)


def test_lddx_file_counts() -> None:
    # SOURCE.md's table says 31 files for results_v8_6; the folder holds 30 (no Case 24): 41 in all.
    assert len(lddx("results_v8_5")) == 11
    assert len(lddx("results_v8_6")) == 30
    assert len(lddx("transcripts_v10")) == 5
    assert len(lddx("transcripts_v10", format="transcript")) == 5
    with pytest.raises(DataFileError, match="no LDDx results files"):
        lddx("transcripts_v10", format="results")


def test_lddx_case_number_is_the_open_xddx_index_verified_by_text() -> None:
    by_id = {c.id: c for c in open_xddx()}
    files = sorted(glob.glob(str(shared_data("lddx") / "*" / "ddx_*.json")))
    assert len(files) == 46
    exact = 0
    for file in files:
        record = load_lddx_file(file)
        case = by_id[str(record.case_number)]
        assert text_key(record.case_text) == text_key(case.input.vignette or ""), file
        exact += " ".join(record.case_text.split()) == " ".join((case.input.vignette or "").split())
        assert record.ground_truth == case.reference.differential, file
    assert exact == 42  # 4 results files differ by one character (a dropped apostrophe, an extra space)
    odd = load_lddx_file(
        glob.glob(str(shared_data("lddx") / "results_v8_6" / "ddx_results_Case_27_*.json"))[0]
    )
    assert odd.recorded_case_id == "Case 26" and odd.case_number == 27  # the file's own case_id is wrong


def test_lddx_join_same_by_case_number_and_by_text() -> None:
    dataset = open_xddx()
    for folder in ("results_v8_5", "results_v8_6", "transcripts_v10"):
        by_number = lddx(folder)
        by_text = lddx(folder, id_from="text_match")
        found = set()
        for case in dataset:
            first, second = call(by_number, case), call(by_text, case)
            assert first.failed == second.failed
            if not first.failed:
                found.add(case.id)
                assert first.raw == second.raw
            else:
                assert first.error is not None and first.error.kind == "missing_prediction"
        assert len(found) == len(by_number) and not by_number.unused_ids() and not by_text.unused_ids()
    assert {c.id for c in dataset if not call(lddx("transcripts_v10"), c).failed} == {
        "1",
        "175",
        "225",
        "250",
        "275",
    }


def test_lddx_results_file_mapped_by_hand() -> None:
    case = open_xddx()[0]
    output = call(lddx("results_v8_5"), case)
    assert output.structured is not None and output.raw is not None
    differential = output.structured.differential or []
    assert [(i.diagnosis, i.status) for i in differential] == [
        ("Drug-Induced Vasculitis", "proposed"),
        ("Acute Kidney Injury", "proposed"),
        ("Systemic Vasculitis (Likely Microscopic Polyangiitis Or Polyarteritis Nodosa)", "proposed"),
    ]
    raw = output.raw
    assert (raw["tp_count"], raw["fp_count"], raw["fn_count"], raw["caa_count"], raw["ae_count"]) == (
        1,
        2,
        2,
        0,
        2,
    )
    assert raw["true_positives"] == [
        {"ground_truth": "contrast-induced nephropathy", "system": "Acute Kidney Injury"}
    ]
    assert raw["false_negatives"] == ["cholesterol embolization", "drug-induced interstitial nephritis"]
    assert raw["tp_rate"] == 0.2 and raw["traditional_recall"] == pytest.approx(1 / 3)
    assert raw["clinical_reasoning_quality"] == pytest.approx(0.42857142857142855)
    assert raw["diagnostic_safety"] == pytest.approx(1 / 3) and raw["caa_weight_applied"] == -0.2
    assert raw["credibility_scores"]["Dr. Emily Chen"] == 44.4
    assert raw["tempo_scores"]["team_independent_differentials"] == pytest.approx(3.8)
    assert raw["debate_quality"] == 2.5 and raw["lddx_case_id"] == "Case 1"
    assert len(raw["round_diagnoses"]["team_independent_differentials"]) == 28  # tempo 3.8 = 1 + 0.1 * 28
    turns = output.structured.transcript or []
    assert len(turns) == 1 + 1 + 9 + 1 + 27 + 9 + 9
    assert [t.phase for t in turns][:3] == [
        "specialized_ranking",
        "symptom_management",
        "team_independent_differentials",
    ]
    assert (turns[0].round, turns[0].agent, turns[0].specialty) == (1, "Dr. Anya Sharma", "Nephrology")
    debate = [t for t in turns if t.phase == "refinement_and_justification"]
    assert {t.round for t in debate} == {5} and Counter(getattr(t, "subround", None) for t in debate) == {
        1: 9,
        2: 9,
        3: 9,
    }
    votes = output.structured.votes or []
    assert len(votes) == 24 and votes[0] == {
        "agent": "Dr. Anya Sharma",
        "diagnosis": "Drug",
        "rank": 1,
        "points": 3,
    }
    assert output.latency_s == pytest.approx(328.8239555358887)
    assert output.stage_latency_s["cant_miss"] == pytest.approx(42.681580781936646)


def test_lddx_cant_miss_items_are_alternatives() -> None:
    case = open_xddx()[4]
    output = call(lddx("results_v8_5"), case)
    assert output.structured is not None
    items = [(i.diagnosis, i.status) for i in output.structured.differential or []]
    # the critical "Peripheral Artery Disease (PAD)" is already in the final list; only the new one is added
    assert items == [
        ("Diabetic Neuropathy", "proposed"),
        ("Peripheral Artery Disease (Pad)", "proposed"),
        ("Peroneal Nerve Entrapment", "proposed"),
        ("Acute Limb Ischemia", "alternative"),
    ]


def test_lddx_v10_transcript_mapped_by_hand() -> None:
    path = shared_data("lddx", "transcripts_v10", "ddx_transcript_aki_multi_system.json")
    record = load_lddx_file(path)
    assert record.format == "transcript" and record.case_number == 1 and record.recorded_case_id == "case_001"
    assert record.final_diagnoses == [
        "Thrombotic Microangiopathy (Tma)",
        "Thrombotic Thrombocytopenic Purpura (Ttp)",
        "Drug-Induced Nephropathy",
    ]
    assert record.ground_truth_findings["diabetic nephropathy"][0] == "decreased urinary output"
    phases = Counter(t.phase for t in record.transcript)
    assert phases == {
        "specialized_ranking": 5,
        "symptom_management": 5,
        "team_differentials": 5,
        "master_list": 1,
        "refinement": 15,
        "voting": 5,
        "cant_miss": 5,
    }
    refinement = [t for t in record.transcript if t.phase == "refinement"]
    assert [getattr(t, "subround", None) for t in refinement] == [1] * 5 + [2] * 5 + [3] * 5
    assert record.transcript[0].specialty == "Internal Medicine"
    assert len(record.votes) == 15 and record.votes[0]["diagnosis"] == "Thrombotic Microangiopathy (Tma)"
    output = record.to_output()
    assert (
        output.raw is not None and output.raw["credibility_scores"]["Dr. Michael Lee"]["final_score"] == 205.9
    )
    assert output.raw["voting_result"]["winner"] == "Thrombotic Microangiopathy (Tma)"
    assert output.latency_s == pytest.approx(321.25401163101196)


def test_lddx_two_versions_of_a_case_is_an_error(tmp_path: Path) -> None:
    pattern = str(shared_data("lddx") / "results_v8_*" / "ddx_results_Case_1_*.json")
    with pytest.raises(DataFileError, match="two LDDx files for case 1"):
        SYSTEMS.get("lddx")({"path": pattern}, ROOT)
    (tmp_path / "ddx_results_Case_1_x.json").write_text('{"something": 1}')
    with pytest.raises(DataFileError, match="not an LDDx"):
        SYSTEMS.get("lddx")({"path": str(tmp_path)}, ROOT)
    assert not lddx("transcripts_v10").live and lddx("transcripts_v10").spec.content_hash
