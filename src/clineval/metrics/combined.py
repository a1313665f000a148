"""The combined score: one comparable headline with its parts kept visible.

For task t with categories k present (a category is present when one of the task's scorers has a primary
metric mapped to k in ``metric_categories.yaml``)::

    v_t,k      = mean over those scorers of their per-case mean value (= their primary metric:
                 accuracy, recall, type_aware_accuracy, pass rates, guideline_adherence, ...)
    combined_t = sum_k (w_k / Z_t) * v_t,k,   Z_t = sum of the weights of the present categories
                 (renormalised; with ``renormalize: false``, Z = the sum of all weights, so a missing
                 category counts as 0)
    overall    = mean of combined_t over the tasks where it can be computed

``<name>_ci`` is a percentile bootstrap over cases (seeded): cases are resampled with replacement and
combined_t recomputed from the resampled per-case values.
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
from clineval.core.columns import TaskColumns, columns_of
from clineval.core.safe_yaml import safe_load

_CHUNK_CELLS = 1 << 22  # cells of resampled values drawn at once (a million-case task: 4 resamples)

if TYPE_CHECKING:  # numpy is imported by the functions that compute: a run without a combined score, and
    import numpy as np  # the CLI's start-up, never import it


@dataclass(frozen=True)
class CombinedSpec:
    weights: Mapping[str, float]
    name: str = "combined_score"
    renormalize: bool = True
    n_resamples: int = 1000
    seed: int = 0
    categories: Mapping[str, str] = field(default_factory=dict)

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


def load_categories(path: str | Path | None = None) -> dict[str, str]:
    """Metric key -> category, from the packaged file or the user's."""
    text = (
        Path(path).read_text(encoding="utf-8")
        if path is not None
        else (resources.files("clineval.metrics") / "data" / "metric_categories.yaml").read_text(
            encoding="utf-8"
        )
    )
    data = safe_load(text, path=path or "metric_categories.yaml") or {}  # refuses aliases, odd tags
    mapping = data.get("categories") if isinstance(data, dict) else None
    if not isinstance(mapping, dict):
        raise ValueError(f"{path or 'metric_categories.yaml'}: expected a mapping under 'categories'")
    return {str(k): str(v) for k, v in mapping.items()}


def parse_weights(text: str) -> dict[str, float]:
    """``diagnostics=0.4,safety=0.3`` -> {"diagnostics": 0.4, "safety": 0.3}."""
    weights: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"weight {part!r} is not category=number")
        weights[key.strip()] = float(value)
    return weights


def _combine(means: np.ndarray, groups: Sequence[int], weights: np.ndarray, renormalize: bool) -> np.ndarray:
    """Combined score per row of ``means`` (rows: resamples; columns: scorers mapped to category groups)."""
    import numpy as np

    cat_values = np.full((means.shape[0], len(weights)), np.nan)
    for k in range(len(weights)):
        cols = [i for i, g in enumerate(groups) if g == k]
        if cols:
            with np.errstate(all="ignore"):
                cat_values[:, k] = np.nanmean(means[:, cols], axis=1) if len(cols) > 1 else means[:, cols[0]]
    present = ~np.isnan(cat_values)
    z = (present * weights).sum(axis=1) if renormalize else np.full(means.shape[0], weights.sum())
    total = np.where(present, cat_values * weights, 0.0).sum(axis=1)
    with np.errstate(all="ignore"):
        return np.where((z > 0) & present.any(axis=1), total / z, np.nan)


def combined_for_task(
    results: Sequence[CaseResult], primary_metric: Mapping[str, str], spec: CombinedSpec
) -> dict[str, Any]:
    """:func:`combined_for_columns` over one task's results."""
    keep: dict[str, tuple[str, ...] | None] = {name: () for name in primary_metric}
    return combined_for_columns(columns_of(results, keep, ()), primary_metric, spec)


def combined_for_columns(
    columns: TaskColumns, primary_metric: Mapping[str, str], spec: CombinedSpec
) -> dict[str, Any]:
    """``{name: value, name_ci: [lo, hi], "name[category]": v_t,k ...}`` for one task.

    ``primary_metric`` maps each scorer name to the metric key its per-case values average to.
    """
    cats = list(spec.weights)
    chosen = [
        (s, cats.index(spec.categories[m]))
        for s, m in primary_metric.items()
        if spec.categories.get(m) in spec.weights
    ]
    nan_result: dict[str, Any] = {
        spec.name: math.nan,
        f"{spec.name}_ci": [math.nan, math.nan],
    }
    n = len(columns)
    if not chosen or not n:
        return nan_result
    import numpy as np

    values = columns.value_matrix([s for s, _ in chosen])
    groups = [g for _, g in chosen]
    weights = np.array([spec.weights[c] for c in cats], dtype=float)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a scorer with no scorable case: NaN
        means = np.nanmean(values, axis=0)[None, :]
    point = float(_combine(means, groups, weights, spec.renormalize)[0])
    rng = np.random.default_rng(spec.seed)
    boot_means = np.empty((spec.n_resamples, values.shape[1]))  # resamples x scorers
    rows = max(1, _CHUNK_CELLS // (n * values.shape[1]))  # resamples drawn at once: bounded memory
    for start in range(0, spec.n_resamples, rows):
        stop = min(spec.n_resamples, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample with no scorable case: NaN, dropped
            boot_means[start:stop] = np.nanmean(values[idx], axis=1)
    boot = _combine(boot_means, groups, weights, spec.renormalize)
    boot = boot[~np.isnan(boot)]
    ci = [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))] if boot.size else [math.nan] * 2
    per_cat = {
        f"{spec.name}[{cats[g]}]": float(np.nanmean(means[0, [i for i, gg in enumerate(groups) if gg == g]]))
        for g in sorted(set(groups))
    }
    return {spec.name: point, f"{spec.name}_ci": ci, **per_cat}


def overall_combined(task_values: Sequence[MetricValue]) -> float:
    """Mean of combined_t over the tasks where it could be computed (NaN if none)."""
    usable = [float(v) for v in task_values if isinstance(v, int | float) and math.isfinite(v)]
    return math.fsum(usable) / len(usable) if usable else math.nan
