"""Promoting a run to a baseline, guarded by its gate (four-tier design: "a new baseline is set only when a
config update passes AND the team explicitly promotes").

The first version of a baseline needs no gate. Every later one is refused when the run's last gate
decision against that baseline (``gate_results``: run id, baseline name and tenant) failed, when there is
none, or when it was taken against an older version than the latest (what passed then may regress now).
``force=True`` with a ``reason`` promotes anyway; the reason, who was overruled (the refusal) and the gate
decision it rests on are stored with the version, in its snapshot under ``promotion``
(:func:`promotion_of`), and ``clineval baseline show|history`` print them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clineval.analysis.gate import snapshot
from clineval.analysis.gate_roles import RoleChoice, check_names
from clineval.core import RunResult
from clineval.core.errors import UserInputError
from clineval.runs.stored import open_run, scorers_for
from clineval.store import ResultStore
from clineval.store.baselines import DEFAULT_TENANT, Baseline, BaselineStore, GateRecord

PROMOTION_KEY = "promotion"
MAX_NAMED = 3  # regressed metrics named in a refusal


def finished_run(store: ResultStore, run_id: str) -> RunResult:
    run = open_run(store, store.get_run(run_id).run_id)
    if run.info.status != "finished":
        raise UserInputError(
            f"run {run.run_id} is {run.info.status}, not finished",
            hint="complete it with `clineval run SUITE --resume RUN_ID` first",
        )
    return run


def _regressed(record: GateRecord) -> str:
    rows = [r for r in record.details.get("rows", []) if isinstance(r, Mapping) and r.get("status") == "fail"]
    names = [f"{r.get('metric')}" + (f" ({r['stratum']})" if r.get("stratum") else "") for r in rows]
    shown = ", ".join(names[:MAX_NAMED]) + (
        f" +{len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else ""
    )
    return f"{len(names)} gating metric(s) regressed: {shown}" if names else "it failed"


def _latest(baselines: BaselineStore, name: str, tenant: str) -> Baseline | None:
    try:
        return baselines.get(name, tenant)
    except UserInputError:  # no version yet
        return None


def refusal(
    latest: Baseline | None, gates: Sequence[GateRecord], run_id: str
) -> tuple[str | None, int | None]:
    """``(why the promotion is refused or None, id of the gate decision it rests on)``; ``gates``: the run's
    decisions against this baseline name and tenant, oldest first."""
    if latest is None:
        return None, None
    which = f"baseline {latest.name} (tenant {latest.tenant})"
    if not gates:
        return (
            f"run {run_id} has no gate decision against {which}, whose latest version is v{latest.version}",
            None,
        )
    last = gates[-1]
    if not last.passed:
        return (
            f"the last gate of run {run_id} against {which} v{last.baseline_version} failed: "
            + _regressed(last),
            last.id,
        )
    if last.baseline_version != latest.version:
        return (
            f"the last gate of run {run_id} was against {which} v{last.baseline_version}, "
            f"but the latest version is v{latest.version}",
            last.id,
        )
    return None, last.id


def promote_baseline(
    store_url: str,
    run_id: str,
    name: str,
    tenant: str = DEFAULT_TENANT,
    *,
    gate_metrics: Sequence[str] | None = None,
    track_metrics: Sequence[str] | None = None,
    force: bool = False,
    reason: str | None = None,
) -> Baseline:
    """Snapshot a finished run's metrics (with each metric's tier) as the next version of ``name``.

    ``gate_metrics`` / ``track_metrics``: the metrics a gate against this baseline gates (only these) /
    tracks instead of gating, stored in the snapshot; a gate's own ``metrics``/``track`` take precedence.
    Refused (:func:`refusal`, a ``UserInputError``) unless the run passed its last gate against the latest
    version, or ``force`` with a non-empty ``reason`` (stored with the version: module docstring).
    """
    reason = (reason or "").strip() or None
    if force and reason is None:
        raise UserInputError("--force needs --reason TEXT: why promote a run the gate did not pass")
    choice = RoleChoice.of(gate_metrics, track_metrics)
    store = ResultStore(store_url, must_exist=True)
    try:
        run = finished_run(store, run_id)
        baselines = BaselineStore(store.engine)
        latest = _latest(baselines, name, tenant)
        gates = [
            g for g in baselines.gate_history(run.run_id) if (g.baseline_name, g.tenant) == (name, tenant)
        ]
        why, gate_id = refusal(latest, gates, run.run_id)
        tenant_opt = "" if tenant == DEFAULT_TENANT else f" --tenant {tenant}"
        if why is not None and not force:
            raise UserInputError(
                f"baseline {name} not promoted: {why}",
                hint=f"gate it first (clineval gate {run.run_id[:12]} --baseline {name}{tenant_opt}), "
                "or promote anyway with --force --reason TEXT",
            )
        snap = snapshot(run, scorers_for(run.info.suite), choice)
        check_names(choice, {f"run {run.run_id}": snap})
        snap[PROMOTION_KEY] = {
            "gate_id": gate_id,
            "forced": why is not None,
            "refused_because": why,
            "reason": reason,
        }
        return baselines.promote(name, tenant, run.run_id, snap)
    finally:
        store.close()


def promotion_of(baseline: Baseline) -> dict[str, Any]:
    """How a version was promoted (``{}`` for a version promoted before promotions were recorded)."""
    found = baseline.snapshot.get(PROMOTION_KEY)
    return dict(found) if isinstance(found, Mapping) else {}


def promotion_text(baseline: Baseline, *, short: bool = False) -> str:
    """``gate decision 4 passed``, ``first version, no gate``, ``FORCED: <reason> (refused: ...)``; with
    ``short``, one word: ``gated``, ``first``, ``FORCED`` (``-`` for a version promoted before promotions
    were recorded)."""
    found = promotion_of(baseline)
    if not found:
        return "-"
    gate = found.get("gate_id")
    if found.get("forced"):
        refused = found.get("refused_because")
        return "FORCED" if short else f"FORCED: {found.get('reason')} (refused: {refused})"
    if short:
        return "gated" if gate is not None else "first"
    text = f"gate decision {gate} passed" if gate is not None else "first version, no gate"
    return text + (f"; reason: {found['reason']}" if found.get("reason") else "")
