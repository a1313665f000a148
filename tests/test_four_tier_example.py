"""The four-tier example suite end to end: the example recommender over HTTP, tiers 1-4 on the golden set."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "cds_recommender"))

from recommender import recommend  # noqa: E402
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
    golden_labels(result, rows, scores)


def golden_labels(result: Any, rows: list[dict[str, Any]], scores: dict[str, Any]) -> None:
    """The golden-set label scorers and the design-table ruleset, checked against values computed here."""
    outputs = {r["id"]: recommend(r["patient"]) for r in rows}
    # severity: the recommender says high when it escalates, moderate when it acts, low otherwise
    pairs = [(r["reference"]["severity"], outputs[r["id"]]["severity"]) for r in rows]
    agree = sum(e == p for e, p in pairs)
    assert scores["severity_accuracy"] == agree / 102
    n = len(pairs)
    chance = sum(
        sum(e == c for e, _ in pairs) * sum(p == c for _, p in pairs) for c in {x for pr in pairs for x in pr}
    ) / (n * n)
    assert scores["severity_kappa"] == pytest.approx((agree / n - chance) / (1 - chance))
    # evidence: it cites one guideline row per action and nothing else: 1/|E| where a guideline is expected
    coverage = [
        (1 / len(r["reference"]["evidence_source_types"]))
        if "guideline" in r["reference"]["evidence_source_types"] and outputs[r["id"]]["recommended_actions"]
        else 0.0
        for r in rows
    ]
    assert scores["evidence_type_coverage"] == pytest.approx(sum(coverage) / 102)
    # problems, by hand: "Heart failure" for heart failure + volume overload (1 of 2), "Pulmonary
    # embolism" for a high-risk PE (obstructive shock missed), the CAP named exactly
    by_id = {r.case_id: r.scores["problems_identified"] for r in result.results}
    assert (by_id["gs2-chf-01"].value, by_id["gs2-chf-01"].breakdown["missed"]) == (0.5, ["volume overload"])
    assert (by_id["gs2-pe-11"].value, by_id["gs2-pe-11"].breakdown["missed"]) == (0.5, ["obstructive shock"])
    assert by_id["gs2-pneumonia-01"].value == 1.0 and scores["problem_recall"] < 1.0
    # design table beside v2: PE gets apixaban only (no thrombolysis escalation, no risk stratification);
    # every COPD exacerbation gets SABA + prednisolone
    assert scores["adherence_dt_pe_unstable"] == scores["adherence_dt_pe_stable"] == 0.0
    assert (
        scores["adherence_dt_copd_exacerbation"] == 1.0 and scores["n_applicable_dt_copd_exacerbation"] == 16
    )
    assert 0.0 < float(scores["design_table_adherence"]) < 1.0  # type: ignore[arg-type]
