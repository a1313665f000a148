"""``report.json``: the run's stored aggregates and provenance as strict JSON (NaN written as null)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from clineval.core import ComponentSpec, GateDecision, RunResult, TaskSpec
from clineval.core.system_identity import overall_rule, stored_by_system
from clineval.report.context import EMPTY, ReportContext
from clineval.report.formatting import COUNT_KEYS, jsonable_dict, task_ids
from clineval.report.sections.banners import failure_banners
from clineval.report.sections.counterfactual import counterfactual_of
from clineval.report.sections.gate_section import gates_json
from clineval.report.sections.judge_qualification import (
    qualification_banners,
    qualification_lines,
    qualified_json,
)
from clineval.report.sections.model_comparison import Comparison, comparisons
from clineval.report.sections.run_cases import run_failures
from clineval.report.sections.tiers import TierView, run_tiers
from clineval.report.sections.usage_lines import usage_lines
from clineval.report.sections.view import run_warnings

REPORT_VERSION = 1


def _component(spec: ComponentSpec) -> dict[str, Any]:
    return {"type": spec.type, "spec_hash": spec.spec_hash, "content_hash": spec.content_hash}


def _task_spec(task: TaskSpec) -> dict[str, Any]:
    return {
        "spec_hash": task.spec_hash,
        "dataset": _component(task.dataset),
        "system": _component(task.system),
        "scorers": [_component(s) for s in task.scorers],
        "stratify": list(task.stratify),
    }


def _tier_json(view: TierView) -> dict[str, Any]:
    return {
        "tier": view.tier,
        "title": view.title,
        "metrics": [m.name for m in view.metrics],
        "rules": [r.rule for r in view.rules],
    }


def _comparison_json(comparison: Comparison) -> dict[str, Any]:
    return {
        "dataset": comparison.dataset,
        "metric": comparison.metric,
        "stratify_key": comparison.key,
        "tasks": comparison.tasks,
        "groups": [
            {
                "label": g.label,
                "values": {b.task_id: b.value for b in g.bars},
                "ci": {b.task_id: list(b.ci) if b.ci else None for b in g.bars},
            }
            for g in comparison.groups
        ],
    }


def _overall(run: RunResult, tasks: list[str]) -> dict[str, Any]:
    """``overall_scores`` (the mean over tasks only when every task ran one system; with several, only the
    counts, ``n_tasks`` and ``n_systems``), ``overall_by_system``, ``overall_note``:
    docs/engine/report_format.md."""
    rule = overall_rule(run, tasks)
    stored = stored_by_system(run.info.provenance)
    if rule.one_system:
        overall = dict(run.overall)
    else:
        overall = {k: run.overall[k] for k in (*COUNT_KEYS, "n_tasks") if k in run.overall}
        overall["n_systems"] = len(rule.groups)
    by_system = {
        g.name: {
            "type": g.type,
            "tasks": g.tasks,
            "scores": dict(run.overall) if rule.one_system else stored.get(g.name),
        }
        for g in rule.groups
    }
    return {"overall_scores": overall, "overall_by_system": by_system, "overall_note": rule.note}


def build_report(
    run: RunResult, gates: Sequence[GateDecision] = (), *, context: ReportContext = EMPTY
) -> dict[str, Any]:
    """The content of ``report.json``. Every number comes from ``run`` (and the stored gate decisions
    ``gates``) as stored; nothing is computed."""
    info, suite = run.info, run.info.suite
    tasks = [t for t in task_ids(run) if t in run.aggregates]
    report: dict[str, Any] = {
        "report_version": REPORT_VERSION,
        "run_id": info.run_id,
        "status": info.status,
        "warnings": run_warnings(run),  # = provenance["warnings"], at the top where a reader looks first
        "created_at": info.created_at.isoformat(),
        "finished_at": info.finished_at.isoformat() if info.finished_at else None,
        "suite": {
            "name": suite.name,
            "spec_hash": suite.spec_hash,
            "source": suite.source,
            "limit": suite.limit,
            "seed": suite.seed,
            "tasks": {task.id: _task_spec(task) for task in suite.tasks},
        },
        **_overall(run, tasks),
        "task_scores": {t: dict(run.aggregates[t].scores) for t in tasks},
        "strata": {t: run.aggregates[t].strata for t in tasks},
        "counts": {t: {k: run.aggregates[t].scores.get(k) for k in COUNT_KEYS} for t in tasks},
        "failures_by_kind": run_failures(run),
        "provenance": info.provenance,
        "gates": gates_json(gates),
        # added in the same version (additive): the display structure the HTML report shows
        "banners": failure_banners(run),
        # per judged task: is its judge qualified, and each judge prompt's line (judge_qualification.md)
        "judge_qualified": qualified_json(run),
        "judge_banners": qualification_banners(run),
        "judge_qualification": qualification_lines(run),
        "scorecard": {
            t: [_tier_json(v) for v in views] for t, views in run_tiers(run, context.scorers).items()
        },
        "comparisons": [_comparison_json(c) for c in comparisons(run)],
        "usage": info.provenance.get("usage"),  # = provenance["usage"] (clineval.analysis.usage)
        "usage_lines": usage_lines(run),
        # per task: the paired counterfactual analysis made at finalize (docs/runs/counterfactual.md)
        "counterfactual": counterfactual_of(run),
    }
    return jsonable_dict(report)


def report_json_text(
    run: RunResult, gates: Sequence[GateDecision] = (), *, context: ReportContext = EMPTY
) -> str:
    """``build_report`` as indented, strict JSON text (``allow_nan=False``: NaN is already null)."""
    report = build_report(run, gates, context=context)
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"
