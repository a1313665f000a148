"""Run the audit: every stand-in's variants through a task's own scorers, aggregated as a run would be.

``audit_task(task_id, cases, scorers)`` audits any scorers on any cases (a user's own scorers included);
``audit_suite(path)`` audits every task of a suite file (its dataset, scorers and stratification; the
suite's system is never called). No network and no model: a scorer that needs a judge reports NaN unless
``judge=True`` and the task names one (the judge is then called like a run calls it, for every stand-in).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from clineval.analysis.gate import metric_tiers
from clineval.analysis.gate_roles import default_role, direction_of, is_gate_metric
from clineval.audit import standins as _builtin
from clineval.audit.context import AuditContext
from clineval.audit.model import AuditReport, MetricAudit, TaskAudit, best, bounds, reached_in
from clineval.audit.registry import STANDINS, StandIn, Variant
from clineval.core import Case, CaseResult, MetricValue, Scorer, UserInputError
from clineval.metrics.aggregate import aggregate_task
from clineval.runner.engine import score_case
from clineval.runner.judging import JudgeStep
from clineval.runner.policy import CallPolicy

Scores = dict[str, MetricValue]


def standins_named(names: Sequence[str] | None = None) -> list[StandIn]:
    """The stand-ins to run: ``names`` (an unknown one is a UserInputError naming the known ones), else
    every registered one; the baseline stand-ins are always included."""
    known = STANDINS.names()
    chosen = list(names) if names else known
    unknown = [n for n in chosen if n not in STANDINS]
    if unknown:
        raise UserInputError(f"unknown stand-in {unknown[0]!r}", hint=f"known stand-ins: {', '.join(known)}")
    found = [STANDINS.get(n) for n in chosen]
    baselines = [s for s in (STANDINS.get(n) for n in known) if s.baseline and s.name not in chosen]
    return _ordered([*baselines, *found])


def _ordered(standins: list[StandIn]) -> list[StandIn]:
    """Baselines first, then in registration order of the built-ins, then the rest by name."""
    order = {s.name: i for i, s in enumerate(_builtin.BUILTIN)}
    unique = {s.name: s for s in standins}
    return sorted(unique.values(), key=lambda s: (not s.baseline, order.get(s.name, len(order)), s.name))


async def _judged(
    task_id: str, cases: Sequence[Case], variant: Variant, scorers: Sequence[Scorer], judge: JudgeStep
) -> list[CaseResult]:
    await judge.start(4)
    try:
        results = []
        for case in cases:
            output, extras = await judge.run(
                task_id, case, variant.respond(case), scorers, CallPolicy(), None
            )
            results.append(score_case(task_id, case, output, scorers, extras))
        return results
    finally:
        await judge.close()


def _results(
    task_id: str, cases: Sequence[Case], variant: Variant, scorers: Sequence[Scorer], judge: JudgeStep | None
) -> list[CaseResult]:
    if judge is not None:
        return asyncio.run(_judged(task_id, cases, variant, scorers, judge))
    return [score_case(task_id, case, variant.respond(case), scorers) for case in cases]


def _metric_keys(runs: Mapping[str, Mapping[str, Scores]], tiers: Mapping[str, int | None]) -> list[str]:
    """Gating or headline metrics, higher is better, in the order the scorers report them."""
    keys: dict[str, None] = {}
    for by_variant in runs.values():
        for scores in by_variant.values():
            for key, value in scores.items():
                if not is_gate_metric(key, value) or direction_of(key) != "higher":
                    continue
                if default_role(key, tiers.get(key)) == "gate" or f"{key}_ci" in scores:
                    keys.setdefault(key)
    return list(keys)


def audit_task(
    task_id: str,
    cases: Sequence[Case],
    scorers: Sequence[Scorer],
    *,
    standins: Sequence[str] | None = None,
    judge: JudgeStep | None = None,
) -> TaskAudit:
    """Every stand-in (``standins``: names, default all) through ``scorers`` on ``cases``."""
    if not cases:
        raise UserInputError(f"task {task_id}: no cases to audit")
    context = AuditContext.of(task_id, cases, scorers)
    runs: dict[str, dict[str, Scores]] = {}
    variants: dict[str, list[str]] = {}
    not_applicable: list[str] = []
    tiers: dict[str, int | None] = {}
    for standin in standins_named(standins):
        found = list(standin.variants(context))
        if not found:
            not_applicable.append(standin.name)
            continue
        variants[standin.name] = [v.label for v in found]
        runs[standin.name] = {}
        for variant in found:
            results = _results(task_id, cases, variant, scorers, judge)
            tiers.update(metric_tiers(results, scorers))  # a key some outputs lack (judged...) too
            runs[standin.name][variant.label] = dict(aggregate_task(results, scorers).scores)
    baselines = [s.name for s in standins_named(standins) if s.baseline and s.name in runs]
    metrics, not_audited = [], {}
    for key in _metric_keys(runs, tiers):
        reached = {
            name: best([reached_in(scores, key, label) for label, scores in by_variant.items()])
            for name, by_variant in runs.items()
        }
        if not any(r.finite for r in reached.values()):
            not_audited[key] = "no stand-in gives it a value (a judge did not run, or no case applies)"
            continue
        base_variants = [reached_in(s, key, label) for b in baselines for label, s in runs[b].items()]
        base = best(base_variants)
        source = next((b for b in baselines if reached[b] == base), "")
        uppers = [bounds(r, len(cases))[1] for r in base_variants if r.finite]
        metrics.append(
            MetricAudit(
                metric=key,
                tier=tiers.get(key),
                role=default_role(key, tiers.get(key)),
                headline=any(f"{key}_ci" in s for v in runs.values() for s in v.values()),
                baseline=base,
                baseline_from=source,
                bound=max(uppers) if uppers else math.nan,
                lower=bounds(base, len(cases))[0],
                reached=reached,  # the baselines' own rows too: never above their own bound
            )
        )
    return TaskAudit(task_id, len(cases), list(runs), variants, metrics, not_audited, not_applicable)


def audit_suite(
    path: str | Path,
    *,
    limit: int | None = None,
    seed: int = 0,
    standins: Sequence[str] | None = None,
    judge: bool = False,
    tasks: Sequence[str] | None = None,
) -> AuditReport:
    """Audit every task (or those named in ``tasks``) of the suite at ``path``; ``limit``/``seed`` sample
    the cases as ``clineval run`` does."""
    from clineval.config import load_suite

    suite = load_suite(path, limit=limit, seed=seed)
    wanted = list(tasks or [])
    unknown = [t for t in wanted if t not in {b.spec.id for b in suite.tasks}]
    if unknown:
        ids = ", ".join(b.spec.id for b in suite.tasks)
        raise UserInputError(f"no task {unknown[0]!r} in the suite", hint=f"tasks: {ids}")
    audits = [
        audit_task(
            built.spec.id,
            list(built.cases),
            built.scorers,
            standins=standins,
            judge=built.judge if judge else None,
        )
        for built in suite.tasks
        if not wanted or built.spec.id in wanted
    ]
    names = {s.name: s.description for s in standins_named(standins)}
    return AuditReport(suite.spec.name, audits, limit=limit, seed=seed, judge=judge, standins=names)
