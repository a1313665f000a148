"""Per-case columns of a run: what aggregation, compare, gate and reports need of each result, and no more.

A stored ``CaseResult`` is ~9 kB in memory (the output text, raw reply, explanations...); aggregating a
million of them does not fit a laptop. What a metric reads is one scorer's value, label and a few
breakdown keys, plus the case's failure and stratum values: ~100 bytes a case here. Each result is reduced
once, when it is written, to a **case summary** (a small JSON object, ``SUMMARY_VERSION``), and these
columns are built from the summaries by :class:`ColumnsBuilder`:

``{"v": 1, "f": failed, "e": error kind | null, "c": cached,
   "s": {scorer: [value | null (NaN), label | null, {kept breakdown keys} | null]},
   "m": {metadata key: value}, "x": {extension: data}}``

``x`` holds what other folds need (``clineval.analysis.case_summary``: degradation outcomes, token usage);
the builder hands it to them and keeps nothing of it.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from clineval.core.helpers.id_index import CompactIds
from clineval.core.score import CaseResult, Score

SUMMARY_VERSION = 1
MAX_INTERNED = 100_000  # distinct kept breakdowns shared between cases (see ColumnsBuilder)
MISSING_STRATUM = "(missing)"
_NO_BREAKDOWN: Mapping[str, Any] = {}


@dataclass(frozen=True)
class ScoreColumn:
    """One scorer's scores over some cases: ``values`` (NaN: not scorable), ``labels`` and, where a metric
    reads them, ``breakdowns`` (only the keys metrics declared in ``breakdown_keys``; None: none kept)."""

    values: NDArray[np.float64]
    labels: NDArray[np.object_]
    breakdowns: NDArray[np.object_] | None = None

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def take(self, rows: NDArray[np.intp] | NDArray[np.bool_]) -> ScoreColumn:
        kept = None if self.breakdowns is None else self.breakdowns[rows]
        return ScoreColumn(self.values[rows], self.labels[rows], kept)

    def scorable(self) -> NDArray[np.bool_]:
        return ~np.isnan(self.values)

    def breakdown(self, index: int) -> Mapping[str, Any]:
        found = None if self.breakdowns is None else self.breakdowns[index]
        return found if found is not None else _NO_BREAKDOWN

    @classmethod
    def from_scores(cls, scores: Sequence[Score], *, breakdowns: bool = True) -> ScoreColumn:
        """Scores as a column (each metric has one implementation, on columns; ``compute(scores)`` goes
        through this). ``breakdowns=False`` for metrics that read only values and labels."""
        labels = np.empty(len(scores), dtype=object)
        labels[:] = [s.label for s in scores]
        values = np.fromiter((s.value for s in scores), dtype=np.float64, count=len(scores))
        if not breakdowns:
            return cls(values, labels)
        kept = np.empty(len(scores), dtype=object)
        kept[:] = [s.breakdown for s in scores]
        return cls(values, labels, kept)

    def iter_breakdowns(self) -> Iterator[Mapping[str, Any]]:
        """The breakdown of each case in order (empty where none was kept)."""
        if self.breakdowns is None:
            for _ in range(len(self)):
                yield _NO_BREAKDOWN
            return
        for found in self.breakdowns.tolist():
            yield _NO_BREAKDOWN if found is None else found

    def scores(self) -> list[Score]:
        """The column as Score objects (no explanation): for metrics without a column method."""
        return [
            Score.model_construct(value=float(v), label=label, breakdown=dict(self.breakdown(i)))
            for i, (v, label) in enumerate(zip(self.values.tolist(), self.labels.tolist(), strict=True))
        ]


@dataclass
class TaskColumns:
    """The columns of one task's cases, in the order the store returned them.

    ``scores[name]`` covers only the cases the scorer scored (``rows[name]``: their positions among the
    task's cases), as aggregation skips a case without that scorer's score.
    """

    case_ids: CompactIds
    failed: NDArray[np.bool_]
    error_kinds: NDArray[np.object_]
    scores: dict[str, ScoreColumn]
    rows: dict[str, NDArray[np.intp]]
    metadata: dict[str, NDArray[np.object_]]

    def __len__(self) -> int:
        return len(self.case_ids)

    def take(self, rows: NDArray[np.intp]) -> TaskColumns:
        """The columns of the cases at positions ``rows`` (sorted ascending)."""
        scores: dict[str, ScoreColumn] = {}
        kept_rows: dict[str, NDArray[np.intp]] = {}
        mask = np.zeros(len(self.case_ids), dtype=bool)
        mask[rows] = True
        new_index = np.cumsum(mask) - 1
        for name, column in self.scores.items():
            inside = mask[self.rows[name]]
            scores[name] = column.take(inside)
            kept_rows[name] = new_index[self.rows[name][inside]].astype(np.intp)
        return TaskColumns(
            case_ids=self.case_ids.take(rows.tolist()),
            failed=self.failed[rows],
            error_kinds=self.error_kinds[rows],
            scores=scores,
            rows=kept_rows,
            metadata={key: values[rows] for key, values in self.metadata.items()},
        )

    def strata(self, key: str) -> dict[str, NDArray[np.intp]]:
        """``stratum value -> positions`` for a metadata key (None or absent: ``"(missing)"``), sorted."""
        values = self.metadata.get(key)
        if values is None:
            return {MISSING_STRATUM: np.arange(len(self.case_ids), dtype=np.intp)} if self.case_ids else {}
        groups: dict[str, list[int]] = {}
        for i, value in enumerate(values.tolist()):
            groups.setdefault(MISSING_STRATUM if value is None else str(value), []).append(i)
        return {value: np.asarray(groups[value], dtype=np.intp) for value in sorted(groups)}

    def value_matrix(self, scorers: Sequence[str]) -> NDArray[np.float64]:
        """cases x scorers per-case values (NaN where not scorable or not scored)."""
        matrix = np.full((len(self.case_ids), len(scorers)), np.nan)
        for j, name in enumerate(scorers):
            if name in self.scores:
                matrix[self.rows[name], j] = self.scores[name].values
        return matrix


Fold = Callable[[str, str, Mapping[str, Any]], None]  # (task_id, case_id, summary["x"])


class _TaskBuilder:
    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = tuple(keys)
        self.case_ids = CompactIds()  # ~15 bytes a case, not a ~55-byte str
        self.failed = array("b")
        self.error_kinds: list[str | None] = []
        self.values: dict[str, array[float]] = {}
        self.labels: dict[str, list[str | None]] = {}
        self.breakdowns: dict[str, list[Mapping[str, Any] | None]] = {}
        self.rows: dict[str, array[int]] = {}
        self.metadata: dict[str, list[object]] = {key: [] for key in self.keys}

    def add(
        self,
        case_id: str,
        summary: Mapping[str, Any],
        intern: Callable[[Any], Any],
        intern_breakdown: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> None:
        row = len(self.case_ids)
        self.case_ids.append(case_id)
        self.failed.append(1 if summary.get("f") else 0)
        self.error_kinds.append(intern(summary.get("e")))
        for name, (value, label, breakdown) in summary.get("s", {}).items():
            if name not in self.values:
                self.values[name], self.labels[name] = array("d"), []
                self.breakdowns[name], self.rows[name] = [], array("q")
            self.values[name].append(math.nan if value is None else float(value))
            self.labels[name].append(intern(label))
            self.breakdowns[name].append(intern_breakdown(breakdown) if breakdown else None)
            self.rows[name].append(row)
        meta = summary.get("m", {})
        for key in self.keys:
            self.metadata[key].append(intern(meta.get(key)))

    def build(self) -> TaskColumns:
        scores: dict[str, ScoreColumn] = {}
        for name, values in self.values.items():
            kept = self.breakdowns[name]
            scores[name] = ScoreColumn(
                np.frombuffer(values, dtype=np.float64).copy(),
                _objects(self.labels[name]),
                _objects(kept) if any(b is not None for b in kept) else None,
            )
        return TaskColumns(
            case_ids=self.case_ids,
            failed=np.frombuffer(self.failed, dtype=np.int8).astype(bool),
            error_kinds=_objects(self.error_kinds),
            scores=scores,
            rows={name: np.frombuffer(r, dtype=np.int64).astype(np.intp) for name, r in self.rows.items()},
            metadata={key: _objects(values) for key, values in self.metadata.items()},
        )


def _objects(items: Sequence[object]) -> NDArray[np.object_]:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


@dataclass
class ColumnsBuilder:
    """Builds :class:`TaskColumns` from case summaries added one at a time (memory: the columns only).

    ``metadata_keys[task]``: the metadata kept per case (stratification keys, ``split``); ``folds``: called
    with each summary's ``x`` (extensions), for totals that are not columns (degradation, token usage).
    """

    metadata_keys: Mapping[str, Sequence[str]]
    folds: Sequence[Fold] = ()
    _tasks: dict[str, _TaskBuilder] = field(default_factory=dict)
    _interned: dict[object, object] = field(default_factory=dict)
    _breakdowns: dict[tuple[tuple[str, Any], ...], dict[str, Any]] = field(default_factory=dict)

    def _intern(self, value: Any) -> Any:
        # stratum values and labels repeat: one object each, not one per case
        if isinstance(value, str):
            return sys.intern(value)
        if value is None or isinstance(value, bool | int | float):
            return value
        key = repr(value)
        return self._interned.setdefault(key, value)

    def _intern_breakdown(self, breakdown: dict[str, Any]) -> dict[str, Any]:
        # An MCQ breakdown kept for macro-F1 ({gold, extracted}) takes ~20 values over a million cases:
        # one dict each instead of a million (~250 MB). Unhashable values, or a table grown past
        # MAX_INTERNED (values that do not repeat), are kept as they are.
        if len(self._breakdowns) >= MAX_INTERNED:
            return breakdown
        try:
            key = tuple(sorted(breakdown.items()))
            return self._breakdowns.setdefault(key, breakdown)
        except TypeError:
            return breakdown

    def add(self, task_id: str, case_id: str, summary: Mapping[str, Any]) -> None:
        task = self._tasks.get(task_id)
        if task is None:
            task = self._tasks[task_id] = _TaskBuilder(self.metadata_keys.get(task_id, ()))
        task.add(case_id, summary, self._intern, self._intern_breakdown)
        extensions = summary.get("x") or {}
        for fold in self.folds:
            fold(task_id, case_id, extensions)

    def build(self) -> dict[str, TaskColumns]:
        return {task_id: task.build() for task_id, task in self._tasks.items()}

    def empty(self, task_id: str) -> TaskColumns:
        """The columns of a task with no stored case."""
        return _TaskBuilder(self.metadata_keys.get(task_id, ())).build()


def kept_breakdown_keys(metrics: Sequence[object]) -> tuple[str, ...] | None:
    """The breakdown keys a scorer's metrics read (their ``breakdown_keys``); None (keep the whole
    breakdown) when any metric does not declare them, so an undeclared metric still sees everything."""
    keys: list[str] = []
    for metric in metrics:
        declared = getattr(metric, "breakdown_keys", None)
        if declared is None:
            return None
        keys.extend(k for k in declared if k not in keys)
    return tuple(keys)


def summarize_scores(
    result: CaseResult, breakdown_keys: Mapping[str, tuple[str, ...] | None], metadata_keys: Sequence[str]
) -> dict[str, Any]:
    """The columns' part of a case summary (``v f e c s m``; see the module docstring)."""
    scores: dict[str, list[Any]] = {}
    for name, score in result.scores.items():
        keys = breakdown_keys.get(name)
        if keys is None:
            kept: dict[str, Any] | None = dict(score.breakdown) or None
        else:
            kept = {k: score.breakdown[k] for k in keys if k in score.breakdown} or None
        value = None if math.isnan(score.value) else score.value
        scores[name] = [value, score.label, kept]
    error = result.output.error
    meta = result.metadata
    return {
        "v": SUMMARY_VERSION,
        "f": result.output.failed,
        "e": error.kind if error is not None else None,
        "c": result.output.cached,
        "s": scores,
        "m": {key: meta[key] for key in metadata_keys if key in meta},
    }


def columns_of(
    results: Sequence[CaseResult],
    breakdown_keys: Mapping[str, tuple[str, ...] | None],
    metadata_keys: Sequence[str],
) -> TaskColumns:
    """The columns of one task's results (for callers that hold CaseResults)."""
    builder = ColumnsBuilder({"": metadata_keys})
    for result in results:
        builder.add("", result.case_id, summarize_scores(result, breakdown_keys, metadata_keys))
    return builder.build().get("") or builder.empty("")
