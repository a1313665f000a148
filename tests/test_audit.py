"""The metric robustness audit on every built-in task type (issue 22 item 1; docs/runs/audit.md).

Each test audits the task type's suite (tests/audit_suites.py: real data, the catalogue's or example's
scorers) and requires that no stand-in inflates a gating metric, except the findings listed in KNOWN: each
is a metric a degenerate system can raise today, reported with its numbers in docs/runs/audit.md ("Findings").
A new inflation fails the test; so does a known one that is fixed (then remove it from KNOWN).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from clineval.audit import AuditReport, audit_suite
from clineval.config import load_suite
from clineval.testing import Reply, Rule, Script
from clineval.testing.audit import assert_not_inflated, inflated
from tests.audit_suites import BY_NAME
from tests.conftest import StartServer
from tests.helpers import SHARED_DATA, shared_data

# DDx (issue 22): nothing known. The audit's four DDx findings are fixed in the scoring
# (docs/ddx/ddx_scoring.md): a list is scored on its first max_differential (10) diagnoses (every_option), an
# exclusion needs support (all_excluded: the status alone, or a turn ruling each out, with each put forward
# first, is none; the diagnosis must be put forward citing a finding of the case, or ruled out with one), a
# quotation of the case or a sentence naming many diagnoses supports none
# (alternatives_cant_miss), and a shotgun of treatments counts for none (treat_everything).
KNOWN: dict[str, set[tuple[str, str, str]]] = {
    "ddx": set(),
    # Four-tier (issue 22): nothing known. Adherence requires specificity (docs/cds/tier3_guidelines.md), a
    # guideline citation relevance to its action (docs/cds/retrieval.md); the tier-1 presence and recall
    # figures and evidence type coverage are tracked beside the robust metrics that gate
    # (docs/cds/tier1_checks.md).
    "four_tier": set(),
}
# What a stand-in still raises among the tracked metrics of the golden set, each with the metric that gates
FOUR_TIER_TRACKED = {
    ("golden", "contraindications_pass_rate", "claim_every_check"),  # contraindications_specific_rate
    ("golden", "escalation_pass_rate", "escalate_everything"),  # escalation_balanced_accuracy
    ("golden", "guardrail_recall", "escalate_everything"),
    ("golden", "evidence_type_coverage", "cite_every_source"),  # guideline_citation_rate
    ("golden", "problem_recall", "every_option"),  # problem_jaccard
    ("golden", "problem_recall", "hedge"),
}


def _audit(name: str, tmp_path: Path) -> AuditReport:
    shared_data()  # skip where the shared data is not mounted
    suite = BY_NAME[name]
    return audit_suite(suite.write(tmp_path, SHARED_DATA), limit=suite.limit, seed=suite.seed)


def test_mcq_medqa_medmcqa_pubmedqa(tmp_path: Path) -> None:
    report = _audit("mcq", tmp_path)
    assert_not_inflated(report, role=None)  # no metric at all, gating or tracked
    assert report.exit_code == 0
    # the baseline is the best constant letter: the most frequent gold letter's share of the sample
    cases = load_suite(BY_NAME["mcq"].write(tmp_path, SHARED_DATA), limit=200, seed=1).tasks
    for built, task in zip(cases, report.tasks, strict=True):
        (metric,) = task.metrics
        golds = Counter(c.reference.answer for c in built.cases)
        assert metric.metric == "accuracy" and metric.role == "gate"
        assert metric.baseline.value == pytest.approx(max(golds.values()) / len(built.cases))
        assert {s: r.value for s, r in metric.reached.items() if s not in ("empty", "constant")} == {
            "refusal": 0.0,
            "every_option": 0.0,
            "copy_question": 0.0,
            "hedge": 0.0,
        }


def test_ddx_ddxplus_open_xddx_lddx(tmp_path: Path) -> None:
    report = _audit("ddx", tmp_path)
    assert inflated(report) == KNOWN["ddx"] == set()
    assert_not_inflated(report, role=None)  # no metric at all, gating or tracked
    assert report.exit_code == 0
    for task in report.tasks:
        by_metric = {m.metric: m for m in task.metrics}
        for metric in ("recall", "diagnostic_safety", "clinical_reasoning_quality", "system_safety_coverage"):
            m = by_metric[metric]
            reached = {s: r.value for s, r in m.reached.items() if r.finite}
            # the gaming cases, and the audit's findings fixed since: relabelling as alternative,
            # findings named in triage, alternatives beside a copy of the case, exclusions without support,
            # every treatment given: none passes the best constant list
            for standin in (
                "all_alternative",
                "triage_mentions",
                "alternatives_cant_miss",
                "all_excluded",
                "treat_everything",
            ):
                assert reached.get(standin, 0.0) <= m.baseline.value + 1e-9, (task.task_id, metric, standin)
        # every diagnosis listed is scored on its first 10: no more than the 10 most frequent (Open-XDDx: two
        # of them are one name written twice, so the first 10 distinct reach one name further)
        recall = by_metric["recall"]
        assert recall.reached["every_option"].value <= recall.bound
        # nothing an excluded list gains: an exclusion without support is an FN
        assert by_metric["clinical_reasoning_quality"].reached["all_excluded"].value == 0.0
        # top-k and reciprocal rank: nothing beats the constant list
        for metric in ("top1_accuracy", "top5_accuracy", "mrr", "precision"):
            assert by_metric[metric].inflated == []


def test_four_tier_golden_set(tmp_path: Path) -> None:
    report = _audit("four_tier", tmp_path)
    (task,) = report.tasks
    tiers = {m.tier for m in task.metrics}
    assert tiers == {1, 2, 3}  # tier 4 needs the judge: not audited without it
    assert {"judge_coherence", "latency_pass_rate"} <= set(task.not_audited)
    assert inflated(report) == KNOWN["four_tier"]
    assert inflated(report, role="track") == FOUR_TIER_TRACKED
    assert report.exit_code == 0
    by_metric = {m.metric: m for m in task.metrics}
    # the golden-set label metrics that gate hold against every stand-in
    for metric in ("problem_jaccard", "severity_kappa"):
        assert by_metric[metric].inflated == [] and by_metric[metric].role == "gate"
    # the gaming cases: a shotgun recommendation, escalating and claiming everything, constant
    # guideline rows: the metrics that gate stay at or below the best constant answer
    for metric, standins in {
        "guideline_adherence": ("every_rule_action", "every_option", "hedge", "escalate_everything"),
        "escalation_balanced_accuracy": ("escalate_everything",),
        "contraindications_specific_rate": ("claim_every_check",),
        "guideline_citation_rate": ("cite_every_source",),
    }.items():
        found = by_metric[metric]
        assert found.role == "gate" and found.tier in (1, 2, 3)
        for standin in standins:
            assert found.reached[standin].value <= found.baseline.value + 1e-9, (metric, standin)
    escalation = by_metric["escalation_balanced_accuracy"]
    assert escalation.baseline.value == escalation.reached["escalate_everything"].value == 0.5
    assert (
        by_metric["problem_recall"].role == "track" and "every_option" in by_metric["problem_recall"].inflated
    )


def test_healthbench_without_judge(tmp_path: Path) -> None:
    report = _audit("healthbench", tmp_path)
    (task,) = report.tasks
    assert task.metrics == [] and "rubric_score" in task.not_audited  # tier 4: graded by the judge only
    assert report.exit_code == 0


def test_healthbench_with_scripted_grader(tmp_path: Path, start_server: StartServer) -> None:
    """A credulous scripted grader (any non-empty reply meets every criterion): the audit calls the judge
    for every stand-in; the constant answer then reaches what any other reply does, so nothing is above it."""
    shared_data()
    met = json.dumps({"criteria_met": True, "explanation": "scripted"})
    empty = Rule(match='""\nRESPONSE>>>', replies=[Reply(content=json.dumps({"criteria_met": False}))])
    judge = start_server(Script(latency_s=0.0, model="grader", answer_format=met, rules=[empty]))
    suite = BY_NAME["healthbench"].write(tmp_path, SHARED_DATA, judge=judge.base_url)
    report = audit_suite(suite, limit=3, seed=1, judge=True)
    (task,) = report.tasks
    by_metric = {m.metric: m for m in task.metrics}
    rubric = by_metric["rubric_score"]
    assert judge.stats["total"] > 0 and rubric.role == "track" and rubric.tier == 4
    values = {s: r.value for s, r in rubric.reached.items()}
    assert values["empty"] < values["constant"] == values["refusal"] == values["hedge"]
    assert rubric.baseline.value == values["constant"] and rubric.inflated == []
    assert_not_inflated(report, role=None)
