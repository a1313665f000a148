"""Clinical thresholds shared by tier 1 (red flags) and tier 3 (guideline rules): one definition each.

Each threshold is a comparison (``op`` ``value`` ``unit``) with its guideline source. The red-flag file
(``cds/guard/data/red_flags.yaml``) and the guideline rules (``cds/rules/data/guideline_rules.yaml``) name a
threshold (``threshold: potassium_severe``) and their loaders resolve it here, so both tiers use the same
number. Pure data: no I/O.

Troponin: the 99th-percentile upper reference limit (URL) is assay-specific (Fourth Universal Definition
of MI, Thygesen et al. 2018: "cTn values above the 99th percentile URL ... assay-specific"), so there is
one threshold per assay type. An unspecified "troponin" result (no assay named) has no numeric threshold:
it is judged by the laboratory's own abnormal flag only (the URL of an unknown assay cannot be assumed).
"""

from __future__ import annotations

from dataclasses import dataclass

from clineval.core.errors import DataFileError


@dataclass(frozen=True, slots=True)
class Threshold:
    """``value`` in ``unit``: a result ``op`` ``value`` is beyond the threshold (e.g. K+ >= 6.5 mmol/L)."""

    name: str
    op: str
    value: float
    unit: str
    source: str


_ALL = (
    Threshold("potassium_severe", ">=", 6.5, "mmol/L",
              "UK Kidney Association, Treatment of Acute Hyperkalaemia in Adults (2020): severe "
              "hyperkalaemia K+ >= 6.5 mmol/L"),
    Threshold("potassium_high", ">=", 5.5, "mmol/L",
              "UK Kidney Association 2020: hyperkalaemia K+ >= 5.5 mmol/L (mild 5.5-5.9, moderate "
              "6.0-6.4, severe >= 6.5)"),
    Threshold("potassium_low_severe", "<", 2.5, "mmol/L",
              "ERC Guidelines 2021, Cardiac arrest in special circumstances: severe hypokalaemia "
              "K+ < 2.5 mmol/L (paraphrased)"),
    Threshold("ph_niv", "<", 7.35, "",
              "BTS/ICS Guideline for the Ventilatory Management of Acute Hypercapnic Respiratory Failure "
              "in Adults (Davidson et al., Thorax 2016): NIV for pH < 7.35 and PaCO2 > 6.5 kPa"),
    Threshold("paco2_niv", ">", 6.5, "kPa",
              "BTS/ICS 2016 (Davidson et al., Thorax 2016): NIV for pH < 7.35 and PaCO2 > 6.5 kPa"),
    Threshold("ph_critical_care", "<", 7.25, "",
              "BTS/ICS 2016: pH < 7.25 - NIV in a setting with ready access to intubation (HDU/ICU), "
              "consider ICU (paraphrased)"),
    Threshold("spo2_low", "<", 92, "%",
              "BTS Guideline for oxygen use in healthcare and emergency settings (O'Driscoll et al., "
              "Thorax 2017): target 94-98%; SpO2 < 92% needs oxygen / urgent assessment (paraphrased)"),
    Threshold("spo2_low_co2_risk", "<", 88, "%",
              "BTS 2017: target 88-92% if at risk of hypercapnic respiratory failure (COPD etc.)"),
    Threshold("lactate_high", ">=", 4, "mmol/L",
              "Surviving Sepsis Campaign 2021 / Hour-1 bundle (Levy et al. 2018): lactate >= 4 mmol/L"),
    Threshold("troponin_hs_ctnt_url", ">", 14, "ng/L",
              "Roche Elecsys hs-cTnT 99th percentile URL 14 ng/L (ESC 2023 ACS; 4th UDMI 2018)"),
    Threshold("troponin_hs_ctni_url", ">", 26, "ng/L",
              "Abbott Architect hs-cTnI 99th percentile URL 26 ng/L overall (sex-specific: female 16, "
              "male 34 ng/L; manufacturer / IFCC table)"),
    Threshold("troponin_ctni_url", ">", 40, "ng/L",
              "Conventional (contemporary) cTnI, e.g. Siemens ADVIA Centaur TnI-Ultra 99th percentile "
              "0.04 ng/mL = 40 ng/L (assay-specific; paraphrased)"),
    Threshold("urea_curb65", ">", 7, "mmol/L",
              "CURB-65 (Lim et al., Thorax 2003; BTS CAP 2009): urea > 7 mmol/L"),
    Threshold("rr_curb65", ">=", 30, "/min", "CURB-65: respiratory rate >= 30/min"),
    Threshold("sbp_low", "<", 90, "mmHg",
              "CURB-65 (SBP < 90 mmHg); ESC 2019 PE high risk (SBP < 90 mmHg); ESC 2021 HF shock"),
    Threshold("dbp_curb65", "<=", 60, "mmHg", "CURB-65: diastolic BP <= 60 mmHg"),
    Threshold("age_curb65", ">=", 65, "years", "CURB-65: age >= 65 years"),
    Threshold("news2_emergency", ">=", 7, "points",
              "NEWS2 (Royal College of Physicians 2017): aggregate score 7 or more - emergency response"),
)  # fmt: skip

THRESHOLDS: dict[str, Threshold] = {t.name: t for t in _ALL}


def threshold(name: str, *, source: str = "<data>") -> Threshold:
    """The threshold called ``name``; an unknown name is a user error (DataFileError, one line)."""
    found = THRESHOLDS.get(name)
    if found is None:
        raise DataFileError(
            f"unknown clinical threshold {name!r} (known: {', '.join(sorted(THRESHOLDS))})", path=source
        )
    return found


def resolve_threshold(item: object) -> object:
    """A rule/flag item ``{..., threshold: NAME}`` with ``value``, ``unit`` and (unless given) ``op``
    filled in from the named threshold; other items unchanged. Unknown name or a conflicting ``value``:
    ValueError (the loaders turn it into a one-line file error)."""
    if not isinstance(item, dict) or item.get("threshold") is None:
        return item
    name = str(item["threshold"])
    found = THRESHOLDS.get(name)
    if found is None:
        raise ValueError(f"unknown clinical threshold {name!r} (known: {', '.join(sorted(THRESHOLDS))})")
    if item.get("value") is not None and float(item["value"]) != found.value:
        raise ValueError(f"threshold {name!r} is {found.value:g}; do not also give value {item['value']}")
    filled = {**item, "value": found.value}
    filled.setdefault("op", found.op)
    if found.unit:
        filled.setdefault("unit", found.unit)
    return filled
