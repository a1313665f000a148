"""AN EXAMPLE, NOT A PRODUCT: a small rule-based cardiopulmonary recommender served over HTTP.

clineval evaluates CDS systems; it does not ship one. The four-tier example suite needs something to
evaluate, so this file answers ``POST /predict {"id", "input": {"question", "data": {"patient": ...}}}``
with a recommendation JSON (problems, actions with evidence refs, an evidence table, contraindications
checked, when to escalate, severity). It follows the guideline rules v2 for most
patients but is deliberately imperfect, so the report shows passes and failures: it never risk-stratifies,
reperfuses or escalates pulmonary embolism, does not know the Fleischner criteria or pleural drainage,
escalates only STEMI, ACS, severe CAP, hypercapnic acidosis and hyperkalaemia (not hypoxaemia, sepsis or
tachypnoea), and forgets contraindication checks for COPD steroids and hyperkalaemia treatment (the checks
it does state name the drugs and this patient's values: "furosemide, bisoprolol: creatinine 110 umol/L;
potassium 4.2 mmol/L").

    python examples/cds_recommender/recommender.py --port 8003
"""

from __future__ import annotations

import argparse
from typing import Any

from aiohttp import web

GUIDELINES = {
    "hf": (
        "ESC 2021 heart failure guideline",
        "Loop diuretics for congestion; HFrEF (EF <= 40%): ARNI/ACE-I, beta-blocker, MRA, SGLT2 inhibitor.",
    ),
    "copd": (
        "GOLD 2024 report",
        "Exacerbation: SABA +/- SAMA, systemic corticosteroids, antibiotics if sputum is purulent, oxygen to "
        "88-92%, NIV for acute hypercapnic respiratory failure. Group E: LABA + LAMA (+ ICS if eos >= 300).",
    ),
    "cap": (
        "NICE NG138 pneumonia (community-acquired)",
        "Antibiotic choice by CURB-65 severity and allergy.",
    ),
    "pe": (
        "ESC 2019 pulmonary embolism guideline",
        "Anticoagulation; risk stratification; thrombolysis if unstable.",
    ),
    "acs": ("ESC 2023 ACS guideline", "STEMI: immediate reperfusion, primary PCI."),
    "k": (
        "UK Kidney Association 2020 hyperkalaemia guideline",
        "K+ >= 6.5: IV calcium if ECG changes, insulin-glucose, cardiac monitoring.",
    ),
}
# 99th-percentile URLs in ng/L by assay (ESC 2023 ACS; manufacturers): "troponin I" alone is conventional.
TROPONIN_URL = {"hs-troponin t": 14.0, "hs-troponin i": 26.0, "troponin i": 40.0, "troponin t": 14.0}
TO_NG_L = {"ng/l": 1.0, "pg/ml": 1.0, "ng/ml": 1000.0, "ug/l": 1000.0}


def _labs(patient: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [lab for lab in patient.get("labs") or [] if str(lab.get("name", "")).lower() == name.lower()]


def _lab(patient: dict[str, Any], name: str) -> float | None:
    """The latest result of ``name`` that is not haemolysed (a repeat supersedes the earlier sample)."""
    for lab in reversed(_labs(patient, name)):
        if lab.get("haemolysed") or lab.get("specimen"):  # blood only: a pleural-fluid pH is not a blood gas
            continue
        try:
            return float(lab["value"])
        except (KeyError, TypeError, ValueError):
            return None
    return None


def _has(patient: dict[str, Any], *words: str) -> bool:
    text = " ".join([*(patient.get("conditions") or []), str(patient.get("note") or "")]).lower()
    return any(w in text for w in words)


def _troponin_raised(patient: dict[str, Any]) -> bool:
    for lab in patient.get("labs") or []:
        url = TROPONIN_URL.get(str(lab.get("name", "")).lower())
        factor = TO_NG_L.get(str(lab.get("unit", "")).lower())
        if url is not None and factor is not None and float(lab.get("value", 0)) * factor > url:
            return True
    return False


def _curb65(patient: dict[str, Any]) -> int:
    vitals = patient.get("vitals") or {}
    urea = _lab(patient, "urea")
    return (
        int(_has(patient, "confusion"))
        + int(urea is not None and urea > 7)
        + int((vitals.get("rr") or 0) >= 30)
        + int((vitals.get("sbp") or 999) < 90 or (vitals.get("dbp") or 999) <= 60)
        + int((patient.get("age") or 0) >= 65)
    )


def _checked(patient: dict[str, Any], drugs: list[str], *labs: str, allergies: bool = False) -> str:
    """A contraindication check of ``drugs`` against this patient: the labs' values (and allergies)."""
    facts = [f"allergies: {', '.join(map(str, patient.get('allergies') or ['none recorded']))}"]
    facts = facts if allergies else []
    for name in labs:
        row = next((lab for lab in reversed(_labs(patient, name)) if not lab.get("haemolysed")), None)
        if row is not None:
            facts.append(f"{row['name']} {row['value']} {row.get('unit') or ''}".strip())
    return f"{', '.join(drugs)}: {'; '.join(facts) or 'no contraindication found'}"


def recommend(patient: dict[str, Any]) -> dict[str, Any]:
    actions: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    escalate: list[str] = []
    contraindications: list[str] = []
    allergic = any("penicillin" in str(a).lower() for a in patient.get("allergies") or [])
    potassium = _lab(patient, "potassium")

    def cite(key: str) -> str:
        row_id = f"g-{key}"
        if not any(r["id"] == row_id for r in rows):
            title, text = GUIDELINES[key]
            rows.append({"id": row_id, "source_type": "guideline", "doc_id": title, "text": text})
        return row_id

    def act(text: str, key: str, category: str) -> None:
        actions.append({"action": text, "evidence_refs": [cite(key)], "category": category})

    if _has(patient, "heart failure", "chf"):
        problems.append("Heart failure")
        bnp = _lab(patient, "BNP")
        hf_drugs: list[str] = []
        if (bnp is not None and bnp > 100) or _has(patient, "edema", "oedema", "crackles"):
            act("Start IV furosemide (loop diuretic)", "hf", "medication")
            hf_drugs.append("furosemide")
        ef = patient.get("ef")
        if isinstance(ef, int | float) and ef <= 40:
            if potassium is None or potassium <= 5.0:
                act("Start sacubitril/valsartan (ARNI)", "hf", "medication")
                act("Start spironolactone (MRA)", "hf", "medication")
                hf_drugs += ["sacubitril/valsartan", "spironolactone"]
            act("Start bisoprolol (evidence-based beta-blocker)", "hf", "medication")
            act("Start dapagliflozin (SGLT2 inhibitor)", "hf", "medication")
            hf_drugs += ["bisoprolol", "dapagliflozin"]
        if hf_drugs:  # renal function and potassium, with this patient's values
            contraindications.append(_checked(patient, hf_drugs, "creatinine", "potassium"))
    if _has(patient, "exacerbation of copd", "copd exacerbation"):
        problems.append("COPD exacerbation")
        act("Nebulised salbutamol (short-acting bronchodilator)", "copd", "medication")
        act("Oral prednisolone 30 mg for 5 days (systemic corticosteroid)", "copd", "medication")
        if _has(patient, "purulent"):
            act("Doxycycline for purulent sputum" if allergic else "Amoxicillin for purulent sputum", "copd",
                "medication")  # fmt: skip
        act("Controlled oxygen via Venturi mask, target saturation 88-92%", "copd", "medication")
        ph, pco2 = _lab(patient, "pH"), _lab(patient, "pCO2")
        if ph is not None and pco2 is not None and ph < 7.35 and pco2 > 6.5:
            act("Start non-invasive ventilation (NIV)", "copd", "procedure")
            escalate.append("Hypercapnic acidosis: NIV, HDU/ICU review if pH < 7.25 or worsening")
    if _has(patient, "copd") and int((patient.get("scores") or {}).get("exacerbations_past_year") or 0) >= 2:
        problems.append("COPD, GOLD group E")
        act("Start LABA + LAMA inhaler (e.g. umeclidinium/vilanterol)", "copd", "medication")
        eos = _lab(patient, "eosinophils")
        if eos is not None and eos >= 300:
            act("Add an inhaled corticosteroid (triple therapy) for eosinophils >= 300", "copd", "medication")
    if _has(patient, "pneumonia"):
        problems.append("Community-acquired pneumonia")
        curb = _curb65(patient)
        if curb >= 3:
            drugs = ["levofloxacin"] if allergic else ["co-amoxiclav", "clarithromycin"]
            act("IV levofloxacin" if allergic else "IV co-amoxiclav plus clarithromycin", "cap", "medication")
            escalate.append("High-severity pneumonia: assess for HDU/ICU")
        elif curb == 2:
            drugs = ["doxycycline"] if allergic else ["amoxicillin", "clarithromycin"]
            act("Doxycycline" if allergic else "Amoxicillin plus clarithromycin", "cap", "medication")
        else:
            drugs = ["doxycycline"] if allergic else ["amoxicillin"]
            act("Oral doxycycline" if allergic else "Oral amoxicillin, outpatient care", "cap", "medication")
        contraindications.append(_checked(patient, drugs, "creatinine", allergies=True))
    if _has(patient, "pulmonary embolism"):
        problems.append("Pulmonary embolism")
        # deliberate gaps: no risk stratification, no reperfusion and no escalation for unstable PE
        act("Start anticoagulation with apixaban", "pe", "medication")
        contraindications.append("bleeding risk; " + _checked(patient, ["apixaban"], "creatinine"))
    stemi = [c for c in patient.get("conditions") or [] if "stemi" in c.lower() and "nstemi" not in c.lower()]
    if stemi:
        problems.append("STEMI")
        act("Activate the cath lab for primary PCI", "acs", "procedure")
        escalate.append("STEMI: immediate reperfusion, cath lab now")
    if _troponin_raised(patient) and _has(patient, "chest pain"):
        problems.append("Possible acute coronary syndrome")
        act("Start the emergent chest pain (ACS) pathway", "acs", "disposition")
        escalate.append("Rising troponin with chest pain: emergent ACS pathway")
    if potassium is not None and potassium >= 6.5:
        problems.append("Severe hyperkalaemia")
        calcium = "IV calcium gluconate, " if _has(patient, "peaked t", "broad qrs") else ""
        act(f"{calcium}insulin with glucose, continuous cardiac monitoring", "k", "medication")
        escalate.append("K+ >= 6.5: insulin-glucose, IV calcium if ECG changes, monitoring")
    return {
        "problems": problems or ["No cardiopulmonary problem identified"],
        "recommended_actions": actions,
        "evidence_table": rows,
        "contraindications_checked": contraindications,
        "when_to_escalate": escalate or None,
        "severity": "high" if escalate else "moderate" if actions else "low",
        "uncertainty": "moderate",
    }


async def predict(request: web.Request) -> web.Response:
    body = await request.json()
    patient = ((body.get("input") or {}).get("data") or {}).get("patient") or {}
    output = recommend(patient)
    return web.json_response(
        {"id": body.get("id"), "output": output, "stage_latency_s": {"retrieval": 0.012, "generation": 0.030}}
    )


def app() -> web.Application:
    application = web.Application()
    application.router.add_post("/predict", predict)
    return application


def main() -> None:
    parser = argparse.ArgumentParser(description="Example rule-based CDS recommender (not a product).")
    parser.add_argument("--port", type=int, default=8003)
    args = parser.parse_args()
    web.run_app(app(), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
