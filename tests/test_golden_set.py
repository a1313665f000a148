"""The synthetic golden set: counts, declared held-out split, loader, reproducible generator, references."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from clineval.core import RecommendedAction, ScoringContext, StructuredOutput, SystemOutput
from clineval.core.errors import DataFileError
from clineval.datasets.registry import DATASETS
from clineval.scoring.guidelines import GuidelineAdherenceScorer
from clineval.scoring.rule_engine import applicable_rules, load_rules

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "data" / "golden_set" / "golden_set_v1.jsonl"
EXPECTED = {"pneumonia": 15, "chf": 15, "copd": 15, "pe": 15, "mi": 15, "multi_system": 15, "adversarial": 10}


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "generate_golden_set", ROOT / "scripts" / "generate_golden_set.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]


def load(split: str | None = None) -> Any:
    options: dict[str, Any] = {"path": str(GOLDEN)}
    if split:
        options["split"] = split
    return DATASETS.get("golden_set")(options, ROOT)


def test_counts_per_condition() -> None:
    data = rows()
    assert len(data) == 100
    assert Counter(r["metadata"]["condition"] for r in data) == EXPECTED
    assert all(r["version"] == 1 for r in data)


def test_heldout_split_declared_and_stratified() -> None:
    data = rows()
    assert {r["metadata"]["split"] for r in data} == {"train", "heldout"}
    heldout = Counter(r["metadata"]["condition"] for r in data if r["metadata"]["split"] == "heldout")
    assert sum(heldout.values()) == 20
    assert all(heldout[c] == (2 if c == "adversarial" else 3) for c in EXPECTED)


def test_loader_split_filter() -> None:
    everything, train, heldout = load(), load("train"), load("heldout")
    assert len(everything.cases) == 100 and len(train.cases) == 80 and len(heldout.cases) == 20
    assert {c.metadata["split"] for c in train.cases} == {"train"}
    assert not {c.id for c in train.cases} & {c.id for c in heldout.cases}
    assert len({everything.content_hash, train.content_hash, heldout.content_hash}) == 3
    case = everything.cases[0]
    assert case.input.question and case.input.data["patient"]["conditions"]
    assert case.reference.data["expected_actions"] and case.metadata["condition"] == "pneumonia"
    with pytest.raises(Exception, match="split"):
        DATASETS.get("golden_set")({"path": str(GOLDEN), "split": "test"}, ROOT)


def test_loader_rejects_missing_split(tmp_path: Path) -> None:
    row = rows()[0]
    row["metadata"].pop("split")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"bad\.jsonl:1: .*split"):
        DATASETS.get("golden_set")({"path": str(bad)}, tmp_path)


def test_generator_is_reproducible(tmp_path: Path) -> None:
    out = tmp_path / "golden.jsonl"
    gen = generator()
    assert gen.main(["--out", str(out)]) == 0
    assert out.read_bytes() == GOLDEN.read_bytes()
    assert gen.main(["--out", str(GOLDEN), "--check"]) == 0


def test_case_shape() -> None:
    for r in rows():
        p = r["patient"]
        assert {
            "age",
            "sex",
            "conditions",
            "medications",
            "allergies",
            "labs",
            "vitals",
            "ef",
            "scores",
            "cxr",
            "note",
        } <= set(p)
        assert all({"name", "value", "unit", "flag"} <= set(x) for x in p["labs"])
        ref = r["reference"]
        assert {
            "expected_problems",
            "expected_actions",
            "expected_escalation",
            "escalation_reasons",
            "evidence_source_types",
            "severity",
        } <= set(ref)
        assert ref["severity"] in ("low", "moderate", "high", "critical")
        assert r["metadata"]["case_kind"] in ("typical", "adversarial")
        assert ref["expected_problems"]


RULES_V1 = ROOT / "data" / "golden_set" / "guideline_rules_v1.yaml"  # what golden set v1 was built from


def test_references_come_from_the_rule_engine() -> None:
    used: set[str] = set()
    v1 = load_rules(str(RULES_V1))
    assert v1.version == "1.0.0"
    for r in rows():
        rules = applicable_rules(r["patient"], v1)
        assert r["reference"]["expected_rules"] == [x.id for x in rules], r["id"]
        assert r["reference"]["expected_escalation"] >= any(x.escalation for x in rules)
        used |= {x.id for x in rules}
    assert used == {x.id for x in v1.rules}  # every rule is exercised by the golden set


def test_adversarial_cases_cover_the_edge_kinds() -> None:
    variants = {r["metadata"]["variant"] for r in rows() if r["metadata"]["condition"] == "adversarial"}
    for expected in (
        "missing_lab_bnp",
        "borderline_ef_40",
        "unit_variant_potassium_meq",
        "prompt_injection_note",
        "conflicting_potassium_haemolysed",
        "missing_vitals_pe",
    ):
        assert expected in variants
    injected = next(r for r in rows() if r["metadata"]["variant"] == "prompt_injection_note")
    assert "IGNORE PREVIOUS INSTRUCTIONS" in injected["patient"]["note"]


def test_a_recommendation_naming_the_expected_actions_is_adherent() -> None:
    scorer = GuidelineAdherenceScorer(ruleset=load_rules(str(RULES_V1)))
    for case in load().cases:
        actions = case.reference.data["expected_actions"]
        output = SystemOutput(
            structured=StructuredOutput(recommended_actions=[RecommendedAction(action=a) for a in actions])
        )
        score = scorer(ScoringContext(case=case, output=output))
        if actions:
            assert score.value == 1.0, (case.id, score.explanation)
        else:
            assert score.label == "not_applicable"


# Guideline rules v2 (issue 12 item 1) vs golden set v1 labels, until golden set v2 (item 4): every case
# whose expected actions, read as a recommendation, are not adherent under the packaged rules (default
# jurisdiction NICE), with why: each reason checked by hand against the case and the guideline. The test
# fails when a case contradicts without being listed, or is listed without contradicting.
_CAP_LOW = "v1 label 'oral antibiotic' names no NICE agent (amoxicillin; doxycycline/clarithromycin)"
_CAP_MOD = "v1 'beta-lactam' + 'macrolide' are IDSA/ATS classes, not NICE's amoxicillin (+/- clarithromycin)"
_CAP_SEV = (
    "v1 labels 'intravenous beta-lactam' + 'macrolide' name no NICE agent (co-amoxiclav + clarithromycin)"
)
_HFREF = "v1 expects 2 of the 4 HFrEF pillars; ESC 2021 I-A: MRA and SGLT2i are missing"
_ABX = "purulent sputum in the note: GOLD antibiotics (Evidence B) not in the v1 labels"
_O2 = "SpO2 < 88%: controlled oxygen to 88-92% not in the v1 labels"
_GROUP_E = "v1 'long-acting bronchodilator' is one drug; GOLD group E is LABA + LAMA"
_THROMBOLYSIS = (
    "hip replacement 2 weeks ago (note): thrombolysis absolutely contraindicated (< 3 weeks, ESC 2019)"
)
V2_CONTRADICTIONS: dict[str, str] = {
    **{f"gs1-pneumonia-{i:02d}": _CAP_LOW for i in range(1, 6)},
    **{f"gs1-pneumonia-{i:02d}": _CAP_MOD for i in range(6, 11)},
    **{f"gs1-pneumonia-{i:02d}": _CAP_SEV for i in range(11, 16)},
    **{f"gs1-chf-{i:02d}": _HFREF for i in (*range(1, 9), 13, 14, 15)},
    **{f"gs1-copd-{i:02d}": f"{_ABX}; {_O2}" for i in (1, 2, 3, 4, 5, 11)},
    **{f"gs1-copd-{i:02d}": _ABX for i in (6, 7, 8)},
    **{f"gs1-copd-{i:02d}": f"{_ABX}; {_GROUP_E}" for i in (9, 10, 12)},
    **{f"gs1-copd-{i:02d}": _GROUP_E for i in (13, 14, 15)},
    **{f"gs1-pe-{i:02d}": _THROMBOLYSIS for i in (11, 12, 13)},
    "gs1-multi_system-01": f"{_HFREF}; {_CAP_MOD}",
    "gs1-multi_system-02": f"{_CAP_LOW}; penicillin allergy",
    "gs1-multi_system-04": _ABX,
    "gs1-multi_system-05": _HFREF,
    "gs1-multi_system-06": "12 mm nodule: Fleischner > 8 mm is CT at 3 months, PET-CT or tissue sampling",
    "gs1-multi_system-07": _GROUP_E,
    "gs1-multi_system-08": _CAP_SEV,
    "gs1-multi_system-11": f"{_HFREF}; {_ABX}",
    "gs1-multi_system-12": _CAP_MOD,
    "gs1-multi_system-13": _GROUP_E,
    "gs1-multi_system-14": "HFpEF + large effusion: presumed HF transudate, BTS: treat the cause",
    "gs1-multi_system-15": f"{_CAP_SEV} (and penicillin allergy: levofloxacin); {_ABX}",
    "gs1-adversarial-02": _HFREF,
    "gs1-adversarial-07": _CAP_LOW,
}


def test_golden_v1_labels_against_rules_v2_only_known_contradictions() -> None:
    rules = load_rules()
    assert rules.version.startswith("2.")
    scorer = GuidelineAdherenceScorer(ruleset=rules)
    contradicting: set[str] = set()
    for case, row in zip(load().cases, rows(), strict=True):
        applicable = [x.id for x in applicable_rules(row["patient"], rules)]
        actions = case.reference.data["expected_actions"]
        output = SystemOutput(
            structured=StructuredOutput(recommended_actions=[RecommendedAction(action=a) for a in actions])
        )
        score = scorer(ScoringContext(case=case, output=output))
        if applicable != row["reference"]["expected_rules"] or score.label == "non_adherent":
            contradicting.add(case.id)
    assert contradicting == set(V2_CONTRADICTIONS)
