"""Abnormal vital signs and laboratory values stated as numbers in a case text ("pulse is 176/min",
"blood pressure is 80/50 mm Hg", "temperature 38.9 °C", "potassium 6.8 mEq/L"), named as the findings of the
TM-SM action map (``clineval.ddx.treatment``: an action is indicated by a finding of the case).

Vignettes give vitals as numbers, not words; without this reader "pulse is 176/min" would not indicate
fluids for tachycardia. Adult thresholds, each from the source the action map cites for the finding (a
child's normal heart rate is higher: the reader errs towards "indicated", never towards a treatment):

=====================  ===============================  =============================================
finding                when                             threshold source
=====================  ===============================  =============================================
tachycardia            pulse / heart rate > 100 /min    AHA 2020 ACLS, adult tachycardia algorithm
bradycardia            pulse / heart rate < 50 /min     AHA 2020 ACLS, adult bradycardia algorithm
hypotension            systolic BP < 90 mm Hg           Surviving Sepsis Campaign 2021; ATLS 10th ed.
elevated blood         systolic >= 140 or diastolic     ACC/AHA 2017 (stage 2 hypertension)
pressure               >= 90 mm Hg
fever                  temperature >= 38.0 °C (100.4 F) NICE NG143 (fever in under 5s)
hyperthermia           temperature >= 40.0 °C           WMS heat illness guideline 2019
hypothermia            temperature < 35.0 °C            (the same scale)
low oxygen saturation  SpO2 / O2 saturation < 94 %      BTS oxygen guideline 2017 (target 94-98 %)
hypoglycemia           glucose < 70 mg/dL (3.9 mmol/L)  ADA Standards of Care 2024, section 6
hyperglycemia          glucose > 250 mg/dL              ADA hyperglycaemic crises consensus 2024
hyperkalemia           potassium >= 5.5 mEq/L           UK Kidney Association hyperkalaemia 2020
hypokalemia            potassium < 3.5 mEq/L            Harrison's 21st ed.
hyponatremia           sodium < 135 mEq/L               European hyponatraemia guideline 2014
hypercalcemia          calcium > 10.5 mg/dL             Endocrine Society hypercalcaemia 2023
hypocalcemia           calcium < 8.5 mg/dL              Society for Endocrinology hypocalcaemia 2016
anemia                 hemoglobin < 12 g/dL             WHO haemoglobin thresholds for anaemia 2011
=====================  ===============================  =============================================
"""

from __future__ import annotations

import re
from collections.abc import Callable

_NUM = r"(\d+(?:\.\d+)?)"
_GAP = r"[^0-9.;]{0,25}?"  # "pulse is", "heart rate of", "blood pressure was"

Rule = tuple["re.Pattern[str]", "Judge"]


def _bp(systolic: float, diastolic: float | None) -> list[str]:
    found = ["hypotension"] if systolic < 90 else []
    if systolic >= 140 or (diastolic is not None and diastolic >= 90):
        found.append("elevated blood pressure")
    return found


def _temperature(value: float, _: float | None) -> list[str]:
    celsius = (value - 32) / 1.8 if value > 50 else value  # a Fahrenheit figure
    if celsius >= 40.0:
        return ["fever", "hyperthermia"]
    if celsius >= 38.0:
        return ["fever"]
    return ["hypothermia"] if celsius < 35.0 else []


def _glucose(value: float, _: float | None) -> list[str]:
    mg_dl = value * 18.0 if value < 40 else value  # mmol/L when small
    return ["hypoglycemia"] if mg_dl < 70 else ["hyperglycemia"] if mg_dl > 250 else []


Judge = Callable[[float, float | None], list[str]]


def _between(low: float, low_name: str, high: float, high_name: str) -> Judge:
    return lambda v, _: [low_name] if v < low else [high_name] if v >= high else []


_HR = rf"\b(?:pulse|heart rate|hr){_GAP}{_NUM}\s*(?:/\s*min|bpm|beats)"
_BP = rf"\b(?:blood pressure|bp){_GAP}{_NUM}\s*/\s*{_NUM}"
_TEMP = rf"\btemperature{_GAP}{_NUM}\s*°?\s*[CF]\b"
_SAT = rf"\b(?:oxygen saturation|o2 saturation|spo2|saturation){_GAP}{_NUM}\s*%"
_GLUCOSE = rf"\b(?:glucose|blood sugar){_GAP}{_NUM}\s*(?:mg/dl|mmol)"
_K = rf"\b(?:potassium|k\+){_GAP}{_NUM}\s*(?:meq|mmol)"
_NA = rf"\b(?:sodium|na\+){_GAP}{_NUM}\s*(?:meq|mmol)"
_CA = rf"\bcalcium{_GAP}{_NUM}\s*mg/dl"
_HB = rf"\b(?:hemoglobin|haemoglobin|hb){_GAP}{_NUM}\s*g/dl"


def _calcium(value: float, _: float | None) -> list[str]:
    return ["hypocalcemia"] if value < 8.5 else ["hypercalcemia"] if value > 10.5 else []


RULES: tuple[Rule, ...] = tuple(
    (re.compile(pattern, re.I), judge)
    for pattern, judge in (
        (_HR, _between(50, "bradycardia", 101, "tachycardia")),
        (_BP, _bp),
        (_TEMP, _temperature),
        (_SAT, _between(94, "low oxygen saturation", 1000, "")),
        (_GLUCOSE, _glucose),
        (_K, _between(3.5, "hypokalemia", 5.5, "hyperkalemia")),
        (_NA, _between(135, "hyponatremia", 1000, "")),
        (_CA, _calcium),
        (_HB, _between(12, "anemia", 1000, "")),
    )
)


def numeric_findings(text: str) -> frozenset[str]:
    """The findings (``RULES``) that the numbers of ``text`` show, e.g. {"tachycardia", "fever"}."""
    found: set[str] = set()
    for pattern, judge in RULES:
        for m in pattern.finditer(text):
            second = m.group(2) if m.lastindex and m.lastindex >= 2 else None
            found.update(f for f in judge(float(m.group(1)), float(second) if second else None) if f)
    return frozenset(found)
