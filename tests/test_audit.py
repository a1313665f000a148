"""The metric robustness audit on every built-in task type (issue 22 item 1; docs/audit.md).

Each test audits the task type's suite (tests/audit_suites.py: real data, the catalogue's or example's
scorers) and requires that no stand-in inflates a gating metric, except the findings listed in KNOWN: each
is a metric a degenerate system can raise today, reported with its numbers in docs/audit.md ("Findings").
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

DDX_EVERYWHERE = {
    ("recall", "every_option"),  # every diagnosis of the sample listed: recall 1.0 (precision falls)
    ("system_safety_coverage", "every_option"),
    ("clinical_reasoning_quality", "all_excluded"),  # AE from status: excluded alone
}
DDX_OPEN = {  # Open-XDDx cases (also the LDDx task): the vignette is prose, so copying it cites a finding
    ("clinical_reasoning_quality", "alternatives_cant_miss"),  # CAA support by copying the case
    ("diagnostic_safety", "alternatives_cant_miss"),
    ("system_safety_coverage", "treat_everything"),  # TM-SM by giving every treatment in triage
}
KNOWN = {
    "ddx": {
        *(("ddxplus", m, s) for m, s in DDX_EVERYWHERE),
        *((task, m, s) for task in ("open-xddx", "lddx") for m, s in DDX_EVERYWHERE | DDX_OPEN),
    },
    "four_tier": {
        ("golden", "contraindications_pass_rate", "claim_every_check"),  # tier 1 is a presence check
        ("golden", "escalation_pass_rate", "escalate_everything"),  # over-escalation is not penalised
        ("golden", "guardrail_recall", "escalate_everything"),
        ("golden", "guideline_citation_rate", "cite_every_source"),  # two constant guideline rows pass
        ("golden", "evidence_type_coverage", "cite_every_source"),  # the patient record copied into rows
        ("golden", "guideline_adherence", "every_option"),  # a shotgun recommendation is adherent
        ("golden", "guideline_adherence", "hedge"),
        ("golden", "guideline_adherence", "every_rule_action"),
        ("golden", "guideline_adherence", "escalate_everything"),
    },
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
    assert inflated(report) == KNOWN["ddx"]
    assert_not_inflated(report, allowed=KNOWN["ddx"])
    assert report.exit_code == 1
    for task in report.tasks:
        by_metric = {m.metric: m for m in task.metrics}
        # the gaming cases hold: relabelling as alternative, mentioning findings in triage
        for metric in ("diagnostic_safety", "clinical_reasoning_quality", "system_safety_coverage"):
            assert "all_alternative" not in by_metric[metric].inflated
            assert "triage_mentions" not in by_metric[metric].inflated
        # top-k and reciprocal rank: nothing beats the constant list
        for metric in ("top1_accuracy", "top5_accuracy", "mrr", "precision"):
            assert by_metric[metric].inflated == []
        # every_option lists everything: precision falls below the trivial baseline beside it
        assert "precision" in task.lowered("every_option")


def test_four_tier_golden_set(tmp_path: Path) -> None:
    report = _audit("four_tier", tmp_path)
    (task,) = report.tasks
    tiers = {m.tier for m in task.metrics}
    assert tiers == {1, 2, 3}  # tier 4 needs the judge: not audited without it
    assert {"judge_coherence", "latency_pass_rate"} <= set(task.not_audited)
    assert inflated(report) == KNOWN["four_tier"]
    by_metric = {m.metric: m for m in task.metrics}
    # the golden-set label metrics that gate hold against every stand-in
    for metric in ("problem_jaccard", "severity_kappa"):
        assert by_metric[metric].inflated == [] and by_metric[metric].role == "gate"
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
