"""The four-tier example suite end to end: the example recommender over HTTP, tiers 1-4 on the golden set."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "cds_recommender"))

from run_four_tier import render, run  # noqa: E402


def test_four_tier_example(tmp_path: Path) -> None:
    result = run(tmp_path)
    scores = result.aggregates["golden"].scores
    rows = [
        json.loads(line)
        for line in (ROOT / "data" / "golden_set" / "golden_set_v1.jsonl").read_text().splitlines()
    ]
    assert scores["n"] == len(rows) == 100 and scores["n_failed"] == 0
    # The example recommender never gives PE reperfusion or risk stratification. For COPD exacerbations it
    # gives both v1 drugs but no antibiotic, while every golden exacerbation note has purulent sputum (GOLD:
    # antibiotics, rules v2): of the 16 cases the rule applies to, only the two with pneumonia (antibiotics
    # for the pneumonia, SpO2 88% and 90%: no controlled-oxygen requirement) pass: 2/16.
    assert scores["adherence_pe_high_risk"] == 0.0
    assert scores["n_applicable_copd_exacerbation_acute"] == 16
    assert scores["adherence_copd_exacerbation_acute"] == 2 / 16
    # Red-flag cases: at least those whose reference expects an escalation (counted from the file itself);
    # the guard's red-flag list (NEWS2 vitals, lactate...) is wider than the guideline rules' escalations.
    expected = sum(1 for r in rows if r["reference"]["expected_escalation"])
    assert expected == 32 and int(scores["red_flag_cases"]) >= expected  # type: ignore[call-overload]
    assert 0.0 < float(scores["guardrail_recall"]) < 1.0  # type: ignore[arg-type]
    # The scripted stand-in judge answers 4 to every sample of every dimension.
    assert scores["judge_coherence"] == 4.0 and scores["judge_flip_rate"] == 0.0
    conditions = result.aggregates["golden"].strata["condition"]
    assert conditions["pe"]["guideline_adherence"] == 0.0 and conditions["chf"]["n"] == 15
    report = render(result)
    assert "## Tier 1: structural and safety checks" in report and "| pe | 15 | 0.000 |" in report
