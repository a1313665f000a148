"""The synthetic golden set: counts, declared held-out split, loader, reproducible generator, references."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from clineval.cds.guard import check
from clineval.cds.guard.red_flags import DEFAULT_RED_FLAGS
from clineval.cds.rules.engine import evaluate_rules, load_rules
from clineval.cds.rules.guidelines import GuidelineAdherenceScorer
from clineval.core import RecommendedAction, ScoringContext, StructuredOutput, SystemOutput
from clineval.core.errors import DataFileError
from clineval.datasets.registry import DATASETS

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "data" / "golden_set" / "golden_set_v2.jsonl"
EXPECTED = {"pneumonia": 15, "chf": 15, "copd": 15, "pe": 15, "mi": 15, "multi_system": 15, "adversarial": 12}


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
    assert len(data) == 102
    assert Counter(r["metadata"]["condition"] for r in data) == EXPECTED
    assert all(r["version"] == 2 and r["id"].startswith("gs2-") for r in data)


def test_heldout_split_declared_and_stratified() -> None:
    data = rows()
    assert {r["metadata"]["split"] for r in data} == {"train", "heldout"}
    heldout = Counter(r["metadata"]["condition"] for r in data if r["metadata"]["split"] == "heldout")
    assert sum(heldout.values()) == 20
    assert all(heldout[c] == (2 if c == "adversarial" else 3) for c in EXPECTED)


def test_loader_split_filter() -> None:
    everything, train, heldout = load(), load("train"), load("heldout")
    assert len(everything.cases) == 102 and len(train.cases) == 82 and len(heldout.cases) == 20
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


NEW_IN_V2 = {"sample_type_pleural_fluid_ph", "lookalike_non_st_elevation"}


def _sections(ref: dict[str, Any]) -> dict[str, list[str]]:
    return {"recommended_actions": ref["expected_actions"], "when_to_escalate": ref["escalation_reasons"]}


def test_labels_agree_with_the_rules_and_the_red_flags() -> None:
    """Issue 12 item 4: every expected escalation agrees with the red flags, every expected action is
    adherent under the rules and none is forbidden, for every case, under the packaged rules and flags."""
    rules = load_rules()
    used: set[str] = set()
    for r in rows():
        patient, ref = r["patient"], r["reference"]
        hits = [h.id for h in DEFAULT_RED_FLAGS.detect(patient)]
        assert ref["red_flags"] == hits, r["id"]
        assert ref["expected_escalation"] == bool(hits), r["id"]  # no escalation a flag does not back
        results = [x for x in evaluate_rules(patient, _sections(ref), rules) if x.applicable is True]
        assert [x.rule_id for x in results] == ref["expected_rules"], r["id"]
        assert all(x.adherent for x in results), (
            r["id"],
            [(x.rule_id, x.missing, x.forbidden) for x in results],
        )
        assert not [x.forbidden for x in evaluate_rules(patient, _sections(ref), rules) if x.forbidden], r[
            "id"
        ]
        if hits:  # the escalation reasons pass the tier 1 escalation check
            checked = check({"when_to_escalate": ref["escalation_reasons"]}, patient=patient)
            assert checked.result("escalation").passed is True, r["id"]  # type: ignore[union-attr]
        used |= set(ref["expected_rules"])
    assert used == {x.id for x in rules.rules}  # every rule is exercised by the golden set


def test_a_recommendation_naming_the_expected_actions_is_adherent() -> None:
    scorer = GuidelineAdherenceScorer()
    for case in load().cases:
        actions = case.reference.data["expected_actions"]
        output = SystemOutput(
            structured=StructuredOutput(
                recommended_actions=[RecommendedAction(action=a) for a in actions],
                when_to_escalate=case.reference.data["escalation_reasons"] or None,
            )
        )
        score = scorer(ScoringContext(case=case, output=output))
        if actions:
            assert score.value == 1.0, (case.id, score.explanation)
        else:
            assert score.label == "not_applicable"


# Labels checked by hand against the guideline for the cases v1 got wrong (issue 12), written here from the
# case data and the guideline, not from the generator: (actions that must be expected, actions that must
# not, expected escalation, red flags that must fire, red flags that must not).
_NONE: tuple[str, ...] = ()
HAND_CHECKED: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool, tuple[str, ...], tuple[str, ...]]] = {
    # penicillin allergy (rash), CURB-65 2: NICE NG138 doxycycline or clarithromycin, no amoxicillin
    "gs2-pneumonia-07": (("doxycycline",), ("amoxicillin", "beta-lactam"), False, _NONE, ("hypotension",)),
    # CURB-65 2 met by DBP <= 60 with SBP 92-108: a moderate pneumonia, not septic shock
    "gs2-pneumonia-09": (("amoxicillin",), _NONE, False, _NONE, ("hypotension", "sepsis_hypotension")),
    # high-risk PE 2 weeks after hip replacement: thrombolysis absolutely contraindicated (ESC 2019 table 10)
    "gs2-pe-11": (("anticoagulation with unfractionated heparin", "surgical embolectomy"),
                  ("systemic thrombolysis",), True, ("high_risk_pe",), _NONE),
    # high-risk PE on the pill, no contraindication: systemic thrombolysis (ESC 2019 I B)
    "gs2-pe-14": (("systemic thrombolysis",), _NONE, True, ("high_risk_pe",), _NONE),
    # stable PE, SpO2 < 92% without CO2-retention risk: BTS 2017 oxygen, escalation
    "gs2-pe-01": (("anticoagulation", "risk stratification"), ("systemic thrombolysis",), True,
                  ("severe_hypoxaemia",), ("high_risk_pe",)),
    # K+ exactly 6.5 with peaked T waves: UKKA 2020 severe (>= 6.5), insulin-glucose + IV calcium
    "gs2-adversarial-05": (("insulin", "glucose", "IV calcium", "cardiac monitoring"), _NONE, True,
                           ("severe_hyperkalaemia", "hyperkalaemia_ecg_changes"), _NONE),
    # haemolysed K+ 7.1 superseded by a repeat of 4.6: no hyperkalaemia
    "gs2-adversarial-06": (_NONE, ("insulin",), False, _NONE, ("severe_hyperkalaemia",)),
    # pleural-fluid pH 7.18 is not a blood pH: no acidosis flag, no NIV (SpO2 92%: not < 92, no flag at all)
    "gs2-adversarial-11": (("thoracentesis",), ("non-invasive ventilation",), False, _NONE,
                           ("hypercapnic_acidosis", "severe_acidaemia")),
    # "non-ST elevation myocardial infarction" is not a STEMI
    "gs2-adversarial-12": (("acute coronary syndrome pathway",), ("primary PCI",), True,
                           ("acs_troponin_chest_pain",), ("stemi",)),
    # HFpEF with a large effusion: presumed transudate, treat the cause (BTS), no thoracentesis
    "gs2-multi_system-14": (("loop diuretic",), ("thoracentesis",), True, _NONE, _NONE),
    # COPD exacerbation with pH < 7.35 and pCO2 > 6.5 kPa: NIV (BTS/ICS 2016); purulent sputum: antibiotic
    "gs2-copd-01": (("non-invasive ventilation", "antibiotic", "short-acting bronchodilator"), _NONE, True,
                    ("hypercapnic_acidosis",), _NONE),
    # GOLD group E at annual review: LABA + LAMA, not one long-acting drug
    "gs2-copd-14": (("LABA", "LAMA"), _NONE, False, _NONE, _NONE),
    # HFrEF: all four pillars (ESC 2021 I-A)
    "gs2-chf-13": (("ACE inhibitor / ARB / ARNI", "evidence-based beta-blocker",
                    "mineralocorticoid receptor antagonist", "SGLT2 inhibitor"), _NONE, False, _NONE, _NONE),
}  # fmt: skip


@pytest.mark.parametrize("case_id", sorted(HAND_CHECKED))
def test_hand_checked_labels(case_id: str) -> None:
    row = next(r for r in rows() if r["id"] == case_id)
    ref = row["reference"]
    must, must_not, escalation, fired, not_fired = HAND_CHECKED[case_id]
    assert set(must) <= set(ref["expected_actions"])
    assert not set(must_not) & set(ref["expected_actions"])
    assert ref["expected_escalation"] is escalation
    assert set(fired) <= set(ref["red_flags"]) and not set(not_fired) & set(ref["red_flags"])


def test_case_data_is_coherent() -> None:
    """The v1 data errors issue 12 found are gone: moderate pneumonias are not hypotensive, every COPD
    exacerbation has a blood gas with both pH and pCO2, the haemolysed sample is marked."""
    for r in rows():
        p, variant = r["patient"], r["metadata"]["variant"]
        if variant == "curb65_2":
            assert p["vitals"]["sbp"] >= 90, r["id"]
        if (
            "COPD exacerbation" in r["reference"]["expected_problems"]
            and r["metadata"]["condition"] == "copd"
        ):
            names = {x["name"] for x in p["labs"]}
            assert {"pH", "pCO2"} <= names, r["id"]
    haemolysed = next(r for r in rows() if r["metadata"]["variant"] == "conflicting_potassium_haemolysed")
    assert haemolysed["patient"]["labs"][0]["haemolysed"] is True
    assert {r["metadata"]["variant"] for r in rows()} >= NEW_IN_V2
