"""Compare two runs case by case: metric deltas overall and per stratum, changed cases, paired tests.

Runs are matched by task id, cases by case id. For every scorer's per-case values, overall and within each
stratum value of the task's stratification keys, ``PairedTest`` holds the mean of each run, the delta with
a 95% paired bootstrap interval, an exact McNemar test (binary values) or a sign-flip permutation test
(continuous values), win/tie/loss counts and the Holm-adjusted p-value across all paired tests of the
task (``clineval.analysis.paired``). ``tests`` keeps the overall exact McNemar discordant counts per
binary scorer. ``gc_paused`` pauses the cyclic garbage collector around work on hundreds of thousands of
acyclic objects (``compare_task`` here, the whole of ``releases.compare_runs``).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from clineval.analysis.paired import (
    holm,
    is_binary_values,
    mcnemar_exact,
    mcnemar_exact_values,
    paired_bootstrap_ci,
    paired_permutation_test,
    win_tie_loss,
)
from clineval.core import CaseResult, MetricValue, TaskAggregate
from clineval.core.comparison import CaseChange, McNemar, MetricDelta, PairedTest, TaskComparison
from clineval.metrics import MISSING_STRATUM

__all__ = ["compare_task", "gc_paused", "mcnemar_exact", "metric_deltas", "paired_tests"]

CONFIDENCE = 0.95
SEED = 0

COUNT_KEYS = frozenset({"n", "n_failed", "n_unscored", "n_tasks"})


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector inside the block (its previous state restored on exit).

    Loading and comparing two 100,000-case runs creates millions of acyclic objects (CaseResults, their
    scores and metadata, changed cases). Each of them counts towards the collector's thresholds, and every
    full collection they trigger rescans all of them: about 10 of the 30 s of such a comparison
    (``benchmarks/bench_compare.py``). Reference counting still frees everything; only reference cycles
    created inside the block wait until the collector runs again.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _floats(scores: Mapping[str, MetricValue]) -> dict[str, float]:
    return {
        k: float(v)
        for k, v in scores.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and k not in COUNT_KEYS
    }


def metric_deltas(a: Mapping[str, MetricValue], b: Mapping[str, MetricValue]) -> list[MetricDelta]:
    fa, fb = _floats(a), _floats(b)
    return [MetricDelta(m, fa[m], fb[m]) for m in fa if m in fb]


def _stratum(value: object) -> str:
    return MISSING_STRATUM if value is None else str(value)


Observation = tuple[Mapping[str, object], float, float]  # (case metadata, value in A, value in B)


def _columns(obs: Sequence[Observation]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    xa = np.fromiter((x for _, x, _ in obs), dtype=np.float64, count=len(obs))
    xb = np.fromiter((y for _, _, y in obs), dtype=np.float64, count=len(obs))
    return xa, xb


def _paired_test(
    scorer: str, key: str | None, value: str | None, xa: NDArray[np.float64], xb: NDArray[np.float64]
) -> PairedTest:
    a, b = xa.tolist(), xb.tolist()
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    if is_binary_values(xa, xb):
        test, p = "mcnemar_exact", mcnemar_exact_values(xa, xb)[2]
    else:
        test, p = "permutation", paired_permutation_test(xa, xb, seed=SEED)
    wins, ties, losses = win_tie_loss(xa, xb)
    ci = paired_bootstrap_ci(xa, xb, seed=SEED, confidence=CONFIDENCE)
    return PairedTest(
        scorer,
        key,
        value,
        len(a),
        mean_a,
        mean_b,
        mean_b - mean_a,
        ci,
        CONFIDENCE,
        test,
        p,
        p,
        wins,
        ties,
        losses,
    )


def paired_tests(
    observations: Mapping[str, Sequence[Observation]],
    strata_keys: Sequence[str] = (),
) -> list[PairedTest]:
    """Paired tests per scorer, overall and per value of each key in ``strata_keys``, Holm across all.

    ``observations[scorer]`` holds ``(case metadata, value in A, value in B)`` for every case both runs
    scored (NaN already dropped). Cases lacking a key go in the ``"(missing)"`` stratum, as in aggregation.
    """
    raw: list[PairedTest] = []
    for scorer, obs in observations.items():
        if not obs:
            continue
        xa, xb = _columns(obs)
        raw.append(_paired_test(scorer, None, None, xa, xb))
        for key in strata_keys:
            groups: dict[str, list[int]] = {}
            for i, (meta, _, _) in enumerate(obs):
                groups.setdefault(_stratum(meta.get(key)), []).append(i)
            for value in sorted(groups):
                rows = np.asarray(groups[value], dtype=np.intp)
                raw.append(_paired_test(scorer, key, value, xa[rows], xb[rows]))
    adjusted = holm([t.p for t in raw])
    return [replace(t, p_holm=p) for t, p in zip(raw, adjusted, strict=True)]


def compare_task(
    task_id: str,
    agg_a: TaskAggregate,
    agg_b: TaskAggregate,
    results_a: Sequence[CaseResult],
    results_b: Sequence[CaseResult],
) -> TaskComparison:
    """Both result lists must hold the same case ids (the caller restricts them first)."""
    with gc_paused():
        return _compare_task(task_id, agg_a, agg_b, results_a, results_b)


def _compare_task(
    task_id: str,
    agg_a: TaskAggregate,
    agg_b: TaskAggregate,
    results_a: Sequence[CaseResult],
    results_b: Sequence[CaseResult],
) -> TaskComparison:
    by_id_b = {r.case_id: r for r in results_b}
    comparison = TaskComparison(task_id, len(results_a), metric_deltas(agg_a.scores, agg_b.scores))
    for key, values in agg_a.strata.items():
        other = agg_b.strata.get(key, {})
        comparison.strata[key] = {v: metric_deltas(s, other[v]) for v, s in values.items() if v in other}
    observations: dict[str, list[Observation]] = {}
    changes = comparison.changes
    isfinite = math.isfinite
    for ra in results_a:
        scores_b = by_id_b[ra.case_id].scores
        meta = ra.metadata
        for scorer, sa in ra.scores.items():
            sb = scores_b.get(scorer)
            if sb is None:
                continue
            va, vb = sa.value, sb.value
            if va != va or vb != vb:  # NaN: not scored in one of the runs
                continue
            if isfinite(va) and isfinite(vb):
                observations.setdefault(scorer, []).append((meta, va, vb))
            if va != vb or sa.label != sb.label:
                changes.append(CaseChange(ra.case_id, scorer, sa.label, sb.label, va, vb, dict(meta)))
    for scorer, obs in observations.items():
        xa, xb = _columns(obs)
        if is_binary_values(xa, xb):
            comparison.tests.append(McNemar(scorer, *mcnemar_exact_values(xa, xb)))
    strata_keys = [k for k in agg_a.strata if k in agg_b.strata]
    comparison.paired = paired_tests(observations, strata_keys)
    return comparison
