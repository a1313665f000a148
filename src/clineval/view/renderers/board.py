"""The leaderboard: systems x datasets of each cell's stored headline metric, ranked only like with like.

Nothing is re-scored: a cell is the stored value and interval of the task's main metric (``accuracy``, else
its first metric with an interval: ``clineval.report.formatting.chart_metric``).

**A column is one set of cases**: the dataset (format, content hash and non-file options), the sampling
(the suite's ``limit`` and ``seed`` when it had a limit), the MCQ selection step if any, the number of cases
``n`` the task scored, and the metric. Two systems in one column were scored on the same cases (matched: the
same file, the same seeded sample, the same n); a 50-case sample and a 1,273-case run are two columns. Its
header is the dataset's catalogue name (``view.dataset_names``), then ``n``, the sample seed and the metric;
headers are unique (a short content hash is added where two would read the same).

**Ranking only where systems meet.** A column is *shared* when at least two different systems
(``clineval.core.system_identity.system_key``) have a value in it. Rank within a shared column, among systems:
1 + the number of other systems with a higher value + half the number with an equal one (ties share the mean
rank; a system with several runs in the column counts once, each run with weight 1/runs); a row's mean rank
is over the shared columns it has. Win rate (HELM's "mean win rate"): over every other system and every
shared column both have, a higher value is a win, an equal one half a win. A row with no shared column is
listed **unranked**: a system alone on its dataset has nothing to be ranked against (an all-zero stand-in
alone in a column would otherwise rank 1).

Rows are (system, run); systems are named by ``clineval.core.system_identity.system_name`` (the model, else
the name its options give), with the prompt or a short hash added where two different systems would read
alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clineval.core import TaskAggregate, TaskSpec
from clineval.core.specs import canonical_json
from clineval.core.system_identity import system_groups, system_key
from clineval.report.formatting import chart_metric, fmt_interval, fmt_value, interval, is_number
from clineval.view.dataset_names import dataset_name
from clineval.view.queries import RunRow


@dataclass
class BoardRow:
    system: str
    run_id: str
    key: str = (
        ""  # clineval.core.system_identity.system_key: rows of one system never rank against each other
    )
    cells: dict[str, tuple[str, float | None, str]] = field(
        default_factory=dict
    )  # column -> (task, value, text)
    mean_rank: float | None = None
    win_rate: float | None = None
    n_ranked: int = 0  # shared columns the row is ranked on


@dataclass(frozen=True)
class Column:
    key: str
    name: str  # the dataset's catalogue name (or format: file stem)
    detail: str  # "n = 200 · accuracy", "n = 50 · seed 0 · accuracy" (a seeded sample)
    n: int | None
    seed: int | None  # the sample seed when the suite sampled (limit), else None
    shared: bool = False  # two different systems or more have a value here


@dataclass(frozen=True)
class Board:
    columns: list[Column]
    rows: list[BoardRow]

    @property
    def ranked(self) -> list[BoardRow]:
        return [r for r in self.rows if r.mean_rank is not None]

    @property
    def unranked(self) -> list[BoardRow]:
        return [r for r in self.rows if r.mean_rank is None]


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and is_number(value) else None


def _column(run: RunRow, task: TaskSpec, metric: str, n: int | None) -> tuple[str, Column, str]:
    """(key, column, content hash) of a task's cell."""
    data = task.dataset
    options = {k: v for k, v in data.args.items() if not isinstance(v, str)}  # strings: file paths, names
    identity = data.content_hash or canonical_json(data.args)
    sampled = run.suite.limit is not None
    seed = run.suite.seed if sampled else None
    selection = task.selection.spec_hash if task.selection is not None else None
    key = canonical_json(
        [data.type, identity, options, [run.suite.limit, seed] if sampled else None, selection, n, metric]
    )
    detail = f"n = {n if n is not None else '?'}"
    detail += f" · seed {seed}" if sampled else ""
    detail += " · MCQ selection" if selection else ""
    column = Column(key, dataset_name(data), f"{detail} · {metric}", n, seed)
    return key, column, str(data.content_hash or identity).removeprefix("sha256:")[:8]


def _names(runs: Sequence[RunRow]) -> dict[str, str]:
    """``system key -> name`` over every run of the board, two different systems never named alike."""
    groups = system_groups(t for run in runs for t in run.suite.tasks)
    return {g.key: g.name for g in groups}


def build_board(runs: Sequence[RunRow]) -> Board:
    columns: dict[str, Column] = {}
    hashes: dict[str, str] = {}
    rows: list[BoardRow] = []
    names = _names(runs)
    for run in runs:
        for task in run.suite.tasks:
            raw = run.aggregates.get(task.id)
            if raw is None:
                continue
            scores = TaskAggregate.model_validate(raw).scores
            metric = chart_metric(scores)
            if metric is None:
                continue
            key, column, digest = _column(run, task, metric, _int(scores.get("n")))
            columns.setdefault(key, column)
            hashes.setdefault(key, digest)
            value = scores.get(metric)
            number = float(value) if isinstance(value, int | float) and is_number(value) else None
            text = f"{fmt_value(metric, value)} {fmt_interval(metric, interval(scores, metric))}".strip()
            system = system_key(task.system)
            row = next((r for r in rows if r.key == system and r.run_id == run.run_id), None)
            if row is None:
                row = BoardRow(system=names.get(system, system), run_id=run.run_id, key=system)
                rows.append(row)
            row.cells.setdefault(key, (task.id, number, text))
    shared = {k for k in columns if len({r.key for r, _ in _values(rows, k)}) > 1}
    _rank(rows, [k for k in columns if k in shared])
    rows.sort(key=lambda r: (r.mean_rank is None, r.mean_rank or 0.0, -(r.win_rate or 0.0), r.system))
    final = [
        Column(c.key, c.name, c.detail, c.n, c.seed, shared=c.key in shared) for c in _unique(columns, hashes)
    ]
    return Board(columns=final, rows=rows)


def _unique(columns: Mapping[str, Column], hashes: Mapping[str, str]) -> list[Column]:
    """The columns, each header (name, detail) unique: a short content hash added where two read alike."""
    seen: dict[tuple[str, str], int] = {}
    for c in columns.values():
        seen[(c.name, c.detail)] = seen.get((c.name, c.detail), 0) + 1
    out = []
    for c in columns.values():
        if seen[(c.name, c.detail)] > 1:
            c = Column(c.key, c.name, f"{c.detail} · data {hashes[c.key]}", c.n, c.seed)
        out.append(c)
    return out


def _values(rows: Sequence[BoardRow], column: str) -> list[tuple[BoardRow, float]]:
    return [(r, v) for r in rows if (v := r.cells.get(column, ("", None, ""))[1]) is not None]


def _rank(rows: Sequence[BoardRow], columns: Sequence[str]) -> None:
    """Rank and win rate against *systems*, not rows: one system's several runs in a column count as one
    competitor, each of its runs with weight 1/(its runs there)."""
    ranks: dict[int, list[float]] = {id(r): [] for r in rows}
    wins: dict[int, list[float]] = {id(r): [] for r in rows}
    for column in columns:
        by_system: dict[str, list[float]] = {}
        present = _values(rows, column)
        for row, value in present:
            by_system.setdefault(row.key, []).append(value)
        for row, value in present:
            rank = 1.0
            for system, values in by_system.items():
                if system == row.key:
                    continue
                better = sum(v > value for v in values) / len(values)
                equal = sum(v == value for v in values) / len(values)
                rank += better + equal / 2
                wins[id(row)].append(1.0 - better - equal / 2)
            ranks[id(row)].append(rank)
    for row in rows:
        r, w = ranks[id(row)], wins[id(row)]
        row.mean_rank = sum(r) / len(r) if r else None
        row.win_rate = sum(w) / len(w) if w else None
        row.n_ranked = len(r)


def cell(row: BoardRow, column: str) -> Mapping[str, Any] | None:
    found = row.cells.get(column)
    return {"task": found[0], "text": found[2]} if found else None
