"""Latency of the runtime guard ``clineval.cds.guard.check`` over 100,000 synthetic recommendations.

    .venv/bin/python benchmarks/bench_guard.py [--n 100000] [--seed 0] [--input mapping|model]

Each recommendation is built (seeded) just before it is checked, and only the ``check()`` call is timed
(``time.perf_counter_ns``, one process, one core, garbage collector on, as in production). Sizes follow
the brief: 3-8 recommended actions (medication / imaging / lab / monitoring / referral / disposition,
texts with varying drugs, doses and frequencies, ~10 % out of scope, ~10 % citing a missing row),
4-10 evidence rows, and a patient with 10-20 labs, vitals, conditions and a 300-900 character note
(~30 % with a red flag). ``--input mapping`` (default) passes the JSON-like dict, so pydantic
validation is part of the timed call; ``--input model`` passes a ready ``StructuredOutput``.
Prints p50 / p90 / p99 / p99.9 / max in µs of wall time and of the thread's CPU time
(``time.thread_time_ns``: excludes time the process was preempted, which dominates the wall-time tail
on a shared, oversubscribed machine) and the share of passing verdicts; the target is p99 < 1 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from clineval.cds.guard import check
from clineval.core import StructuredOutput

DRUGS = [
    "aspirin",
    "clopidogrel",
    "ticagrelor",
    "enoxaparin",
    "apixaban",
    "heparin",
    "ramipril",
    "bisoprolol",
    "atorvastatin",
    "furosemide",
    "amiodarone",
    "ceftriaxone",
    "doxycycline",
    "salbutamol",
    "ipratropium",
    "prednisolone",
    "candesartan",
    "metoprolol",
    "spironolactone",
]
ACTIONS = [
    "Start {drug} {dose} mg {freq}",
    "Continue {drug} {dose} mg {freq} and review in {days} days",
    "Obtain 12-lead ECG and repeat in {days} hours",
    "Order CT pulmonary angiogram if Wells score > {days}",
    "Repeat troponin at {days} hours",
    "Check potassium, creatinine and magnesium in {days} hours",
    "Transthoracic echocardiogram to assess LV function (EF {dose}%)",
    "Continuous cardiac monitoring on telemetry for {days} hours",
    "Oxygen to target saturation 94-98% via nasal cannula at {days} L/min",
    "Refer to cardiology for outpatient review within {days} weeks",
    "Admit to medical ward; reassess NEWS2 every {days} hours",
    "Chest X-ray to exclude pneumothorax and consolidation",
]
OUT_OF_SCOPE = [
    "Refer to dermatology for the rash on day {days}",
    "Start sertraline {dose} mg daily",
    "Schedule knee replacement in {days} weeks",
    "Refer to oncology for chemotherapy review",
]
LABS = [
    ("Sodium", 135, 145, "mmol/L"),
    ("Potassium", 3.4, 7.2, "mmol/L"),
    ("Creatinine", 60, 220, "umol/L"),
    ("Urea", 3, 20, "mmol/L"),
    ("Haemoglobin", 90, 160, "g/L"),
    ("WBC", 4, 18, "10^9/L"),
    ("Platelets", 120, 400, "10^9/L"),
    ("CRP", 1, 250, "mg/L"),
    ("hs-cTnT", 3, 90, "ng/L"),
    ("NT-proBNP", 50, 9000, "ng/L"),
    ("D-dimer", 0.1, 4.0, "mg/L FEU"),
    ("Lactate", 0.6, 5.0, "mmol/L"),
    ("pH", 7.12, 7.46, ""),
    ("pCO2", 4.0, 9.5, "kPa"),
    ("pO2", 7.0, 13.0, "kPa"),
    ("Glucose", 4, 16, "mmol/L"),
    ("Magnesium", 0.6, 1.1, "mmol/L"),
    ("ALT", 10, 90, "U/L"),
    ("INR", 0.9, 3.5, ""),
    ("Albumin", 25, 45, "g/L"),
]
CONDITIONS = [
    "hypertension",
    "type 2 diabetes",
    "COPD",
    "atrial fibrillation",
    "heart failure",
    "CKD stage 3",
    "community-acquired pneumonia",
    "pulmonary embolism",
    "asthma",
    "hyperlipidaemia",
]
NOTE_BITS = [
    "Presents with {x} hours of central chest pain.",
    "Denies fever or rigors.",
    "No chest pain.",
    "Breathless on exertion for {x} days.",
    "ECG: sinus rhythm, no ST elevation.",
    "ECG shows ST elevation in leads II, III, aVF.",
    "Productive cough with green sputum for {x} days.",
    "Ex-smoker, {x} pack-years.",
    "Lives alone, independent.",
    "Bibasal crackles on auscultation.",
    "Calves soft, non-tender.",
    "Took {x} puffs of salbutamol without relief.",
]
ESCALATE = [
    "If SBP < 90 or SpO2 < 92%, call ICU outreach",
    "Activate cath lab for primary PCI",
    "Give IV calcium gluconate and insulin-dextrose for K+ > 6.5; call renal",
    "Escalate to cardiology if troponin rises",
    "Senior review if NEWS2 >= 5",
]


def fill(rng: random.Random, template: str) -> str:
    return template.format(
        drug=rng.choice(DRUGS),
        dose=rng.choice([1.25, 2.5, 5, 10, 20, 40, 75, 80, 300]),
        freq=rng.choice(["once daily", "twice daily", "BD", "OD", "TDS", "stat"]),
        days=rng.randint(1, 14),
        x=rng.randint(1, 40),
    )


def recommendation(rng: random.Random) -> dict[str, Any]:
    n_rows = rng.randint(4, 10)
    rows = [
        {
            "id": f"E{i}",
            "source_type": rng.choice(["guideline", "note", "lab", "drug"]),
            "doc_id": f"doc-{i}",
            "chunk_id": f"c{rng.randint(1, 99)}",
            "text": "x" * rng.randint(80, 400),
        }
        for i in range(1, n_rows + 1)
    ]
    actions = []
    for _ in range(rng.randint(3, 8)):
        template = rng.choice(OUT_OF_SCOPE) if rng.random() < 0.03 else rng.choice(ACTIONS)
        refs = [
            f"E{rng.randint(1, n_rows + (1 if rng.random() < 0.02 else 0))}" for _ in range(rng.randint(1, 3))
        ]
        category = (
            "medication" if template.startswith(("Start", "Continue")) else rng.choice(["imaging", "lab"])
        )
        actions.append({"action": fill(rng, template), "evidence_refs": refs, "category": category})
    return {
        "problems": rng.sample(CONDITIONS, 2),
        "recommended_actions": actions,
        "evidence_table": rows,
        "contraindications_checked": [] if rng.random() < 0.05 else ["renal function", "bleeding risk"],
        "when_to_escalate": rng.sample(ESCALATE, rng.randint(0, 2)),
        "severity": rng.choice(["low", "moderate", "high"]),
    }


def patient(rng: random.Random) -> dict[str, Any]:
    labs = []
    for name, lo, hi, unit in rng.sample(LABS, rng.randint(10, 20)):
        value = round(rng.uniform(lo, hi * (1.0 if rng.random() < 0.3 else 0.9)), 2)
        labs.append({"name": name, "value": value, "unit": unit, "flag": "H" if value > hi * 0.8 else ""})
    note = " ".join(fill(rng, b) for b in rng.sample(NOTE_BITS, rng.randint(5, 10)))
    return {
        "age": rng.randint(30, 90),
        "sex": rng.choice(["M", "F"]),
        "conditions": rng.sample(CONDITIONS, rng.randint(1, 4)),
        "medications": rng.sample(DRUGS, 3),
        "labs": labs,
        "vitals": {
            "hr": rng.randint(50, 140),
            "sbp": rng.randint(80, 170),
            "dbp": rng.randint(50, 95),
            "rr": rng.randint(12, 34),
            "spo2": rng.randint(84, 99),
            "temp": round(rng.uniform(36, 39.5), 1),
        },
        "scores": {"curb65": rng.randint(0, 4)},
        "note": note,
    }


def percentile(sorted_values: list[int], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))] / 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--input", choices=["mapping", "model"], default="mapping")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for _ in range(200):  # warm up imports and caches of the packaged vocabularies
        check(recommendation(rng), patient=patient(rng))
    times: list[int] = []
    cpu: list[int] = []
    passed = 0
    for _ in range(args.n):
        rec: Any = recommendation(rng)
        if args.input == "model":
            rec = StructuredOutput.model_validate(rec)
        record = patient(rng)
        start, start_cpu = time.perf_counter_ns(), time.thread_time_ns()
        verdict = check(rec, patient=record)
        times.append(time.perf_counter_ns() - start)
        cpu.append(time.thread_time_ns() - start_cpu)
        passed += verdict.passed
    print(f"guard.check over {args.n:,} recommendations (input={args.input}, seed={args.seed})")
    for label, values in (("wall", times), ("thread CPU", cpu)):
        values.sort()
        p99 = percentile(values, 0.99)
        print(
            f"  {label:>10}: p50 {percentile(values, 0.50):.1f} µs  p90 {percentile(values, 0.90):.1f} µs  "
            f"p99 {p99:.1f} µs  p99.9 {percentile(values, 0.999):.1f} µs  max {values[-1] / 1000:.1f} µs  "
            f"mean {statistics.fmean(values) / 1000:.1f} µs  (p99 < 1 ms: {'met' if p99 < 1000 else 'NOT'})"
        )
    print(f"  verdicts passed: {passed / args.n:.1%}")


if __name__ == "__main__":
    main()
