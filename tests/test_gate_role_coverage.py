"""Every metric a built-in scorer emits has a deliberate gate role (an exact name or a reviewed family of
``clineval.analysis.gate_roles.METRIC_RULES``, never the fallback for unknown metrics), and a tier-1
latency pass rate that drops blocks the gate (the old pattern ``latency_p*`` tracked it as a percentile).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clineval.analysis.gate import evaluate_strict, is_headline
from clineval.analysis.gate_roles import FALLBACK, METRIC_RULES, default_role, direction_of, rule_for
from clineval.cds.retrieval.scorer import DEFAULT_MEASURES
from clineval.core.helpers.columns import ScoreColumn
from clineval.core.score import Score
from clineval.metrics.aggregate import COUNT_KEYS, compute_metric
from clineval.scoring.registry import SCORERS
from tests.cli_helpers import clineval
from tests.golden_runs import GOLDEN, ROWS

# a value for every breakdown key a built-in metric reads, so that metrics whose keys depend on the data
# (latency stages, retrieval measures, rule ids, judge dimensions, rubric tags, judged DDx) emit them
BOOLEAN_KEYS = {"mentioned", "in_differential", "ambiguous", "guideline_cited", "injection_flagged"}
SPECIAL: dict[str, Any] = {
    "latency_s": {"total": 1.0, "retrieval": 0.1, "generation": 0.5},
    "measures": dict.fromkeys(DEFAULT_MEASURES, 0.5),
    "by_source_type": {"R@100[guideline]": 0.5, "R@100[note]": 1.0},
    "tag_scores": {"axis:accuracy": 0.5, "theme:emergency_referrals": 1.0},
    "gold": "A",
    "extracted": "B",
}


def _value(key: str) -> Any:
    if key in SPECIAL:
        return SPECIAL[key]
    if key in BOOLEAN_KEYS or key.startswith("top") or key == "weighted_top1_same":
        return True
    return 0.5


def _breakdown(scorer: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for metric in scorer.metrics:
        for key in getattr(metric, "breakdown_keys", None) or ():
            out[key] = _value(key)
    if scorer.name.startswith("guideline_adherence"):
        rules = next(m for m in scorer.metrics if type(m).__name__ == "RuleAdherenceRates").rule_ids
        out["rules"] = [{"rule_id": r, "applicable": True, "adherent": True} for r in rules]
    if scorer.name == "judge_dimensions":
        dims = [m.dimension for m in scorer.metrics if hasattr(m, "dimension")]
        out["grades"] = dict.fromkeys(dims, 4)
        sample = {"samples": [4, 4, 5], "errors": 0, "variance": 0.2, "flips": 1}
        out["dimensions"] = {d: sample for d in dims}
    return out


# options that change which keys a built-in scorer emits
VARIANTS: list[tuple[str, dict[str, Any]]] = [("guideline_adherence", {"ruleset": "design_table"})]


def builtin_metric_keys() -> dict[str, set[str]]:
    """Scorer name -> every key its metrics emit over a rich two-case column (default options, and the
    :data:`VARIANTS`)."""
    found: dict[str, set[str]] = {}
    for name, options in [(n, {}) for n in SCORERS.names()] + VARIANTS:
        scorer = SCORERS.get(name)(options)
        breakdown = _breakdown(scorer)
        scores = [
            Score(value=0.0, label="graded", breakdown=breakdown),
            Score(value=1.0, label="failed", breakdown=breakdown),
        ]
        keys: set[str] = set()
        for metric in scorer.metrics:
            keys |= set(compute_metric(metric, ScoreColumn.from_scores(scores)))
        found[scorer.name] = keys
    return found


KEYS = builtin_metric_keys()
# what aggregation, the combined score and a counterfactual task (issue 27) add to a task's scores
EXTRA = {
    *COUNT_KEYS,
    "combined_score",
    "combined_score_ci",
    "combined_score[safety]",
    "counterfactual_flip_rate",
    "counterfactual_abs_delta",
}
ALL = sorted({k for keys in KEYS.values() for k in keys} | EXTRA)


def test_the_enumeration_reaches_the_data_dependent_families() -> None:
    assert {"latency_p50_retrieval", "latency_p95_total", "latency_pass_rate"} <= KEYS["latency"]
    assert {"nDCG@10", "R@100", "R@100[guideline]"} <= KEYS["retrieval"]
    assert {"recall_judged", "top5_accuracy_judged", "judge_error_rate", "mrr_judged"} <= KEYS["ddx"]
    assert {"adherence_pe_stable", "n_applicable_pe_stable"} <= KEYS["guideline_adherence"]
    assert {"judge_coherence", "judge_flip_rate"} <= KEYS["judge_dimensions"]
    assert {"rubric_score[axis:accuracy]", "rubric_score_answered"} <= KEYS["rubric"]
    assert len(ALL) > 150


@pytest.mark.parametrize("key", ALL)
def test_every_builtin_metric_has_a_rule_of_its_own(key: str) -> None:
    rule = rule_for(key)
    assert rule is not FALLBACK, f"{key} falls through to the rule for unknown metrics"
    assert rule_for(f"somescorer.{key}") is rule  # prefixed when two scorers share it


def test_no_rule_is_dead() -> None:
    """Each rule of the table names at least one metric clineval emits (a typo would name none)."""
    unused = [r.name for r in METRIC_RULES if not any(r.matches(k) for k in ALL)]
    assert unused == []


def test_latency_pass_rate_is_a_tier1_gate_not_a_percentile() -> None:
    assert rule_for("latency_pass_rate").name == "latency_pass_rate"
    assert (direction_of("latency_pass_rate"), default_role("latency_pass_rate", 1)) == ("higher", "gate")
    assert (direction_of("latency_p95_generation"), default_role("latency_p95_generation", 1)) == (
        "lower",
        "track",
    )
    assert is_headline("latency_pass_rate", 1.0) and not is_headline("latency_p50_total", 0.2)
    # a family matches the whole key: no prefix match
    assert rule_for("latency_p95").name != "latency_p95_{name}"
    assert rule_for("top_accuracy") is FALLBACK and rule_for("topk_accuracy") is FALLBACK


def _snapshot(rate: float) -> dict[str, Any]:
    scores = {"latency_pass_rate": rate, "latency_p95_total": 0.1 if rate else 9.0, "schema_pass_rate": 1.0}
    tiers = dict.fromkeys(scores, 1)
    return {"tasks": {"t": {"scores": scores, "tiers": tiers, "strata": {}}}}


def test_a_latency_pass_rate_from_one_to_zero_fails_the_gate() -> None:
    result = evaluate_strict(_snapshot(1.0), _snapshot(0.0), run_id="c", name="b", version=1, tenant="x")
    assert not result.passed
    assert [(r.metric, r.status) for r in result.failures] == [("latency_pass_rate", "fail")]
    tracked = [r for r in result.rows if r.metric == "latency_p95_total"]
    assert [(r.status, r.direction) for r in tracked] == [("tracked", "lower")]


def _latency_suite(folder: Path, name: str, seconds: float) -> Path:
    lines = [
        json.dumps({"id": row["id"], "output": {"recommended_actions": []}, "latency_s": seconds})
        for row in ROWS
    ]
    (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    suite = folder / f"{name}.yaml"
    suite.write_text(
        f"name: latency-{name}\ntasks:\n  - id: golden\n"
        f"    dataset: {{format: golden_set, path: {GOLDEN}}}\n"
        f"    system: {{type: predictions, path: {name}.jsonl}}\n"
        "    scorers: [{latency: {budget_s: {total: 1.0}}}]\n"
    )
    return suite


def test_cli_gate_blocks_a_latency_regression(tmp_path: Path) -> None:
    store = ["--store", f"sqlite:///{tmp_path / 's.db'}"]
    ids = {}
    for name, seconds in (("fast", 0.2), ("slow", 3.0)):
        proc = clineval("run", str(_latency_suite(tmp_path, name, seconds)), *store, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        ids[name] = proc.stderr.split("run ", 1)[1].split()[0]
    assert clineval("baseline", "promote", ids["fast"], "--name", "lat", *store, cwd=tmp_path).returncode == 0
    gate = clineval("gate", ids["slow"], "--baseline", "lat", "--allow-tuned-cases", *store, cwd=tmp_path)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "REGRESSION: 1 of 1 gating metric regressed; 2 tracked" in gate.stdout
    assert "golden latency_pass_rate: baseline 1.0000, candidate 0.0000, delta -1.0000" in gate.stdout
