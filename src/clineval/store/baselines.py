"""Named baselines per tenant and the gate decisions taken against them.

A baseline is a snapshot (plain JSON: per task the aggregate scores, strata and each metric's tier) of one
run, stored under ``(name, tenant)``. Promoting again adds version ``n + 1``; no row is ever updated, so a
baseline never drifts: the gate compares with exactly what was promoted. ``gate_results`` records every
gate decision (candidate run, baseline name and version, tenant, mode, passed, details).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, Row, func, insert, select
from sqlalchemy.exc import IntegrityError

from clineval.core.errors import UserInputError
from clineval.store.tables import baselines, gate_results, utc, utcnow

DEFAULT_TENANT = "default"
_LIST_HINT = "list baselines with `clineval baseline list`"


@dataclass(frozen=True)
class Baseline:
    """One promoted version of a named baseline."""

    name: str
    tenant: str
    version: int
    run_id: str
    promoted_at: datetime
    snapshot: dict[str, Any]
    id: int = 0  # the row id (eval_results.baseline_id)


@dataclass(frozen=True)
class GateRecord:
    """One stored gate decision."""

    id: int
    run_id: str
    baseline_name: str
    baseline_version: int
    tenant: str
    mode: str
    passed: bool
    details: dict[str, Any]
    created_at: datetime


def _check_name(kind: str, value: str) -> str:
    value = value.strip()
    if not value or len(value) > 255:
        raise UserInputError(f"{kind} must be 1 to 255 characters, got {value!r}")
    return value


def _baseline(row: Row[Any]) -> Baseline:
    promoted = utc(row.promoted_at)
    assert promoted is not None  # the column is NOT NULL
    return Baseline(
        row.name, row.tenant, int(row.version), row.run_id, promoted, dict(row.snapshot), int(row.id)
    )


class BaselineStore:
    """Baselines and gate results in the same database as the runs (tables created by ResultStore)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def promote(self, name: str, tenant: str, run_id: str, snapshot: Mapping[str, Any]) -> Baseline:
        """Store ``snapshot`` as the next version of ``(name, tenant)`` and return it."""
        name, tenant = _check_name("baseline name", name), _check_name("tenant", tenant)
        for _attempt in range(3):  # a concurrent promotion of the same name takes the version: retry
            try:
                with self.engine.begin() as conn:
                    latest = conn.execute(
                        select(func.max(baselines.c.version)).where(
                            baselines.c.name == name, baselines.c.tenant == tenant
                        )
                    ).scalar()
                    version = int(latest or 0) + 1
                    conn.execute(
                        insert(baselines),
                        {
                            "name": name,
                            "tenant": tenant,
                            "version": version,
                            "run_id": run_id,
                            "promoted_at": utcnow(),
                            "snapshot": dict(snapshot),
                        },
                    )
                return self.get(name, tenant, version)
            except IntegrityError:
                continue
        raise UserInputError(f"baseline {name!r} (tenant {tenant!r}) is being promoted concurrently")

    def get(self, name: str, tenant: str = DEFAULT_TENANT, version: int | None = None) -> Baseline:
        """The given version of a baseline, or its latest."""
        query = select(baselines).where(baselines.c.name == name, baselines.c.tenant == tenant)
        if version is not None:
            query = query.where(baselines.c.version == version)
        with self.engine.connect() as conn:
            row = conn.execute(query.order_by(baselines.c.version.desc()).limit(1)).first()
        if row is None:
            which = f"version {version} of baseline" if version is not None else "baseline"
            raise UserInputError(f"no {which} {name!r} for tenant {tenant!r}", hint=_LIST_HINT)
        return _baseline(row)

    def history(self, name: str, tenant: str = DEFAULT_TENANT) -> list[Baseline]:
        """Every version of a baseline, oldest first."""
        query = (
            select(baselines)
            .where(baselines.c.name == name, baselines.c.tenant == tenant)
            .order_by(baselines.c.version)
        )
        with self.engine.connect() as conn:
            found = [_baseline(row) for row in conn.execute(query)]
        if not found:
            raise UserInputError(f"no baseline {name!r} for tenant {tenant!r}", hint=_LIST_HINT)
        return found

    def latest(self, tenant: str | None = None) -> list[Baseline]:
        """The latest version of every baseline (of one tenant, or all), by tenant then name."""
        newest = (
            select(baselines.c.name, baselines.c.tenant, func.max(baselines.c.version).label("version"))
            .group_by(baselines.c.name, baselines.c.tenant)
            .subquery()
        )
        query = select(baselines).join(
            newest,
            (baselines.c.name == newest.c.name)
            & (baselines.c.tenant == newest.c.tenant)
            & (baselines.c.version == newest.c.version),
        )
        if tenant is not None:
            query = query.where(baselines.c.tenant == tenant)
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(baselines.c.tenant, baselines.c.name)).all()
        return [_baseline(row) for row in rows]

    def record_gate(
        self, run_id: str, baseline: Baseline, mode: str, passed: bool, details: Mapping[str, Any]
    ) -> int:
        """Store one gate decision; returns its id."""
        values = {
            "run_id": run_id,
            "baseline_name": baseline.name,
            "baseline_version": baseline.version,
            "tenant": baseline.tenant,
            "mode": mode,
            "passed": passed,
            "details": dict(details),
            "created_at": utcnow(),
        }
        with self.engine.begin() as conn:
            key = conn.execute(insert(gate_results), values).inserted_primary_key
        return int(key[0]) if key is not None else 0

    def gate_history(self, run_id: str | None = None) -> list[GateRecord]:
        """Stored gate decisions (of one candidate run, or all), oldest first."""
        query = select(gate_results).order_by(gate_results.c.id)
        if run_id is not None:
            query = query.where(gate_results.c.run_id == run_id)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            GateRecord(
                int(r.id),
                r.run_id,
                r.baseline_name,
                int(r.baseline_version),
                r.tenant,
                r.mode,
                bool(r.passed),
                dict(r.details),
                utc(r.created_at) or utcnow(),
            )
            for r in rows
        ]
