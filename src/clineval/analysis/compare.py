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
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

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
from clineval.core.helpers.columns import TaskColumns, columns_of
from clineval.core.helpers.id_index import HashIndex
from clineval.metrics import MISSING_STRATUM

__all__ = [
    "compare_columns",
    "compare_task",
    "gc_paused",
    "mcnemar_exact",
    "metric_deltas",
    "paired_tests",
    "paired_tests_of",
]

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
    paired: dict[str, PairedValues] = {}
    for scorer, obs in observations.items():
        xa, xb = _columns(obs)
        strata = {key: _objects([meta.get(key) for meta, _, _ in obs]) for key in strata_keys}
        paired[scorer] = PairedValues(xa, xb, strata)
    return paired_tests_of(paired, strata_keys)


@dataclass(frozen=True)
class PairedValues:
    """One scorer's values in A and B on the cases both runs scored, and their stratum values per key."""

    a: NDArray[np.float64]
    b: NDArray[np.float64]
    strata: Mapping[str, NDArray[np.object_]]


def paired_tests_of(paired: Mapping[str, PairedValues], strata_keys: Sequence[str] = ()) -> list[PairedTest]:
    """:func:`paired_tests` on values already in columns."""
    raw: list[PairedTest] = []
    for scorer, values in paired.items():
        if not values.a.shape[0]:
            continue
        raw.append(_paired_test(scorer, None, None, values.a, values.b))
        for key in strata_keys:
            groups: dict[str, list[int]] = {}
            for i, found in enumerate(values.strata[key].tolist()):
                groups.setdefault(_stratum(found), []).append(i)
            for value in sorted(groups):
                rows = np.asarray(groups[value], dtype=np.intp)
                raw.append(_paired_test(scorer, key, value, values.a[rows], values.b[rows]))
    adjusted = holm([t.p for t in raw])
    return [replace(t, p_holm=p) for t, p in zip(raw, adjusted, strict=True)]


def _objects(items: Sequence[object]) -> NDArray[np.object_]:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def compare_task(
    task_id: str,
    agg_a: TaskAggregate,
    agg_b: TaskAggregate,
    results_a: Sequence[CaseResult],
    results_b: Sequence[CaseResult],
) -> TaskComparison:
    """Both result lists must hold the same case ids (the caller restricts them first); changed cases
    carry the whole metadata of their case."""
    keep: dict[str, tuple[str, ...] | None] = {n: () for r in (*results_a, *results_b) for n in r.scores}
    keys = list(dict.fromkeys(k for r in results_a for k in r.metadata))
    with gc_paused():
        return compare_columns(
            task_id, agg_a, agg_b, columns_of(results_a, keep, keys), columns_of(results_b, keep, keys)
        )


Aligned = tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.object_]]


def _aligned(columns: TaskColumns, scorer: str, order: NDArray[np.intp]) -> Aligned:
    """``(values, present)`` of one scorer at task positions ``order`` (NaN, False where not scored)."""
    n = len(columns)
    values = np.full(n, np.nan)
    present = np.zeros(n, dtype=bool)
    labels = np.full(n, None, dtype=object)
    column = columns.scores.get(scorer)
    if column is not None:
        rows = columns.rows[scorer]
        values[rows], present[rows], labels[rows] = column.values, True, column.labels
    return values[order], present[order], labels[order]


def compare_columns(
    task_id: str, agg_a: TaskAggregate, agg_b: TaskAggregate, cols_a: TaskColumns, cols_b: TaskColumns
) -> TaskComparison:
    """:func:`compare_task` on the columns of both runs (the same case ids, in any order); changed cases
    carry the metadata the columns kept (the stratification keys and ``split``)."""
    order_b = HashIndex(cols_b.case_ids).positions(cols_a.case_ids)
    if (order_b < 0).any():
        missing = cols_a.case_ids[int(np.flatnonzero(order_b < 0)[0])]
        raise ValueError(f"case {missing!r} is not in both runs' columns (restrict them first)")
    order_a = np.arange(len(cols_a), dtype=np.intp)
    comparison = TaskComparison(task_id, len(cols_a), metric_deltas(agg_a.scores, agg_b.scores))
    for key, by_value in agg_a.strata.items():
        other = agg_b.strata.get(key, {})
        comparison.strata[key] = {v: metric_deltas(s, other[v]) for v, s in by_value.items() if v in other}
    strata_keys = [k for k in agg_a.strata if k in agg_b.strata]
    scorers = list(cols_a.scores)
    paired: dict[str, PairedValues] = {}
    changed_rows: list[NDArray[np.intp]] = []
    changed_scorers: list[NDArray[np.intp]] = []
    per_scorer: list[tuple[Aligned, Aligned]] = []
    for j, scorer in enumerate(scorers):
        va, pa, la = _aligned(cols_a, scorer, order_a)
        vb, pb, lb = _aligned(cols_b, scorer, order_b)
        both = pa & pb & ~np.isnan(va) & ~np.isnan(vb)  # NaN: not scored in one of the runs
        observed = both & np.isfinite(va) & np.isfinite(vb)
        if observed.any():
            rows = np.flatnonzero(observed)
            strata = {key: cols_a.metadata.get(key, _none(len(cols_a)))[rows] for key in strata_keys}
            paired[scorer] = PairedValues(va[rows], vb[rows], strata)
        changed = np.flatnonzero(both & ((va != vb) | (la != lb)))
        changed_rows.append(changed)
        changed_scorers.append(np.full(changed.shape[0], j, dtype=np.intp))
        per_scorer.append(((va, pa, la), (vb, pb, lb)))
    if changed_rows:
        rows_all, scorer_all = np.concatenate(changed_rows), np.concatenate(changed_scorers)
        ordered = np.lexsort((scorer_all, rows_all))  # case by case, scorers in their order, as before
        meta_keys = list(cols_a.metadata)
        for row, j in zip(rows_all[ordered].tolist(), scorer_all[ordered].tolist(), strict=True):
            (va, _, la), (vb, _, lb) = per_scorer[j]
            meta = {k: v for k in meta_keys if (v := cols_a.metadata[k][row]) is not None}
            comparison.changes.append(
                CaseChange(
                    cols_a.case_ids[row], scorers[j], la[row], lb[row], float(va[row]), float(vb[row]), meta
                )
            )
    for scorer, values in paired.items():
        if is_binary_values(values.a, values.b):
            comparison.tests.append(McNemar(scorer, *mcnemar_exact_values(values.a, values.b)))
    comparison.paired = paired_tests_of(paired, strata_keys)
    return comparison


def _none(n: int) -> NDArray[np.object_]:
    return np.full(n, None, dtype=object)
