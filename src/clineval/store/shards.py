"""Sharded runs in the store: the partition of a run's cases and the ``run_shards`` table.

The partition: case ``(task_id, case_id)`` belongs to shard
``int(sha256(f"{task_id}\\0{case_id}".encode("utf-8")).hexdigest()[:16], 16) % n`` — the same on every
machine and Python version (no ``hash()``, no seed), so N processes started anywhere split the cases of
a run exactly once between them. ``run_shards`` holds one row per (run, shard): ``running`` while the
shard writes, ``complete`` once all of its cases are stored, ``interrupted`` after Ctrl-C. Who
finalizes the run once every shard is complete: :mod:`clineval.store.finalizing`.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, Insert, select, update

from clineval.store.keys import key_digest
from clineval.store.tables import run_shards, runs, utc, utcnow


def shard_of(task_id: str, case_id: str, n: int) -> int:
    """The shard (0..n-1) the case belongs to (see the module docstring)."""
    return int(key_digest(task_id, case_id)[:16], 16) % n


_HEX_ID = re.compile(r"[0-9a-f]{32}")


def shard_run_id(name: str) -> str:
    """The stored id of the run ``--run-id NAME`` names: NAME itself when it is a run id (32 hex digits),
    else ``uuid5(NAMESPACE_URL, "clineval-run:" + NAME)`` — the same on every shard and machine (run ids are
    UUIDs: ``eval_results.run_id`` is a UUID column on PostgreSQL)."""
    if _HEX_ID.fullmatch(name):
        return name
    return uuid.uuid5(uuid.NAMESPACE_URL, f"clineval-run:{name}").hex


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with ``0 <= K < N``; ValueError otherwise."""
    k_text, sep, n_text = text.partition("/")
    try:
        k, n = int(k_text), int(n_text)
    except ValueError:
        k, n = -1, 0
    if not sep or n < 1 or not 0 <= k < n:
        raise ValueError(f"--shard {text!r} is not K/N with 0 <= K < N (e.g. 0/4 .. 3/4)")
    return k, n


@dataclass(frozen=True)
class ShardRow:
    shard: int
    of: int
    status: str
    cases: int
    started_at: datetime | None
    finished_at: datetime | None


def _dialect_insert(engine: Engine) -> Any:
    if engine.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert
    from sqlalchemy.dialects import sqlite

    return sqlite.insert


def insert_if_absent(engine: Engine, values: dict[str, Any]) -> bool:
    """Insert the ``runs`` row unless its run id is stored already (race-safe); True if this call did."""
    stmt: Insert = _dialect_insert(engine)(runs).values(**values).on_conflict_do_nothing()
    with engine.begin() as conn:
        return bool(conn.execute(stmt).rowcount == 1)


class ShardStore:
    """The ``run_shards`` rows of one database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def start(self, run_id: str, shard: int, of: int) -> None:
        """Mark the shard ``running`` (a re-run of a shard restarts its row)."""
        values = {"run_id": run_id, "shard": shard, "of": of, "status": "running", "cases": 0}
        stmt = _dialect_insert(self.engine)(run_shards).values(**values, started_at=utcnow())
        stmt = stmt.on_conflict_do_update(
            index_elements=["run_id", "shard"],
            set_={"of": of, "status": "running", "started_at": utcnow(), "finished_at": None},
        )
        with self.engine.begin() as conn:
            conn.execute(stmt)

    def finish(self, run_id: str, shard: int, *, cases: int, status: str = "complete") -> None:
        query = update(run_shards).where(run_shards.c.run_id == run_id, run_shards.c.shard == shard)
        finished = utcnow() if status == "complete" else None
        with self.engine.begin() as conn:
            conn.execute(query.values(status=status, cases=cases, finished_at=finished))

    def rows(self, run_id: str) -> list[ShardRow]:
        query = select(run_shards).where(run_shards.c.run_id == run_id).order_by(run_shards.c.shard)
        with self.engine.connect() as conn:
            return [
                ShardRow(r.shard, r.of, r.status, r.cases, utc(r.started_at), utc(r.finished_at))
                for r in conn.execute(query)
            ]

    def missing(self, run_id: str, of: int) -> list[int]:
        """The shards 0..of-1 not (yet) complete."""
        complete = {r.shard for r in self.rows(run_id) if r.status == "complete" and r.of == of}
        return [k for k in range(of) if k not in complete]
