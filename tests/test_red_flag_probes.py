"""Probe patients per red flag (issue 12 item 5): worked out by hand from the thresholds of
docs/cds/tier1_checks.md, not from the detector's output.

Each flag has >= 5 probe patients:
- ``F(patient, good, bad)``: the flag must fire; ``good`` (a real escalation) must address it and ``bad``
  (naming only a test, a drug or a vague plan) must not;
- ``N(patient)``: a lookalike to which the flag must NOT apply (NSTEMI for STEMI, pleural-fluid pH,
  urine K+, a haemolysed K+ superseded by a normal repeat, "PE:" = physical examination...).
"""

# ruff: noqa: E501  (the probe tables read best as one probe per line)

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from clineval.cds.guard import DEFAULT_RED_FLAGS, check


class F(NamedTuple):
    patient: dict[str, Any]
    good: str
    bad: str


class N(NamedTuple):
    patient: dict[str, Any]


def lab(name: str, value: Any, unit: str = "", **extra: Any) -> dict[str, Any]:
    return {"name": name, "value": value, "unit": unit, "flag": "", **extra}


CP = "Central chest pain for 2 hours."
PROBES: dict[str, list[F | N]] = {
    "acs_troponin_chest_pain": [
        F({"labs": [lab("hs-cTnT", 15, "ng/L")], "note": CP}, "Urgent cardiology review, ACS pathway", "Repeat troponin in 1 hour"),
        F({"labs": [lab("hs-cTnI", 30, "ng/L")], "note": CP}, "Coronary angiography, invasive strategy", "Give aspirin"),
        F({"labs": [lab("Troponin I", 0.05, "ng/mL")], "note": CP}, "Admit to CCU", "check troponin and ECG"),
        F({"labs": [lab("troponin", 80, "ng/L", flag="H")], "note": CP}, "chest pain pathway", "troponin"),
        F({"labs": [lab("troponin", 20, "ng/L", assay="Roche Elecsys hs-cTnT")], "note": CP}, "Invasive strategy", "troponin"),
        N({"labs": [lab("troponin", 20, "ng/L", assay="hs-cTnI")], "note": CP}),  # hs-cTnI URL 26
        N({"labs": [lab("hs-cTnT", 14, "ng/L")], "note": CP}),  # at the URL, not above it
        N({"labs": [lab("hs-cTnI", 20, "ng/L")], "note": CP}),  # hs-cTnI URL is 26, not 14
        N({"labs": [lab("troponin", 80, "ng/L")], "note": CP}),  # no assay named, no lab flag: not evaluable
        N({"labs": [lab("hs-cTnT", 58, "ng/L")], "note": "No chest pain; sepsis."}),
        N({"labs": [lab("hs-cTnT", 60, "ng/L"), lab("hs-cTnT", 9, "ng/L")], "note": CP}),  # latest normal
    ],
    "stemi": [
        F({"ecg": "ST elevation in V1-V4"}, "Activate the cath lab for primary PCI", "Serial ECGs and troponin"),
        F({"conditions": ["inferior STEMI"]}, "Immediate reperfusion", "cardiology"),
        F({"ecg": "new LBBB"}, "Fibrinolysis if PCI not possible within 120 min", "aspirin 300 mg"),
        N({"conditions": ["non-ST elevation MI"]}),
        N({"note": "Working diagnosis NSTEMI, ECG without ST elevation."}),
        N({"conditions": ["non-ST elevation myocardial infarction"], "note": "NSTE-ACS"}),
    ],
    "very_high_risk_nste_acs": [
        F({"conditions": ["NSTEMI"], "note": "Refractory chest pain despite nitrates."}, "Immediate invasive strategy (< 2 h)", "Give GTN and morphine"),
        F({"conditions": ["NSTE-ACS"], "vitals": {"sbp": 82}}, "Emergency coronary angiography", "fluid"),
        F({"conditions": ["NSTEMI"], "ecg": "recurrent dynamic ST changes"}, "Cath lab now", "troponin"),
        N({"conditions": ["NSTEMI"], "vitals": {"sbp": 128}, "note": "Pain free on arrival."}),
        N({"conditions": ["stable angina"], "vitals": {"sbp": 85}}),
        N({"note": "Recurrent chest pain, musculoskeletal."}),
    ],
    "high_risk_pe": [
        F({"conditions": ["pulmonary embolism"], "vitals": {"sbp": 82}}, "Systemic thrombolysis; call ICU", "Start apixaban"),
        F({"conditions": ["massive PE"], "note": "on vasopressors"}, "PERT activation for reperfusion", "CTPA"),
        F({"note": "Saddle embolus, cardiac arrest."}, "Surgical embolectomy or ECMO", "D-dimer"),
        N({"note": "PE: chest clear, calves soft.", "vitals": {"sbp": 85}}),  # physical examination
        N({"conditions": ["pulmonary embolism"], "vitals": {"sbp": 118}}),
        N({"note": "PE ruled out on CTPA. Hypotension from sepsis.", "vitals": {"sbp": 84}}),
        N({"note": "Large pericardial effusion, hypotensive.", "vitals": {"sbp": 84}}),
    ],
    "severe_hyperkalaemia": [
        F({"labs": [lab("K+", 6.5, "mmol/L")]}, "IV calcium gluconate and insulin-dextrose", "Recheck potassium"),
        F({"labs": [lab("potassium", "7.2", "mEq/L")]}, "Insulin and glucose, urgent haemodialysis", "salbutamol nebuliser"),
        F({"labs": [lab("K", 5.1, "mmol/L", time="2026-01-01T08:00"), lab("K", 6.8, "mmol/L", time="2026-01-01T12:00")]},
          "Hyperkalaemia protocol now", "K+"),
        N({"labs": [lab("K+", 6.4, "mmol/L")]}),
        N({"labs": [lab("urine potassium", 80, "mmol/L")]}),
        N({"labs": [lab("potassium", 7.0, "mmol/L", specimen="urine")]}),
        N({"labs": [lab("potassium", 7.1, "mmol/L", haemolysed=True), lab("potassium", 4.6, "mmol/L")]}),
        N({"labs": [lab("K", 4.6, "mmol/L", time="2026-01-01T12:00"),
                    lab("K", 7.1, "mmol/L", time="2026-01-01T08:00", haemolysed=True)]}),  # later, listed first
    ],
    "hyperkalaemia_ecg_changes": [
        F({"labs": [lab("K+", 5.8, "mmol/L")], "ecg": "peaked T waves"}, "IV calcium gluconate 10%", "Recheck K"),
        F({"labs": [lab("K+", 7.0, "mmol/L")], "ecg": "broad QRS"}, "calcium chloride IV", "insulin"),
        N({"labs": [lab("K+", 5.4, "mmol/L")], "ecg": "peaked T waves"}),
        N({"labs": [lab("K+", 6.0, "mmol/L")], "ecg": "sinus rhythm, no peaked T waves"}),
        N({"labs": [lab("urine K+", 60, "mmol/L")], "ecg": "peaked T waves"}),
    ],
    "severe_hypokalaemia": [
        F({"labs": [lab("K+", 2.4, "mmol/L")]}, "IV potassium replacement with cardiac monitoring", "oral potassium"),
        F({"labs": [lab("potassium", 2.1, "mEq/L")]}, "Senior review; telemetry", "check magnesium"),
        N({"labs": [lab("K+", 2.5, "mmol/L")]}),
        N({"labs": [lab("K+", 2.2, "mmol/L"), lab("K+", 3.6, "mmol/L")]}),
        N({"labs": [lab("urine potassium", 2.0, "mmol/L")]}),
    ],
    "hypercapnic_acidosis": [
        F({"labs": [lab("pH", 7.30), lab("PaCO2", 8.1, "kPa")]}, "Start NIV; consider ICU", "Repeat ABG in 1 h"),
        F({"labs": [lab("arterial pH", 7.34), lab("pCO2", 52, "mmHg")]}, "BiPAP in a respiratory support unit", "oxygen"),
        N({"labs": [lab("pH", 7.35), lab("PaCO2", 8.0, "kPa")]}),  # not < 7.35
        N({"labs": [lab("pH", 7.30), lab("PaCO2", 6.5, "kPa")]}),  # not > 6.5 kPa
        N({"labs": [lab("pleural fluid pH", 7.1), lab("PaCO2", 7.0, "kPa")]}),
        N({"labs": [lab("pH", 7.31), lab("pCO2", 45, "mmHg")]}),  # 45 mmHg = 6.0 kPa
    ],
    "severe_acidaemia": [
        F({"labs": [lab("pH", 7.24)]}, "Refer to critical care", "bicarbonate"),
        F({"labs": [lab("venous pH", 7.05)]}, "ICU review for intubation", "blood gas"),
        N({"labs": [lab("pH", 7.25)]}),
        N({"labs": [lab("pH", 7.0, specimen="pleural fluid")]}),
        N({"labs": [lab("pleural pH", 7.1)]}),
        N({"labs": [lab("urine pH", 5.0)]}),
    ],
    "severe_hypoxaemia": [
        F({"vitals": {"spo2": 91}, "conditions": ["pneumonia"]}, "Controlled oxygen to target 94-98%", "ABG"),
        F({"vitals": {"spo2": 87}, "conditions": ["COPD"]}, "Titrated oxygen to 88-92%; NIV if acidotic", "salbutamol"),
        F({"labs": [lab("SaO2", 85, "%")]}, "High-flow nasal oxygen, critical care review", "oxygen"),
        N({"vitals": {"spo2": 92}, "conditions": ["pneumonia"]}),
        N({"vitals": {"spo2": 89}, "conditions": ["COPD exacerbation"]}),  # within 88-92% target
        N({"labs": [lab("ScvO2", 65, "%")]}),
        N({"labs": [lab("central venous oxygen saturation", 60, "%")]}),
    ],
    "lactate_high": [
        F({"labs": [lab("lactate", 4.0, "mmol/L")]}, "Sepsis six; 30 mL/kg crystalloid", "repeat lactate"),
        F({"labs": [lab("lactic acid", 40, "mg/dL")]}, "Vasopressors, ICU", "fluid"),  # 40 mg/dL = 4.4 mmol/L
        N({"labs": [lab("lactate", 3.9, "mmol/L")]}),
        N({"labs": [lab("lactate", 30, "mg/dL")]}),  # 3.3 mmol/L
        N({"labs": [lab("pleural fluid lactate", 9.0, "mmol/L")]}),
    ],
    "sepsis_hypotension": [
        F({"vitals": {"sbp": 84}, "conditions": ["pneumonia"]}, "Fluid bolus and noradrenaline; ICU", "blood pressure"),
        F({"vitals": {"sbp": 80, "temp": 38.9}}, "Sepsis six now", "antibiotics"),
        N({"vitals": {"sbp": 90}, "conditions": ["pneumonia"]}),
        N({"vitals": {"sbp": 84}, "note": "no infection, no fever", "conditions": ["GI bleed"]}),
        N({"vitals": {"sbp": 120, "temp": 39.5}, "conditions": ["sepsis"]}),
    ],
    "severe_tachypnoea": [
        F({"vitals": {"rr": 30}}, "Senior review; consider HDU", "respiratory rate"),
        F({"vitals": {"respiratory_rate": 36}}, "Call critical care outreach", "oxygen"),
        N({"vitals": {"rr": 29}}),
        N({"vitals": {"hr": 30}}),
        N({"note": "RR 30 years ago"}),
    ],
    "severe_cap": [
        F({"scores": {"curb65": 3}}, "Admit to HDU; critical care review", "IV antibiotics"),
        F({"age": 70, "vitals": {"rr": 31, "sbp": 120, "dbp": 58}, "conditions": ["pneumonia"]},
          "Critical care assessment", "CXR"),  # computed: age, RR, DBP = 3
        F({"age": 40, "labs": [lab("urea", 9.1, "mmol/L")], "note": "New confusion.",
           "vitals": {"rr": 32, "sbp": 120, "dbp": 70}}, "ICU referral", "sputum culture"),  # C, U, R = 3
        N({"scores": {"curb65": 2}, "age": 80, "vitals": {"rr": 35, "sbp": 80}}),  # supplied score wins
        N({"age": 70, "vitals": {"rr": 24, "sbp": 120, "dbp": 58}}),  # age, DBP = 2
        N({"age": 64, "labs": [lab("urea", 7.0, "mmol/L")], "vitals": {"rr": 30, "sbp": 90, "dbp": 61}}),  # R = 1
    ],
    "hypotension": [
        F({"vitals": {"sbp": 89}}, "Urgent review; fluid bolus", "blood pressure"),
        F({"vitals": {"systolic": 70}}, "Call the medical emergency team", "fluid"),
        N({"vitals": {"sbp": 90}}),
        N({"vitals": {"dbp": 60}}),
        N({"note": "history of hypotension"}),
    ],
    "cardiogenic_shock": [
        F({"conditions": ["cardiogenic shock"]}, "Mechanical circulatory support, CCU", "cardiology"),
        F({"conditions": ["acute heart failure"], "vitals": {"sbp": 82}, "labs": [lab("lactate", 3.1, "mmol/L")]},
          "Inotropic support in ICU", "furosemide"),
        N({"conditions": ["acute heart failure"], "vitals": {"sbp": 82}, "labs": [lab("lactate", 1.5, "mmol/L")]}),
        N({"conditions": ["septic shock"], "vitals": {"sbp": 80}}),
        N({"conditions": ["heart failure"], "vitals": {"sbp": 105}, "note": "cold peripheries"}),
    ],
    "severe_tachycardia": [
        F({"vitals": {"hr": 131}}, "Synchronised DC cardioversion if adverse features", "ECG"),
        F({"vitals": {"pulse": 160}}, "Senior review and continuous ECG monitoring", "metoprolol"),
        N({"vitals": {"hr": 130}}),
        N({"vitals": {"rr": 140}}),
        N({"vitals": {"hr": "?"}}),
    ],
    "severe_bradycardia": [
        F({"vitals": {"hr": 39}}, "Atropine 500 mcg; transcutaneous pacing", "ECG"),
        F({"vitals": {"heart_rate": 28}}, "Temporary pacing via CCU", "bisoprolol review"),
        N({"vitals": {"hr": 40}}),
        N({"vitals": {"hr": 55}}),
        N({"vitals": {"rr": 12}}),
    ],
    "life_threatening_arrhythmia": [
        F({"ecg": "ventricular tachycardia"}, "Synchronised cardioversion", "amiodarone"),
        F({"ecg": "complete heart block"}, "Transcutaneous pacing", "ECG"),
        N({"ecg": "sinus tachycardia"}),
        N({"note": "no ventricular tachycardia on telemetry"}),
        N({"ecg": "first degree heart block"}),
    ],
    "cardiac_arrest": [
        F({"note": "Found pulseless; CPR in progress."}, "Call the crash team, ALS", "adrenaline"),
        F({"note": "PEA arrest on the ward."}, "Cardiopulmonary resuscitation", "check potassium"),
        N({"note": "History of cardiac arrest in 2019, ICD in situ."}),
        N({"note": "Family history of cardiac arrest."}),
        N({"note": "No cardiac arrest."}),
    ],
    "deteriorating_consciousness": [
        F({"note": "New confusion today."}, "Urgent senior review", "CT"),
        F({"scores": {"GCS": 7}}, "Anaesthetist for airway protection", "glucose"),
        N({"scores": {"GCS": 14}}),
        N({"note": "Chronic confusion (dementia), unchanged."}),
        N({"note": "No confusion, GCS 15."}),
    ],
    "news2_high": [
        F({"scores": {"news2": 7}}, "Emergency response: critical care outreach", "Observations hourly"),
        F({"scores": {"NEWS2": 9}}, "Transfer to higher level of care", "oxygen"),
        N({"scores": {"news2": 6}}),
        N({"scores": {"curb65": 7}}),
        N({"note": "NEWS2 7 last week"}),  # a note is not a score
    ],
    "massive_haemoptysis": [
        F({"complaint": "massive haemoptysis"}, "Bronchial artery embolisation, ICU", "tranexamic acid"),
        F({"note": "Life-threatening hemoptysis, 300 mL."}, "Airway protection and bronchoscopy", "CT chest"),
        N({"complaint": "haemoptysis, streaks"}),
        N({"note": "no massive haemoptysis"}),
        N({"complaint": "haematemesis"}),
    ],
    "aortic_dissection": [
        F({"note": "?aortic dissection"}, "CT aorta now; cardiothoracic surgery", "blood pressure"),
        F({"conditions": ["type A dissection"]}, "Emergency surgery", "troponin"),
        N({"conditions": ["spontaneous coronary artery dissection"]}),
        N({"note": "Aortic dissection excluded on CT."}),
        N({"conditions": ["carotid dissection"]}),
    ],
    "tension_pneumothorax": [
        F({"note": "suspected tension pneumothorax"}, "Needle decompression then chest drain", "CXR"),
        F({"cxr": ["tension pneumothorax"]}, "Finger thoracostomy", "oxygen"),
        N({"cxr": ["small pneumothorax"]}),
        N({"note": "no tension pneumothorax"}),
        N({"cxr": ["pneumonia"]}),
    ],
    "life_threatening_asthma": [
        F({"note": "silent chest"}, "ICU and anaesthetist now", "salbutamol"),
        F({"conditions": ["acute severe asthma"]}, "IV magnesium sulphate; senior review", "peak flow"),
        N({"conditions": ["asthma"]}),
        N({"note": "moderate asthma exacerbation"}),
        N({"conditions": ["COPD"]}),
    ],
}  # fmt: skip


def _fired(patient: dict[str, Any]) -> set[str]:
    return {h.id for h in DEFAULT_RED_FLAGS.detect(patient)}


def _addresses(flag_id: str, text: str) -> bool:
    return bool(
        DEFAULT_RED_FLAGS.escalation_terms_named(text) & set(DEFAULT_RED_FLAGS.flag(flag_id).escalate_terms)
    )


def test_every_flag_has_at_least_5_probes_of_both_kinds() -> None:
    assert set(PROBES) == {f.id for f in DEFAULT_RED_FLAGS.flags}
    for flag_id, probes in PROBES.items():
        assert len(probes) >= 5, flag_id
        assert any(isinstance(p, F) for p in probes) and any(isinstance(p, N) for p in probes), flag_id


CASES = [(flag_id, i, probe) for flag_id, probes in PROBES.items() for i, probe in enumerate(probes)]


@pytest.mark.parametrize(("flag_id", "i", "probe"), CASES, ids=[f"{f}-{i}" for f, i, _ in CASES])
def test_probe(flag_id: str, i: int, probe: F | N) -> None:
    if isinstance(probe, N):
        assert flag_id not in _fired(probe.patient)
        return
    assert flag_id in _fired(probe.patient)
    assert _addresses(flag_id, probe.good), probe.good
    assert not _addresses(flag_id, probe.bad), probe.bad


def test_test_or_drug_names_alone_never_escalate() -> None:
    # issue 12: these counted as escalations in v1
    for text in (
        "potassium",
        "K",
        "troponin",
        "oxygen",
        "salbutamol",
        "blood pressure",
        "fluid",
        "cardiology",
        "serial troponin",
        "ABG",
        "ECG",
        "steroids",
        "lactate",
        "antibiotics",
        "insulin",
    ):
        assert DEFAULT_RED_FLAGS.escalation_terms_named(text) == frozenset(), text


def test_guard_escalation_check_end_to_end() -> None:
    patient = {"labs": [lab("K+", 6.9, "mmol/L")]}
    rec = {"recommended_actions": [{"action": "Treat hyperkalaemia", "evidence_refs": ["E1"]}],
           "evidence_table": [{"id": "E1", "source_type": "guideline", "text": "UKKA 2020"}]}  # fmt: skip
    good = check({**rec, "when_to_escalate": "IV calcium gluconate then insulin-glucose"}, patient=patient)
    bad = check({**rec, "when_to_escalate": "Recheck potassium"}, patient=patient)
    assert good.result("escalation").passed is True  # type: ignore[union-attr]
    assert bad.result("escalation").passed is False  # type: ignore[union-attr]
