"""The leaderboard: systems x datasets of each cell's stored headline metric, with mean rank and win rate.

Nothing is re-scored: a cell is the stored value and interval of the task's main metric (``accuracy``, else
its first metric with an interval: ``clineval.report.formatting.chart_metric``). A column is a dataset (its
format and content hash), so two tasks of one suite scoring two systems on the same file share a column.
Rank within a column: 1 = best (ties share the mean rank); a system's mean rank is over the columns it
has. Win rate: over every other system and every column both have, a higher value is a win, an equal one
half a win (HELM's "mean win rate").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from clineval.core import TaskAggregate
from clineval.report.formatting import chart_metric, fmt_interval, fmt_value, interval, is_number
from clineval.view.queries import RunRow
from clineval.view.render import system_label


@dataclass
class BoardRow:
    system: str
    run_id: str
    cells: dict[str, tuple[str, float | None, str]] = field(
        default_factory=dict
    )  # column -> (task, value, text)
    mean_rank: float | None = None
    win_rate: float | None = None


@dataclass(frozen=True)
class Board:
    columns: list[tuple[str, str]]  # (key, title)
    rows: list[BoardRow]


def _column(task: Any) -> tuple[str, str]:
    path = task.dataset.args.get("path")
    title = PurePath(str(path)).stem if path else str(task.dataset.type)
    return f"{task.dataset.type}:{task.dataset.content_hash or path or task.id}", title


def readable(name: str) -> str:
    """``medqa_test_first200`` -> ``medqa test first200``: a file or metric name as words."""
    return " ".join(name.replace("_", " ").replace("-", " ").split())


def build_board(runs: Sequence[RunRow]) -> Board:
    columns: dict[str, str] = {}
    rows: list[BoardRow] = []
    for run in runs:
        for task in run.suite.tasks:
            raw = run.aggregates.get(task.id)
            if raw is None:
                continue
            scores = TaskAggregate.model_validate(raw).scores
            metric = chart_metric(scores)
            if metric is None:
                continue
            key, title = _column(task)
            columns.setdefault(key, f"{readable(title)}\n{readable(metric)} ({task.dataset.type} format)")
            value = scores.get(metric)
            number = float(value) if isinstance(value, int | float) and is_number(value) else None
            text = f"{fmt_value(metric, value)} {fmt_interval(metric, interval(scores, metric))}".strip()
            name = system_label(task)
            row = next((r for r in rows if r.system == name and r.run_id == run.run_id), None)
            if row is None:
                row = BoardRow(system=name, run_id=run.run_id)
                rows.append(row)
            row.cells[key] = (task.id, number, text)
    _rank(rows, list(columns))
    rows.sort(key=lambda r: (r.mean_rank is None, r.mean_rank or 0.0, r.system))
    return Board(columns=list(columns.items()), rows=rows)


def _values(rows: Sequence[BoardRow], column: str) -> list[tuple[BoardRow, float]]:
    return [(r, v) for r in rows if (v := r.cells.get(column, ("", None, ""))[1]) is not None]


def _rank(rows: Sequence[BoardRow], columns: Sequence[str]) -> None:
    ranks: dict[int, list[float]] = {id(r): [] for r in rows}
    wins: dict[int, list[float]] = {id(r): [] for r in rows}
    for column in columns:
        present = _values(rows, column)
        for row, value in present:
            better = sum(1 for _, v in present if v > value)
            equal = sum(1 for _, v in present if v == value)
            ranks[id(row)].append(better + (equal + 1) / 2)
            for other, v in present:
                if other is not row:
                    wins[id(row)].append(1.0 if value > v else 0.5 if value == v else 0.0)
    for row in rows:
        r, w = ranks[id(row)], wins[id(row)]
        row.mean_rank = sum(r) / len(r) if r else None
        row.win_rate = sum(w) / len(w) if w else None


def cell(row: BoardRow, column: str) -> Mapping[str, Any] | None:
    found = row.cells.get(column)
    return {"task": found[0], "text": found[2]} if found else None
