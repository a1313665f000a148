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
        for line in (ROOT / "data" / "golden_set" / "golden_set_v2.jsonl").read_text().splitlines()
    ]
    assert scores["n"] == len(rows) == 102 and scores["n_failed"] == 0
    # The example recommender gives PE anticoagulation only (no risk stratification, no reperfusion): every
    # PE rule fails. It follows the v2 rules for COPD: every exacerbation (12 COPD cases + 4 multi-system
    # cases with COPD) gets SABA, prednisolone, an antibiotic for the purulent sputum every note records and
    # controlled oxygen; NIV where pH < 7.35 and pCO2 > 6.5 kPa: 16/16.
    assert scores["adherence_pe_high_risk"] == 0.0 and scores["adherence_pe_stable"] == 0.0
    assert scores["n_applicable_copd_exacerbation_acute"] == 16
    assert scores["adherence_copd_exacerbation_acute"] == 1.0
    # Red-flag cases: exactly those whose reference expects an escalation (golden set v2 labels escalation
    # from the same red flags; counted from the file itself). The recommender escalates STEMI, ACS, severe
    # CAP, hypercapnic acidosis and hyperkalaemia only: never hypoxaemia, sepsis or PE.
    expected = sum(1 for r in rows if r["reference"]["expected_escalation"])
    assert expected == 61 and scores["red_flag_cases"] == expected
    assert 0.0 < float(scores["guardrail_recall"]) < 1.0  # type: ignore[arg-type]
    # The scripted stand-in judge answers 4 to every sample of every dimension.
    assert scores["judge_coherence"] == 4.0 and scores["judge_flip_rate"] == 0.0
    conditions = result.aggregates["golden"].strata["condition"]
    assert conditions["pe"]["guideline_adherence"] == 0.0 and conditions["chf"]["n"] == 15
    report = render(result)
    assert "## Tier 1: structural and safety checks" in report and "| pe | 15 | 0.000 |" in report
