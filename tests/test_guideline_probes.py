"""Probe tables for the guideline rules v2 (issue 12 item 5): per rule, patients and recommendations whose
outcome was worked out by hand from the guideline the rule quotes (docs/cds/tier3_guidelines.md):

* correct recommendations that must pass (each allowed alternative, each jurisdiction where they differ),
* incomplete or unsafe ones that must fail (each forbidden action), with exactly what is missing/forbidden,
* lookalike patients to whom the rule must not apply (or cannot be evaluated).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from clineval.cds.rules.engine import evaluate_rules, load_rules


def lab(name: str, value: float, unit: str, flag: str = "H") -> dict[str, Any]:
    return {"name": name, "value": value, "unit": unit, "flag": flag}


def pt(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "age": 60,
        "sex": "female",
        "conditions": [],
        "medications": [],
        "allergies": ["none known"],
        "labs": [],
        "vitals": {"hr": 90, "sbp": 120, "dbp": 75, "rr": 18, "spo2": 96, "temp": 37.0},
        "ef": None,
        "scores": {},
        "cxr": [],
        "note": "",
    }
    base.update(kw)
    return base


@dataclass(frozen=True)
class Probe:
    rule: str
    name: str
    patient: dict[str, Any]
    actions: tuple[str, ...]
    outcome: str  # pass | fail | n/a (applicable False) | unknown (not evaluable)
    missing: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    escalate: tuple[str, ...] = ()
    jurisdiction: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- patients

HF_WET = pt(
    conditions=["acute decompensated heart failure"],
    labs=[lab("BNP", 900, "pg/mL")],
    cxr=["pulmonary oedema"],
)
HFREF = pt(conditions=["HFrEF"], ef=30, labs=[lab("potassium", 4.4, "mmol/L", "N")])
CAP = ["community-acquired pneumonia"]
CAP0 = pt(age=40, conditions=CAP, labs=[lab("urea", 5.0, "mmol/L", "N")])  # CURB-65 0
CAP2 = pt(conditions=CAP, scores={"curb65": 2})
CAP4 = pt(
    age=80,
    conditions=[*CAP, "acute confusion"],
    labs=[lab("urea", 12, "mmol/L")],
    vitals={"rr": 32, "sbp": 100, "dbp": 70},
)  # C, U, R, 65: 4
PEN = ["penicillin (anaphylaxis)"]
PE = ["pulmonary embolism"]
PE_SHOCK = pt(conditions=PE, vitals={"sbp": 78, "dbp": 45, "hr": 130})
PE_POSTOP = pt(
    conditions=PE,
    vitals={"sbp": 80, "dbp": 45, "hr": 125},
    note="58-year-old after hip replacement 2 weeks ago, sudden breathlessness. Hypotensive.",
)
AECOPD = pt(conditions=["acute exacerbation of COPD"])
AECOPD_FULL = pt(
    conditions=["acute exacerbation of COPD"],
    note="Increased breathlessness and purulent sputum.",
    vitals={"hr": 110, "sbp": 130, "dbp": 80, "rr": 28, "spo2": 85, "temp": 37.2},
    labs=[lab("pH", 7.28, ""), lab("pCO2", 8.1, "kPa")],
)
GROUP_E = pt(conditions=["COPD"], scores={"exacerbations_past_year": 2})
STEMI = pt(conditions=["anterior STEMI"])
STEMI_REMOTE = pt(conditions=["anterior STEMI"], measurements={"pci_delay_min": 180})
EFFUSION = pt(conditions=["pleural effusion"], cxr=["large left pleural effusion"])
NODULE_7 = pt(age=60, conditions=["incidental pulmonary nodule"], measurements={"nodule_size_mm": 7})
NODULE_12 = pt(age=60, conditions=["incidental pulmonary nodule"], measurements={"nodule_size_mm": 12})
CHEST = pt(conditions=["chest pain"], labs=[lab("hs-troponin T", 80, "ng/L")])
ACS = ("Start the ACS pathway", "Aspirin 300 mg loading dose")


def trop(name: str, value: float, unit: str, flag: str = "H") -> dict[str, Any]:
    return pt(conditions=["chest pain"], labs=[lab(name, value, unit, flag)])


K7 = pt(conditions=["hyperkalaemia"], labs=[lab("potassium", 7.0, "mmol/L")])
K7_ECG = pt(conditions=["hyperkalaemia"], labs=[lab("potassium", 7.0, "mmol/L")], note="ECG: peaked T waves.")

PILLARS = (
    "ACE inhibitor / ARB / ARNI",
    "evidence-based beta-blocker",
    "mineralocorticoid receptor antagonist",
    "SGLT2 inhibitor",
)
CAP_LOW_NICE = "amoxicillin, or doxycycline / clarithromycin / erythromycin"
CAP_MOD_NICE = "amoxicillin (+ clarithromycin if atypicals suspected), or doxycycline / clarithromycin"
CAP_MOD_IDSA = "beta-lactam + macrolide, or a respiratory fluoroquinolone, or beta-lactam + doxycycline"
CAP_SEV_NICE = "co-amoxiclav + clarithromycin, or levofloxacin"
CAP_SEV_IDSA = "beta-lactam + macrolide, or beta-lactam + respiratory fluoroquinolone"
UFH = "anticoagulation with unfractionated heparin"
REPERFUSION = "reperfusion (systemic thrombolysis, or surgical embolectomy / catheter-directed treatment)"
PCI = "primary PCI (or fibrinolysis stated for a PCI delay > 120 min)"
BIG_NODULE = "CT at 3 months, PET-CT or tissue sampling"

PROBES: list[Probe] = [
    # chf_loop_diuretic (ESC 2021 I-C: IV loop diuretics with fluid overload)
    Probe("chf_loop_diuretic", "furosemide", HF_WET, ("IV furosemide 40 mg twice daily",), "pass"),
    Probe("chf_loop_diuretic", "bumetanide", HF_WET, ("Bumetanide 1 mg IV",), "pass"),
    Probe(
        "chf_loop_diuretic", "no diuretic", HF_WET, ("Fluid restriction 1.5 L",), "fail", ("loop diuretic",)
    ),
    Probe("chf_loop_diuretic", "diuretic withheld", HF_WET, ("Hold furosemide",), "fail", ("loop diuretic",)),
    Probe(
        "chf_loop_diuretic",
        "not congested",
        pt(conditions=["heart failure"], labs=[lab("BNP", 900, "pg/mL")]),
        ("IV furosemide",),
        "n/a",
    ),
    Probe(
        "chf_loop_diuretic", "no natriuretic peptide", {**HF_WET, "labs": []}, ("IV furosemide",), "unknown"
    ),
    Probe(  # BNP 60 is below 100 and no NT-proBNP was sent: not applicable (2.1.0 said "not evaluable")
        "chf_loop_diuretic",
        "normal BNP only",
        {**HF_WET, "labs": [lab("BNP", 60, "pg/mL")]},
        ("Furosemide",),
        "n/a",
    ),
    Probe(
        "chf_loop_diuretic",
        "NT-proBNP only",
        {**HF_WET, "labs": [lab("NT-proBNP", 4200, "pg/mL")]},
        ("Furosemide 40 mg IV",),
        "pass",
    ),
    # hfref_gdmt (ESC 2021 I-A each pillar; ACC/AHA 2022: bisoprolol, carvedilol, metoprolol succinate)
    Probe(
        "hfref_gdmt",
        "four pillars, generic names",
        HFREF,
        ("Ramipril 2.5 mg", "Bisoprolol 1.25 mg", "Spironolactone 25 mg", "Dapagliflozin 10 mg"),
        "pass",
    ),
    Probe(
        "hfref_gdmt",
        "four pillars, brands and ARNI",
        HFREF,
        (
            "Entresto 24/26 mg twice daily",
            "Metoprolol succinate 12.5 mg",
            "Eplerenone 25 mg",
            "Jardiance 10 mg",
        ),
        "pass",
    ),
    Probe(
        "hfref_gdmt",
        "Forxiga, carvedilol, candesartan",
        HFREF,
        ("Candesartan 4 mg", "Carvedilol 3.125 mg bd", "Spironolactone 12.5 mg", "Forxiga 10 mg"),
        "pass",
    ),
    Probe(
        "hfref_gdmt",
        "two pillars (v1 passed)",
        HFREF,
        ("Ramipril 2.5 mg", "Bisoprolol 1.25 mg"),
        "fail",
        PILLARS[2:],
    ),
    Probe(
        "hfref_gdmt",
        "plain metoprolol is not evidence-based",
        HFREF,
        ("Sacubitril/valsartan", "Metoprolol 25 mg bd (beta-blocker)", "Spironolactone", "Empagliflozin"),
        "fail",
        (PILLARS[1],),
    ),
    Probe(
        "hfref_gdmt",
        "metoprolol tartrate",
        HFREF,
        ("Lisinopril", "Metoprolol tartrate 25 mg", "Spironolactone", "Dapagliflozin"),
        "fail",
        (PILLARS[1],),
    ),
    Probe(
        "hfref_gdmt",
        "canagliflozin is not an HFrEF SGLT2i",
        HFREF,
        ("Ramipril", "Bisoprolol", "Spironolactone", "SGLT2 inhibitor canagliflozin"),
        "fail",
        (PILLARS[3],),
    ),
    Probe(
        "hfref_gdmt",
        "K+ 5.6: MRA and ACE-I waived",
        {**HFREF, "labs": [lab("potassium", 5.6, "mmol/L")]},
        ("Bisoprolol 1.25 mg", "Dapagliflozin 10 mg"),
        "pass",
    ),
    Probe(
        "hfref_gdmt",
        "cardiogenic shock excludes",
        {**HFREF, "conditions": ["HFrEF", "cardiogenic shock"]},
        ("Dobutamine",),
        "n/a",
    ),
    Probe("hfref_gdmt", "EF 45% is not HFrEF", {**HFREF, "ef": 45}, ("Ramipril",), "n/a"),
    # cap_curb65_low (NICE NG138 table 1; IDSA/ATS 2019 outpatient)
    Probe("cap_curb65_low", "amoxicillin", CAP0, ("Amoxicillin 500 mg TDS for 5 days",), "pass"),
    Probe("cap_curb65_low", "doxycycline", CAP0, ("Doxycycline 200 mg then 100 mg daily",), "pass"),
    Probe(
        "cap_curb65_low",
        "clarithromycin, penicillin allergy",
        {**CAP0, "allergies": PEN},
        ("Clarithromycin 500 mg bd",),
        "pass",
    ),
    Probe(
        "cap_curb65_low",
        "amoxicillin despite penicillin allergy",
        {**CAP0, "allergies": PEN},
        ("Oral amoxicillin 500 mg TDS",),
        "fail",
        forbidden=("a penicillin",),
    ),
    Probe("cap_curb65_low", "generic oral antibiotic", CAP0, ("Oral antibiotics",), "fail", (CAP_LOW_NICE,)),
    Probe(
        "cap_curb65_low",
        "levofloxacin: IDSA/ATS only",
        CAP0,
        ("Levofloxacin 750 mg daily",),
        "pass",
        jurisdiction="idsa_ats",
    ),
    Probe(
        "cap_curb65_low",
        "levofloxacin: not NICE low severity",
        CAP0,
        ("Levofloxacin 750 mg daily",),
        "fail",
        (CAP_LOW_NICE,),
    ),
    Probe(
        "cap_curb65_low",
        "COVID-19 pneumonia",
        {**CAP0, "conditions": ["COVID-19 pneumonia"]},
        ("Dexamethasone",),
        "n/a",
    ),
    Probe(
        "cap_curb65_low", "no urea: not computable", pt(age=40, conditions=CAP), ("Amoxicillin",), "unknown"
    ),
    # cap_curb65_moderate
    Probe("cap_curb65_moderate", "NICE amoxicillin alone", CAP2, ("Amoxicillin 500 mg TDS",), "pass"),
    Probe(
        "cap_curb65_moderate",
        "NICE amoxicillin + clarithromycin",
        CAP2,
        ("Amoxicillin 500 mg TDS", "Clarithromycin 500 mg bd (atypicals suspected)"),
        "pass",
    ),
    Probe(
        "cap_curb65_moderate",
        "NICE doxycycline, penicillin allergy",
        {**CAP2, "allergies": PEN},
        ("Doxycycline 200 mg then 100 mg daily",),
        "pass",
    ),
    Probe(
        "cap_curb65_moderate",
        "IDSA ceftriaxone + azithromycin",
        CAP2,
        ("Ceftriaxone 1 g IV daily", "Azithromycin 500 mg daily"),
        "pass",
        jurisdiction="idsa_ats",
    ),
    Probe(
        "cap_curb65_moderate",
        "IDSA respiratory fluoroquinolone",
        CAP2,
        ("Moxifloxacin 400 mg daily",),
        "pass",
        jurisdiction="idsa_ats",
    ),
    Probe(
        "cap_curb65_moderate",
        "IDSA beta-lactam alone",
        CAP2,
        ("Ceftriaxone 1 g IV daily",),
        "fail",
        (CAP_MOD_IDSA,),
        jurisdiction="idsa_ats",
    ),
    Probe(
        "cap_curb65_moderate",
        "IV antibiotics is no beta-lactam",
        CAP2,
        ("IV antibiotics", "Azithromycin 500 mg"),
        "fail",
        (CAP_MOD_IDSA,),
        jurisdiction="idsa_ats",
    ),
    Probe(
        "cap_curb65_moderate",
        "co-amoxiclav with penicillin allergy (IDSA)",
        {**CAP2, "allergies": PEN},
        ("Co-amoxiclav 1.2 g IV", "Clarithromycin 500 mg"),
        "fail",
        forbidden=("a penicillin",),
        jurisdiction="idsa_ats",
    ),
    Probe(
        "cap_curb65_moderate",
        "ciprofloxacin is not respiratory",
        CAP2,
        ("Ciprofloxacin 500 mg bd",),
        "fail",
        (CAP_MOD_IDSA,),
        jurisdiction="idsa_ats",
    ),
    Probe(
        "cap_curb65_moderate",
        "CURB-65 3 is not moderate",
        {**CAP2, "scores": {"curb65": 3}},
        ("Amoxicillin",),
        "n/a",
    ),
    # cap_curb65_severe
    Probe(
        "cap_curb65_severe",
        "NICE co-amoxiclav + clarithromycin",
        CAP4,
        ("IV co-amoxiclav 1.2 g TDS", "Clarithromycin 500 mg IV bd"),
        "pass",
        escalate=("Critical care review",),
    ),
    Probe(
        "cap_curb65_severe",
        "NICE levofloxacin, penicillin allergy",
        {**CAP4, "allergies": PEN},
        ("Levofloxacin 500 mg IV bd",),
        "pass",
    ),
    Probe(
        "cap_curb65_severe",
        "co-amoxiclav with penicillin allergy",
        {**CAP4, "allergies": PEN},
        ("IV co-amoxiclav 1.2 g TDS", "Clarithromycin 500 mg"),
        "fail",
        forbidden=("a penicillin",),
    ),
    Probe(
        "cap_curb65_severe",
        "generic IV antibiotics",
        CAP4,
        ("IV antibiotics", "Clarithromycin"),
        "fail",
        (CAP_SEV_NICE,),
    ),
    Probe(
        "cap_curb65_severe",
        "IDSA beta-lactam + fluoroquinolone",
        CAP4,
        ("Ceftriaxone 2 g IV", "Levofloxacin 750 mg IV"),
        "pass",
        jurisdiction="idsa_ats",
    ),
    Probe(
        "cap_curb65_severe",
        "IDSA fluoroquinolone alone is not severe CAP",
        CAP4,
        ("Levofloxacin 750 mg IV",),
        "fail",
        (CAP_SEV_IDSA,),
        jurisdiction="idsa_ats",
    ),
    Probe(
        "cap_curb65_severe",
        "aspiration pneumonia",
        {**CAP4, "conditions": ["aspiration pneumonia"], "scores": {"curb65": 4}},
        ("Co-amoxiclav",),
        "n/a",
    ),
    # pe_high_risk (ESC 2019: UFH I-C, thrombolysis I-B, embolectomy I-C / CDT IIa-C if contraindicated)
    Probe(
        "pe_high_risk",
        "UFH + alteplase",
        PE_SHOCK,
        ("Unfractionated heparin bolus then infusion",),
        "pass",
        escalate=("Systemic thrombolysis with alteplase",),
    ),
    Probe(
        "pe_high_risk",
        "post-op: UFH + surgical embolectomy",
        PE_POSTOP,
        ("UFH infusion", "Surgical embolectomy"),
        "pass",
    ),
    Probe(
        "pe_high_risk",
        "post-op: thrombolysis is forbidden",
        PE_POSTOP,
        ("UFH infusion", "Alteplase 100 mg over 2 hours"),
        "fail",
        forbidden=("systemic thrombolysis",),
    ),
    Probe(
        "pe_high_risk",
        "post-op via events: catheter-directed",
        {**PE_SHOCK, "events": [{"name": "laparotomy", "days_ago": 10}]},
        ("Heparin infusion", "Catheter-directed thrombolysis"),
        "pass",
    ),
    Probe(
        "pe_high_risk", "DOAC, no reperfusion", PE_SHOCK, ("Apixaban 10 mg bd",), "fail", (UFH, REPERFUSION)
    ),
    Probe(
        "pe_high_risk",
        "vasopressors with SBP 95 is high risk",
        pt(conditions=PE, vitals={"sbp": 95, "dbp": 60, "hr": 120}, findings=["on noradrenaline infusion"]),
        ("Heparin infusion", "Tenecteplase"),
        "pass",
    ),
    Probe("pe_high_risk", "normotensive PE", pt(conditions=PE), ("Alteplase",), "n/a"),
    # pe_stable (ESC 2019: anticoagulation I-A, stratification I-B, no routine thrombolysis III-B)
    Probe(
        "pe_stable", "apixaban + sPESI", pt(conditions=PE), ("Apixaban 10 mg bd", "Calculate sPESI"), "pass"
    ),
    Probe(
        "pe_stable",
        "UFH infusion + echo",
        pt(conditions=PE),
        ("UFH infusion", "Echocardiogram for RV function"),
        "pass",
    ),
    Probe(
        "pe_stable",
        "rescue plan is not routine thrombolysis",
        pt(conditions=PE),
        ("Enoxaparin 1 mg/kg bd", "Troponin and echo"),
        "pass",
        extra={"when_to_escalate": ["Thrombolysis if haemodynamic deterioration"]},
    ),
    Probe(
        "pe_stable",
        "thrombolysis in normotensive PE",
        pt(conditions=PE),
        ("Apixaban", "sPESI", "Alteplase 100 mg"),
        "fail",
        forbidden=("systemic thrombolysis",),
    ),
    Probe(
        "pe_stable",
        "no stratification",
        pt(conditions=PE),
        ("Rivaroxaban 15 mg bd",),
        "fail",
        ("risk stratification",),
    ),
    Probe("pe_stable", "hypotensive PE is not stable", PE_SHOCK, ("Apixaban", "sPESI"), "n/a"),
    # copd_exacerbation_acute (GOLD 2024 ch. 5; BTS/ICS 2016 NIV; BTS 2017 oxygen)
    Probe(
        "copd_exacerbation_acute",
        "SABA + steroid (no purulence, SpO2 96)",
        AECOPD,
        ("Nebulised salbutamol 5 mg", "Prednisolone 30 mg for 5 days"),
        "pass",
    ),
    Probe(
        "copd_exacerbation_acute",
        "full: antibiotic, controlled O2, NIV",
        AECOPD_FULL,
        (
            "Salbutamol and ipratropium nebulisers",
            "Prednisolone 40 mg",
            "Doxycycline 200 mg",
            "Oxygen via 28% Venturi, target 88-92%",
            "Start NIV",
        ),
        "pass",
    ),
    Probe(
        "copd_exacerbation_acute",
        "purulent sputum, acidosis, hypoxaemia unaddressed",
        AECOPD_FULL,
        ("Salbutamol nebuliser", "Prednisolone 40 mg"),
        "fail",
        ("antibiotic", "controlled oxygen to 88-92%", "non-invasive ventilation"),
    ),
    Probe(
        "copd_exacerbation_acute",
        "15 L non-rebreather",
        AECOPD,
        ("Salbutamol nebuliser", "Prednisolone 40 mg", "Oxygen 15 L via non-rebreather mask"),
        "fail",
        forbidden=("uncontrolled high-concentration oxygen",),
    ),
    Probe(
        "copd_exacerbation_acute",
        "inhaled steroid is not systemic",
        AECOPD,
        ("Salbutamol nebuliser", "Inhaled corticosteroid"),
        "fail",
        ("systemic corticosteroid",),
    ),
    Probe("copd_exacerbation_acute", "stable COPD", pt(conditions=["COPD"]), ("Salbutamol",), "n/a"),
    # v2.1: only blood pH counts for NIV (pleural fluid pH 7.2 is no acidosis)
    Probe(
        "copd_exacerbation_acute",
        "pleural fluid pH 7.2, no blood gas: NIV not required",
        {**AECOPD, "labs": [{**lab("pH", 7.2, ""), "specimen": "pleural fluid"}, lab("pCO2", 8.1, "kPa")]},
        ("Salbutamol nebuliser", "Prednisolone 30 mg"),
        "pass",
    ),
    Probe(
        "copd_exacerbation_acute",
        "blood pH 7.40, later pleural pH 7.2",
        {
            **AECOPD,
            "labs": [
                lab("pH", 7.40, "", "N"),
                lab("pCO2", 8.1, "kPa"),
                {**lab("pH", 7.2, ""), "sample": "pleural"},
            ],
        },
        ("Salbutamol nebuliser", "Prednisolone 30 mg"),
        "pass",
    ),
    Probe(
        "copd_exacerbation_acute",
        "pleural pH 7.2 then arterial pH 7.28: NIV required",
        {
            **AECOPD,
            "labs": [
                {**lab("pH", 7.2, ""), "specimen": "pleural fluid"},
                lab("pH", 7.28, ""),
                lab("pCO2", 8.1, "kPa"),
            ],
        },
        ("Salbutamol nebuliser", "Prednisolone 30 mg"),
        "fail",
        ("non-invasive ventilation",),
    ),
    # copd_frequent_exacerbator (GOLD 2024 group E: LABA + LAMA, + ICS if eos >= 300)
    Probe(
        "copd_frequent_exacerbator",
        "LAMA/LABA combination",
        GROUP_E,
        ("Tiotropium/olodaterol (Spiolto)",),
        "pass",
    ),
    Probe(
        "copd_frequent_exacerbator",
        "separate LABA and LAMA",
        GROUP_E,
        ("Umeclidinium 55 mcg", "Salmeterol"),
        "pass",
    ),
    Probe(
        "copd_frequent_exacerbator",
        "eos 400: triple therapy",
        {**GROUP_E, "labs": [lab("eosinophils", 0.4, "10^9/L")]},
        ("Trelegy Ellipta one puff daily",),
        "pass",
    ),
    Probe(
        "copd_frequent_exacerbator",
        "eos 400: LABA+LAMA without ICS",
        {**GROUP_E, "labs": [lab("eosinophils", 400, "cells/uL")]},
        ("Anoro Ellipta",),
        "fail",
        ("inhaled corticosteroid",),
    ),
    Probe(
        "copd_frequent_exacerbator",
        "single LAMA (v1 passed)",
        GROUP_E,
        ("Tiotropium 18 mcg daily",),
        "fail",
        ("LABA + LAMA",),
    ),
    Probe(
        "copd_frequent_exacerbator",
        "one hospitalisation is group E",
        pt(conditions=["COPD"], scores={"exacerbations_past_year": 1, "copd_hospitalisations_past_year": 1}),
        ("Glycopyrronium/indacaterol",),
        "pass",
    ),
    Probe(
        "copd_frequent_exacerbator",
        "one moderate exacerbation",
        pt(conditions=["COPD"], scores={"exacerbations_past_year": 1, "copd_hospitalisations_past_year": 0}),
        ("Tiotropium",),
        "n/a",
    ),
    # stemi_cath_lab (ESC 2023 I-A: primary PCI < 120 min, else fibrinolysis)
    Probe(
        "stemi_cath_lab",
        "primary PCI",
        STEMI,
        ("Aspirin 300 mg",),
        "pass",
        escalate=("Activate the cath lab for primary PCI now",),
    ),
    Probe(
        "stemi_cath_lab",
        "PCI delay 180 min: fibrinolysis",
        STEMI_REMOTE,
        ("Tenecteplase now, then transfer to a PCI centre",),
        "pass",
    ),
    Probe(
        "stemi_cath_lab",
        "fibrinolysis justified in the text",
        STEMI,
        ("Fibrinolysis with tenecteplase as PCI cannot be done within 120 minutes",),
        "pass",
    ),
    Probe(
        "stemi_cath_lab",
        "PCI delay 180 min, no reperfusion",
        STEMI_REMOTE,
        ("Aspirin 300 mg",),
        "fail",
        ("fibrinolysis",),
    ),
    Probe(
        "stemi_cath_lab",
        "no reperfusion",
        STEMI,
        ("Aspirin 300 mg", "Admit to the cardiology ward"),
        "fail",
        (PCI,),
    ),
    Probe(
        "stemi_cath_lab",
        "fibrinolysis with active bleeding",
        {**STEMI_REMOTE, "conditions": ["anterior STEMI", "active bleeding (melaena)"]},
        ("Alteplase",),
        "fail",
        forbidden=("fibrinolysis",),
    ),
    Probe(
        "stemi_cath_lab",
        "non-ST elevation MI",
        pt(conditions=["non-ST elevation myocardial infarction"]),
        ("Primary PCI",),
        "n/a",
    ),
    # pleural_effusion_large (BTS 2023 / 2010)
    Probe(
        "pleural_effusion_large",
        "therapeutic aspiration",
        EFFUSION,
        ("Ultrasound-guided pleural aspiration",),
        "pass",
    ),
    Probe("pleural_effusion_large", "chest drain", EFFUSION, ("Intercostal chest drain",), "pass"),
    Probe(
        "pleural_effusion_large",
        "watch and wait",
        EFFUSION,
        ("Repeat chest X-ray in 6 weeks",),
        "fail",
        ("thoracentesis",),
    ),
    Probe(
        "pleural_effusion_large",
        "pericardial effusion",
        pt(conditions=["large pericardial effusion"], cxr=["large effusion"]),
        ("Pericardiocentesis",),
        "n/a",
    ),
    Probe(
        "pleural_effusion_large",
        "heart-failure transudate",
        {**EFFUSION, "conditions": ["pleural effusion", "congestive heart failure"]},
        ("IV furosemide",),
        "n/a",
    ),
    Probe(
        "pleural_effusion_large",
        "white-out from collapse",
        pt(conditions=["pleural effusion"], cxr=["white-out of the left hemithorax, lobar collapse"]),
        ("Bronchoscopy",),
        "n/a",
    ),
    # fleischner_nodule_followup (Fleischner 2017 table 1)
    Probe(
        "fleischner_nodule_followup",
        "7 mm: CT at 6-12 months",
        NODULE_7,
        ("Follow-up CT at 6-12 months",),
        "pass",
    ),
    Probe(
        "fleischner_nodule_followup",
        "7 mm: no follow-up",
        NODULE_7,
        ("Reassure", "Discharge"),
        "fail",
        ("follow-up CT at 6-12 months",),
    ),
    Probe("fleischner_nodule_followup", "12 mm: PET-CT", NODULE_12, ("PET-CT",), "pass"),
    Probe(
        "fleischner_nodule_followup",
        "12 mm: CT at 3 months",
        NODULE_12,
        ("Repeat CT chest in 3 months",),
        "pass",
    ),
    Probe(
        "fleischner_nodule_followup",
        "12 mm: CT in 12 months is too late",
        NODULE_12,
        ("Follow-up CT in 12 months",),
        "fail",
        (BIG_NODULE,),
    ),
    Probe("fleischner_nodule_followup", "age 30", {**NODULE_7, "age": 30}, ("Follow-up CT",), "n/a"),
    Probe(
        "fleischner_nodule_followup",
        "known cancer",
        {**NODULE_7, "note": "History of breast cancer."},
        ("Follow-up CT",),
        "n/a",
    ),
    Probe(
        "fleischner_nodule_followup",
        "screening CT",
        {**NODULE_7, "findings": ["lung cancer screening CT"]},
        ("Follow-up CT",),
        "n/a",
    ),
    Probe(
        "fleischner_nodule_followup",
        "immunosuppressed",
        {
            **NODULE_7,
            "conditions": ["incidental pulmonary nodule", "renal transplant recipient, immunosuppressed"],
        },
        ("Follow-up CT",),
        "n/a",
    ),
    # troponin_chest_pain_acs (ESC 2023 NSTE-ACS; threshold from clinical_thresholds)
    Probe(
        "troponin_chest_pain_acs",
        "ACS pathway",
        CHEST,
        ("Start the ACS pathway",),
        "pass",
        escalate=("Urgent cardiology review",),
    ),
    Probe("troponin_chest_pain_acs", "aspirin loading", CHEST, ("Aspirin 300 mg loading dose",), "pass"),
    Probe(
        "troponin_chest_pain_acs",
        "repeat troponin only",
        CHEST,
        ("Repeat troponin in 3 hours",),
        "fail",
        ("acute coronary syndrome pathway",),
    ),
    Probe(
        "troponin_chest_pain_acs",
        "discharge",
        CHEST,
        ("Discharge with analgesia",),
        "fail",
        ("acute coronary syndrome pathway",),
    ),
    Probe(
        "troponin_chest_pain_acs",
        "normal troponin",
        pt(conditions=["chest pain"], labs=[lab("hs-troponin T", 5, "ng/L", "N")]),
        ("Discharge",),
        "n/a",
    ),
    # per assay, each beyond its own 99th-percentile URL (v2.1): hs-cTnT > 14, hs-cTnI > 26, cTnI > 40 ng/L
    Probe("troponin_chest_pain_acs", "hs-cTnT 20 ng/L", trop("hs-cTnT", 20, "ng/L"), ACS, "pass"),
    Probe("troponin_chest_pain_acs", "hs-cTnI 20 ng/L (< 26)", trop("hs-cTnI", 20, "ng/L", "N"), ACS, "n/a"),
    Probe("troponin_chest_pain_acs", "hs-cTnI 30 ng/L", trop("hs-cTnI", 30, "ng/L"), ACS, "pass"),
    Probe(
        "troponin_chest_pain_acs",
        "cTnI 0.03 ng/mL (30 ng/L)",
        trop("troponin I", 0.03, "ng/mL", "N"),
        ACS,
        "n/a",
    ),
    Probe(
        "troponin_chest_pain_acs", "cTnI 0.05 ng/mL (50 ng/L)", trop("troponin I", 0.05, "ng/mL"), ACS, "pass"
    ),
    Probe("troponin_chest_pain_acs", "no assay, flag H", trop("troponin", 80, "ng/L", "H"), ACS, "pass"),
    Probe("troponin_chest_pain_acs", "no assay, flag N", trop("troponin", 80, "ng/L", "N"), ACS, "n/a"),
    Probe("troponin_chest_pain_acs", "no assay, no flag", trop("troponin", 80, "ng/L", ""), ACS, "unknown"),
    Probe("troponin_chest_pain_acs", "no troponin at all", pt(conditions=["chest pain"]), ACS, "unknown"),
    Probe(
        "troponin_chest_pain_acs",
        "assay in its own field: Roche hs-cTnT 20",
        pt(
            conditions=["chest pain"],
            labs=[{**lab("troponin", 20, "ng/L", ""), "assay": "Roche Elecsys hs-cTnT"}],
        ),
        ACS,
        "pass",
    ),
    Probe(
        "troponin_chest_pain_acs",
        "hs-cTnT 20 with a normal hs-cTnI",
        pt(
            conditions=["chest pain"],
            labs=[lab("hs-cTnI", 10, "ng/L", "N"), lab("hs-troponin T", 20, "ng/L")],
        ),
        ("Discharge",),
        "fail",
        ("acute coronary syndrome pathway",),
    ),
    # hyperkalaemia_severe (UKKA 2020)
    Probe(
        "hyperkalaemia_severe",
        "insulin-glucose + monitoring",
        K7,
        ("Insulin-glucose infusion (10 units Actrapid in 25 g glucose)", "Continuous cardiac monitoring"),
        "pass",
    ),
    Probe(
        "hyperkalaemia_severe",
        "ECG changes: calcium + insulin + dextrose + monitoring",
        K7_ECG,
        ("Calcium gluconate 10% 30 mL IV", "Actrapid 10 units IV", "Dextrose 50% 50 mL", "Telemetry"),
        "pass",
    ),
    Probe(
        "hyperkalaemia_severe",
        "ECG changes, no calcium",
        K7_ECG,
        ("Insulin with glucose", "ECG monitoring"),
        "fail",
        ("IV calcium",),
    ),
    Probe(
        "hyperkalaemia_severe",
        "calcium alone",
        K7,
        ("Calcium gluconate 10% IV", "Cardiac monitoring"),
        "fail",
        ("insulin with glucose",),
        forbidden=("IV calcium alone",),
    ),
    Probe(
        "hyperkalaemia_severe",
        "insulin without glucose",
        K7,
        ("IV insulin 10 units without glucose", "Cardiac monitoring"),
        "fail",
        ("insulin with glucose",),
        forbidden=("insulin without glucose",),
    ),
    Probe(
        "hyperkalaemia_severe",
        "12-lead ECG is not monitoring",
        K7,
        ("Insulin-dextrose", "12-lead ECG"),
        "fail",
        ("cardiac monitoring",),
    ),
    Probe(
        "hyperkalaemia_severe",
        "K+ 5.9",
        pt(labs=[lab("potassium", 5.9, "mmol/L")]),
        ("Insulin-glucose",),
        "n/a",
    ),
    Probe(
        "hyperkalaemia_severe",
        "haemolysed then normal repeat",
        pt(labs=[lab("potassium", 7.2, "mmol/L"), lab("potassium", 4.5, "mmol/L", "N")]),
        ("Repeat K+",),
        "n/a",
    ),
    # v2.1: the shared K+ >= 6.5; the latest blood sample only
    Probe(
        "hyperkalaemia_severe",
        "K+ exactly 6.5",
        pt(labs=[lab("potassium", 6.5, "mmol/L")]),
        ("Repeat K+",),
        "fail",
        ("insulin with glucose", "cardiac monitoring"),
    ),
    Probe(
        "hyperkalaemia_severe",
        "haemolysed K+ 7.1 marked, repeat 4.6",
        pt(labs=[{**lab("K+", 7.1, "mmol/L"), "haemolysed": True}, lab("K+", 4.6, "mmol/L", "N")]),
        ("Repeat K+",),
        "n/a",
    ),
    Probe(
        "hyperkalaemia_severe",
        "urine potassium 40 is not serum",
        pt(labs=[{**lab("potassium", 40, "mmol/L"), "specimen": "urine"}]),
        ("Repeat K+",),
        "unknown",
    ),
    Probe(
        "hyperkalaemia_severe",
        "K+ 7.0 then a later urine K+ 20",
        pt(
            labs=[
                lab("potassium", 7.0, "mmol/L"),
                {**lab("potassium", 20, "mmol/L", "N"), "sample_type": "urine"},
            ]
        ),
        ("Insulin 10 units with 50 ml 50% glucose", "Cardiac monitoring"),
        "pass",
    ),
]

# Phrasing probes: how patients and plans are often written.
SPO2_86 = {**AECOPD, "vitals": {**AECOPD["vitals"], "spo2": 86}}
PROBES += [
    Probe(
        "hyperkalaemia_severe",
        "usual basal insulin is neither treatment nor forbidden",
        K7,
        ("Continue insulin glargine 20 units at night", "Salbutamol 10 mg nebulised", "Cardiac monitoring"),
        "fail",
        ("insulin with glucose",),
    ),
    Probe(
        "cap_curb65_low",
        "COVID-19 negative: still bacterial CAP",
        {**CAP0, "note": "COVID-19 PCR negative."},
        ("Amoxicillin 500 mg TDS",),
        "pass",
    ),
    Probe(
        "cap_curb65_low",
        "PCN allergy abbreviation",
        {**CAP0, "allergies": ["PCN - hives"]},
        ("Amoxicillin 500 mg TDS",),
        "fail",
        forbidden=("a penicillin",),
    ),
    Probe(
        "fleischner_nodule_followup",
        "history of colon cancer",
        {**NODULE_7, "note": "Past history of colon cancer."},
        ("Follow-up CT",),
        "n/a",
    ),
    Probe(
        "fleischner_nodule_followup",
        "no history of cancer",
        {**NODULE_7, "note": "No history of cancer. Ex-smoker."},
        ("Follow-up CT at 6-12 months",),
        "pass",
    ),
    Probe(
        "copd_exacerbation_acute",
        "controlled O2 written as O2",
        SPO2_86,
        ("Salbutamol nebuliser", "Prednisolone 30 mg", "Controlled O2 via 24% Venturi"),
        "pass",
    ),
    Probe(
        "copd_exacerbation_acute",
        "SpO2 86%, oxygen without a target",
        SPO2_86,
        ("Salbutamol nebuliser", "Prednisolone 30 mg", "Supplemental oxygen"),
        "fail",
        ("controlled oxygen to 88-92%",),
    ),
]


def test_every_rule_has_at_least_five_probes_with_each_outcome() -> None:
    ids = {r.id for r in load_rules().rules}
    for rule in ids:
        mine = [p for p in PROBES if p.rule == rule]
        assert len(mine) >= 5, rule
        assert {"pass", "fail"} <= {p.outcome for p in mine}, rule
        assert {p.outcome for p in mine} & {"n/a", "unknown"}, rule
    forbidden = {f.action for r in load_rules().rules for f in r.forbidden_actions}
    assert forbidden == {f for p in PROBES for f in p.forbidden}  # every forbidden action is probed


@pytest.mark.parametrize("probe", PROBES, ids=[f"{p.rule}: {p.name}" for p in PROBES])
def test_probe(probe: Probe) -> None:
    sections = {"recommended_actions": list(probe.actions), "when_to_escalate": list(probe.escalate)}
    sections.update(probe.extra)
    result = next(
        r
        for r in evaluate_rules(probe.patient, sections, jurisdiction=probe.jurisdiction)
        if r.rule_id == probe.rule
    )
    applicable, adherent = {
        "pass": (True, True),
        "fail": (True, False),
        "n/a": (False, None),
        "unknown": (None, None),
    }[probe.outcome]
    assert (result.applicable, result.adherent) == (applicable, adherent), result.reason
    assert tuple(result.missing) == probe.missing
    assert tuple(f["forbidden"] for f in result.forbidden) == probe.forbidden
