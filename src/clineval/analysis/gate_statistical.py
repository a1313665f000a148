"""The gate's statistical mode: a drop counts only when it is significant or clearly below a margin.

The gating rows are those of the strict rule (:func:`clineval.analysis.gate.gate_rows`). A gating row
whose metric is a mean of per-case values (:func:`per_case_values`) is decided on the paired per-case
values of the baseline's run and the candidate: delta = mean(candidate - baseline), a 95% paired
bootstrap interval ``[lo, hi]`` of it, an exact McNemar test (0/1 values) or a sign-flip permutation test
(otherwise), Holm-adjusted across every such test of the gate. With ``worse`` = delta for a
higher-is-better metric and -delta for a lower-is-better one, it is a regression when ``worse < 0`` AND
(``p_holm < alpha`` OR the interval of ``worse`` lies entirely below ``-margin``). Any other gating
metric (not a per-case mean, e.g. ``macro_f1`` when named) keeps the strict rule and says so in its note.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from clineval.analysis.gate import CONDITION, GateResult, GateRow, gate_rows, stored_choice
from clineval.analysis.gate_roles import RoleChoice
from clineval.analysis.paired import (
    holm,
    is_binary,
    mcnemar_exact,
    paired_bootstrap_ci,
    paired_permutation_test,
)
from clineval.core.protocols import Metric, Scorer
from clineval.core.score import CaseResult, Score
from clineval.metrics.basic import Accuracy, LabelRate
from clineval.metrics.breakdown import BreakdownRate
from clineval.metrics.macro import MacroMean

ALPHA = 0.05
MARGIN = 0.0
CONFIDENCE = 0.95
SEED = 0
_TOLERANCE = 1e-12

PerCase = Callable[[Score], float | None]  # one case's value of a metric; None: the case does not count


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _label_rate(m: LabelRate) -> PerCase:
    return lambda s: None if math.isnan(s.value) else float(s.label == m.label)


def _breakdown_rate(m: BreakdownRate) -> PerCase:
    return lambda s: None if (v := s.breakdown.get(m.key)) is None else float(bool(v))


def _macro_mean(m: MacroMean) -> PerCase:
    return lambda s: _finite(s.breakdown.get(m.key))


# metric class -> how one case's value is read (each class's ``compute`` is the mean of these values)
PER_CASE: dict[type, Callable[[Any], PerCase]] = {
    Accuracy: lambda m: lambda s: _finite(s.value),
    LabelRate: _label_rate,
    BreakdownRate: _breakdown_rate,
    MacroMean: _macro_mean,
}


def per_case_values(scorers: Sequence[Scorer]) -> dict[str, tuple[str, PerCase]]:
    """Aggregation key (bare and ``<scorer>.<key>``) -> (scorer name, per-case value) for every metric
    that is a per-case mean: each scorer's primary metric (its per-case ``value``, as
    ``clineval.metrics.combine.primary_metric``) and the metrics of the classes in :data:`PER_CASE`."""
    found: dict[str, tuple[str, PerCase]] = {}
    for scorer in scorers:
        metrics: list[tuple[str, PerCase]] = []
        for metric in scorer.metrics:
            reader = _reader(metric)
            if reader is not None:
                metrics.append((metric.name, reader))
        primary = str(getattr(scorer, "primary_metric", scorer.metrics[0].name))
        metrics.append((primary, lambda s: _finite(s.value)))
        for name, reader in metrics:
            found[name] = found[f"{scorer.name}.{name}"] = (scorer.name, reader)
    return found


def _reader(metric: Metric) -> PerCase | None:
    make = PER_CASE.get(type(metric))
    return None if make is None else make(metric)


def _pairs(
    base: Mapping[str, CaseResult],
    cand: Mapping[str, CaseResult],
    scorer: str,
    read: PerCase,
    condition: str | None,
) -> list[tuple[float, float]]:
    pairs: list[tuple[float, float]] = []
    for case_id in sorted(base):
        rb, rc = base[case_id], cand[case_id]
        if condition is not None and str(rb.metadata.get(CONDITION)) != condition:
            continue
        sb, sc = rb.scores.get(scorer), rc.scores.get(scorer)
        if sb is None or sc is None:
            continue
        vb, vc = read(sb), read(sc)
        if vb is not None and vc is not None:
            pairs.append((vb, vc))
    return pairs


def _test(pairs: Sequence[tuple[float, float]]) -> tuple[float, tuple[float, float], float, str]:
    """``(delta, ci, raw p, test name)`` of candidate - baseline."""
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    delta = sum(b) / len(b) - sum(a) / len(a)
    ci = paired_bootstrap_ci(a, b, seed=SEED, confidence=CONFIDENCE)
    if is_binary(pairs):
        return delta, ci, mcnemar_exact(pairs)[2], "mcnemar_exact"
    return delta, ci, paired_permutation_test(a, b, seed=SEED), "permutation"


def _decide(
    row: GateRow, delta: float, ci: tuple[float, float], p_holm: float, test: str, alpha: float, margin: float
) -> GateRow:
    sign = -1.0 if row.direction == "lower" else 1.0
    worse_hi = max(sign * ci[0], sign * ci[1])  # upper bound of the interval of the improvement
    significant = p_holm < alpha
    below = worse_hi < -margin
    regressed = sign * delta < -_TOLERANCE and (significant or below)
    edge = f"-{margin:g}" if margin else "0"
    limit = f"CI upper < {edge}" if sign > 0 else f"CI lower > {edge.lstrip('-')}"
    why = [w for w, on in ((f"p_holm < {alpha:g}", significant), (limit, below)) if on]
    note = f"{test}, CI [{ci[0]:+.4f}, {ci[1]:+.4f}]" + (f": {' and '.join(why)}" if regressed else "")
    return replace(row, status="fail" if regressed else "pass", p=p_holm, ci=ci, note=note)


def evaluate_statistical(
    baseline: Mapping[str, Any],
    candidate: Mapping[str, Any],
    base_results: Mapping[str, Mapping[str, CaseResult]],
    cand_results: Mapping[str, Mapping[str, CaseResult]],
    scorers: Mapping[str, Sequence[Scorer]],
    *,
    run_id: str,
    name: str,
    version: int,
    tenant: str,
    alpha: float = ALPHA,
    margin: float = MARGIN,
    choice: RoleChoice | None = None,
) -> GateResult:
    """Paired tests for per-case-mean gating metrics, the strict rule for the rest (module docstring).

    ``base_results[task]`` / ``cand_results[task]``: ``case id -> CaseResult`` of the baseline's run and of
    the candidate; both must hold the same case ids (the caller checks).
    """
    rows = gate_rows(baseline, candidate, choice if choice else stored_choice(baseline))
    tested: list[tuple[int, float, tuple[float, float], float, str]] = []
    for i, row in enumerate(rows):
        if row.role != "gate":
            continue
        found = per_case_values(scorers.get(row.task, ())).get(row.metric)
        pairs: list[tuple[float, float]] = []
        if found is not None and row.compared and row.candidate is not None and not math.isnan(row.candidate):
            condition = row.stratum.split("=", 1)[1] if row.stratum else None
            b_res, c_res = base_results.get(row.task, {}), cand_results.get(row.task, {})
            pairs = _pairs(b_res, c_res, *found, condition)
        if pairs:
            tested.append((i, *_test(pairs)))
        elif found is None:
            rows[i] = replace(row, note="strict rule: not a per-case mean")
        else:
            rows[i] = replace(row, note="strict rule: no paired values")
    adjusted = holm([p for _, _, _, p, _ in tested])
    for (i, delta, ci, _, test), p_holm in zip(tested, adjusted, strict=True):
        rows[i] = _decide(rows[i], delta, ci, p_holm, test, alpha, margin)
    return GateResult(run_id, name, version, tenant, "statistical", rows)
