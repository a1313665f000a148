"""The combined score: one comparable headline with its parts kept visible and nothing dropped silently.

**Which metrics enter.** ``metric_categories.yaml`` maps metric keys to categories. *Every* metric of a
task whose key is mapped to a category with a weight enters that category, whichever scorer emits it (a
DDx task gives ``recall`` to diagnostics, ``diagnostic_safety`` and ``system_safety_coverage`` to safety,
``clinical_reasoning_quality`` to communication), provided it is a **mean of per-case values**: the metric
object says how each case contributes (``case_values(column)``: one value per case, NaN where the case
does not count, whose NaN-skipping mean is the metric's task value). A mapped metric without per-case
values (a pooled ratio such as ``recall_micro``, a percentile, a count) cannot be resampled by case and
is left out with a warning.

**Scale.** Values must lie in [0, 1] (rates, recalls, per-case means of [0, 1] scores). A metric on
another scale enters only with bounds given in the categories file (``metric: {category: c, bounds: [L,
H]}``), min-max normalised ``x' = (x - L) / (H - L)`` (a value outside [L, H] refuses the metric);
otherwise a value outside [0, 1] refuses it with a warning. Metrics listed under ``refused`` in the
packaged file (TempoScore: 1 to 2.5 per debate phase and unbounded for independent differentials, and a
description of the discussion rather than a quality) may not be mapped at all.

**Formula**, for task t with per-case values x_{i,m} of each entering metric m (NaN skipped)::

    M_m        = mean_i x_{i,m}                       (the metric's task value, normalised)
    v_t,k      = (1/|K_k|) sum_{m in K_k} M_m         K_k: the entering metrics of category k with a value
    combined_t = sum_k (w_k / Z_t) v_t,k,   Z_t = sum of the weights of the categories present
                 (renormalised; with ``renormalize: false``, Z = the sum of all weights, so a missing
                 category counts as 0)
    overall    = mean of combined_t over the tasks where it can be computed

Each metric weighs the same within its category, each category by its weight. A category with a weight
and no entering metric in a task is a **warning** (``CombinedTask.warnings``: in the run's warnings, so in
the console and every report), and an error with ``strict``.

``<name>_ci`` is a percentile bootstrap over cases (seeded): cases are resampled with replacement and every
M_m, v_t,k and combined_t recomputed from the resampled per-case values. When the resamples have no
spread (every case the same), the interval is ``clineval.metrics.intervals.constant_interval`` of the
point with n = the task's cases: never [x, x].
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clineval.core import CaseResult, MetricValue
from clineval.core.helpers.columns import TaskColumns, columns_of, kept_breakdown_keys
from clineval.core.helpers.safe_yaml import safe_load
from clineval.core.protocols import Scorer
from clineval.metrics.intervals import constant_interval

_CHUNK_CELLS = 1 << 22  # cells of resampled values drawn at once (a million-case task: 4 resamples)
UNIT = (0.0, 1.0)

if TYPE_CHECKING:  # numpy is imported by the functions that compute: a run without a combined score, and
    import numpy as np  # the CLI's start-up, never import it


@dataclass(frozen=True)
class CategoryMap:
    """``categories`` metric -> category; ``bounds`` metric -> (L, H) to min-max normalise; ``refused``
    metric -> why it may never enter."""

    categories: Mapping[str, str]
    bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    refused: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CombinedSpec:
    weights: Mapping[str, float]
    name: str = "combined_score"
    renormalize: bool = True
    n_resamples: int = 1000
    seed: int = 0
    categories: Mapping[str, str] = field(default_factory=dict)
    bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    strict: bool = False  # a weighted category without a metric in a task is an error, not a warning

    def __post_init__(self) -> None:
        if not self.weights or any(w < 0 or not math.isfinite(w) for w in self.weights.values()):
            raise ValueError(f"combined-score weights must be finite and >= 0, got {dict(self.weights)}")
        if sum(self.weights.values()) <= 0:
            raise ValueError("combined-score weights must not all be 0")
        known = sorted(set(self.categories.values()))
        unknown = [k for k in self.weights if k not in known]
        if self.categories and unknown:  # a typo would silently weigh nothing (its category is never present)
            raise ValueError(
                f"unknown categor{'y' if len(unknown) == 1 else 'ies'} {', '.join(map(repr, unknown))} "
                f"in the weights; known categories: {', '.join(known)}"
            )


def _packaged_text() -> str:
    return (resources.files("clineval.metrics") / "data" / "metric_categories.yaml").read_text(
        encoding="utf-8"
    )


def _parse(text: str, where: str) -> tuple[dict[str, Any], dict[str, str]]:
    data = safe_load(text, path=where) or {}  # refuses aliases, odd tags
    mapping = data.get("categories") if isinstance(data, dict) else None
    if not isinstance(mapping, dict):
        raise ValueError(f"{where}: expected a mapping under 'categories'")
    refused = data.get("refused") or {}
    if not isinstance(refused, dict):
        raise ValueError(f"{where}: 'refused' must map metric names to the reason")
    return {str(k): v for k, v in mapping.items()}, {str(k): str(v) for k, v in refused.items()}


def _bounds(metric: str, value: Any, where: str) -> tuple[float, float]:
    ok = isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float) for v in value)
    if not ok or not float(value[0]) < float(value[1]):
        raise ValueError(
            f"{where}: {metric}: bounds must be [low, high] numbers with low < high, got {value!r}"
        )
    return float(value[0]), float(value[1])


def load_category_map(path: str | Path | None = None) -> CategoryMap:
    """The packaged mapping, or the user's file (with the packaged ``refused`` list always applied).

    An entry is ``metric: category`` or ``metric: {category: c, bounds: [L, H]}``."""
    where = str(path or "metric_categories.yaml")
    raw, refused = _parse(
        Path(path).read_text(encoding="utf-8") if path is not None else _packaged_text(), where
    )
    if path is not None:
        refused = {**_parse(_packaged_text(), "metric_categories.yaml")[1], **refused}
    categories: dict[str, str] = {}
    bounds: dict[str, tuple[float, float]] = {}
    for metric, entry in raw.items():
        if metric in refused:
            raise ValueError(f"{where}: {metric} cannot enter the combined score: {refused[metric]}")
        if isinstance(entry, dict):
            if set(entry) - {"category", "bounds"} or "category" not in entry:
                raise ValueError(f"{where}: {metric}: expected {{category: NAME, bounds: [low, high]}}")
            categories[metric] = str(entry["category"])
            if entry.get("bounds") is not None:
                bounds[metric] = _bounds(metric, entry["bounds"], where)
        else:
            categories[metric] = str(entry)
    return CategoryMap(categories, bounds, refused)


def load_categories(path: str | Path | None = None) -> dict[str, str]:
    """Metric key -> category, from the packaged file or the user's."""
    return dict(load_category_map(path).categories)


def parse_weights(text: str) -> dict[str, float]:
    """``diagnostics=0.4,safety=0.3`` -> {"diagnostics": 0.4, "safety": 0.3}."""
    weights: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"weight {part!r} is not category=number")
        weights[key.strip()] = float(value)
    return weights


@dataclass
class CombinedTask:
    """One task's combined score: ``scores`` (name, name_ci, name[category]), the metrics that entered
    each category, the weighted categories with none, the metrics left out (with why), and the warnings."""

    scores: dict[str, MetricValue]
    entered: dict[str, list[str]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _combine(means: np.ndarray, groups: Sequence[int], weights: np.ndarray, renormalize: bool) -> np.ndarray:
    """Combined score per row of ``means`` (rows: resamples; columns: metrics mapped to category groups)."""
    import numpy as np

    cat_values = np.full((means.shape[0], len(weights)), np.nan)
    for k in range(len(weights)):
        cols = [i for i, g in enumerate(groups) if g == k]
        if cols:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a category with no value in a resample
                cat_values[:, k] = np.nanmean(means[:, cols], axis=1) if len(cols) > 1 else means[:, cols[0]]
    present = ~np.isnan(cat_values)
    z = (present * weights).sum(axis=1) if renormalize else np.full(means.shape[0], weights.sum())
    total = np.where(present, cat_values * weights, 0.0).sum(axis=1)
    with np.errstate(all="ignore"):
        return np.where((z > 0) & present.any(axis=1), total / z, np.nan)


def _case_values(
    columns: TaskColumns, scorers: Sequence[Scorer], spec: CombinedSpec, found: CombinedTask
) -> list[tuple[str, int, np.ndarray]]:
    """``(metric key, category index, per-case values over the task's cases)`` of every entering metric;
    the mapped metrics that cannot enter go to ``found.left_out``."""
    import numpy as np

    cats = list(spec.weights)
    n = len(columns)
    entering: list[tuple[str, int, np.ndarray]] = []
    for scorer in scorers:
        column = columns.scores.get(scorer.name)
        for metric in scorer.metrics:
            per_case = getattr(metric, "case_values", None)
            names = [metric.name] if not callable(per_case) else []
            values: Mapping[str, np.ndarray] = per_case(column) if callable(per_case) and column else {}
            for key in names:  # mapped, but no per-case values to resample
                if spec.weights.get(spec.categories.get(key, ""), 0) > 0:
                    found.left_out[key] = "not a mean of per-case values: it cannot be resampled by case"
            for key, case in values.items():
                category = spec.categories.get(key)
                if category is None or spec.weights.get(category, 0) <= 0:
                    continue
                full = np.full(n, np.nan)
                full[columns.rows[scorer.name]] = case
                why, normalised = _normalised(key, full, spec.bounds.get(key))
                if why is not None:
                    found.left_out[key] = why
                elif not np.isnan(normalised).all():
                    entering.append((key, cats.index(category), normalised))
    return entering


def _normalised(
    key: str, values: np.ndarray, bounds: tuple[float, float] | None
) -> tuple[str | None, np.ndarray]:
    """``(why refused or None, values on [0, 1])``: min-max with ``bounds``, else as they are."""
    import numpy as np

    low, high = bounds or UNIT
    finite = values[~np.isnan(values)]
    if finite.size and (finite.min() < low or finite.max() > high):
        seen = f"values from {finite.min():g} to {finite.max():g}"
        if bounds is None:
            return f"{seen}, not on [0, 1]: give its bounds in the categories file to normalise it", values
        return f"{seen}, outside its bounds [{low:g}, {high:g}]", values
    return None, (values - low) / (high - low)


def combined_for_task(
    results: Sequence[CaseResult], scorers: Sequence[Scorer], spec: CombinedSpec
) -> CombinedTask:
    """:func:`combined_for_columns` over one task's results."""
    keep = {s.name: kept_breakdown_keys(s.metrics) for s in scorers}
    return combined_for_columns(columns_of(results, keep, ()), scorers, spec)


def combined_for_columns(
    columns: TaskColumns, scorers: Sequence[Scorer], spec: CombinedSpec, task_id: str = ""
) -> CombinedTask:
    """The combined score of one task (module docstring)."""
    found = CombinedTask(scores={spec.name: math.nan, f"{spec.name}_ci": [math.nan, math.nan]})
    n = len(columns)
    entering = _case_values(columns, scorers, spec, found) if n else []
    cats = list(spec.weights)
    for key, group, _ in entering:
        found.entered.setdefault(cats[group], []).append(key)
    found.missing = [c for c in cats if spec.weights[c] > 0 and c not in found.entered]
    found.warnings = _warnings(spec, task_id, found)
    if not entering:
        return found
    import numpy as np

    values = np.column_stack([v for _, _, v in entering])
    groups = [g for _, g, _ in entering]
    weights = np.array([spec.weights[c] for c in cats], dtype=float)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(values, axis=0)[None, :]
    point = float(_combine(means, groups, weights, spec.renormalize)[0])
    found.scores[spec.name] = point
    found.scores[f"{spec.name}_ci"] = _bootstrap(values, groups, weights, spec, point)
    for g in sorted(set(groups)):
        cols = [i for i, gg in enumerate(groups) if gg == g]
        found.scores[f"{spec.name}[{cats[g]}]"] = float(np.mean(means[0, cols]))
    return found


def _bootstrap(
    values: np.ndarray, groups: Sequence[int], weights: np.ndarray, spec: CombinedSpec, point: float
) -> list[float]:
    import numpy as np

    n = values.shape[0]
    rng = np.random.default_rng(spec.seed)
    boot_means = np.empty((spec.n_resamples, values.shape[1]))  # resamples x metrics
    rows = max(1, _CHUNK_CELLS // (n * values.shape[1]))  # resamples drawn at once: bounded memory
    for start in range(0, spec.n_resamples, rows):
        stop = min(spec.n_resamples, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample with no scorable case: NaN, dropped
            boot_means[start:stop] = np.nanmean(values[idx], axis=1)
    boot = _combine(boot_means, groups, weights, spec.renormalize)
    boot = boot[~np.isnan(boot)]
    if not boot.size or not math.isfinite(point):
        return [math.nan, math.nan]
    lo, hi = float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))
    if hi > lo:
        return [lo, hi]
    return list(constant_interval(point, n))  # no spread: never [x, x]


def _warnings(spec: CombinedSpec, task_id: str, found: CombinedTask) -> list[str]:
    where = f"{spec.name}: task {task_id}" if task_id else spec.name
    lines = [
        f"{where}: {key} left out ({spec.categories.get(key)}): {why}" for key, why in found.left_out.items()
    ]
    if found.missing:
        named = ", ".join(f"{c} (weight {spec.weights[c]:g})" for c in found.missing)
        if not found.entered:
            lines.append(f"{where}: no metric for any weighted category ({named}): no score")
        else:
            effect = (
                f"the score is renormalised over {', '.join(found.entered)}"
                if spec.renormalize
                else "they count as 0 (renormalize: false)"
            )
            plural = "ies" if len(found.missing) > 1 else "y"
            lines.append(f"{where}: no metric for the weighted categor{plural} {named}: {effect}")
    return lines


def overall_combined(task_values: Sequence[MetricValue]) -> float:
    """Mean of combined_t over the tasks where it could be computed (NaN if none)."""
    usable = [float(v) for v in task_values if isinstance(v, int | float) and math.isfinite(v)]
    return math.fsum(usable) / len(usable) if usable else math.nan
