"""Working with stored runs: compare two runs, re-weight the combined score, baselines and release gates.

Like ``clineval.runs.run`` (whose run functions it uses), this module only wires the library together.
Promotion, guarded by the gate, is in :mod:`clineval.releases.promotion` (``promote_baseline`` is re-exported
here).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from clineval.analysis import gate_statistical as _stat
from clineval.analysis.compare import compare_columns, gc_paused
from clineval.analysis.eval_rows import gate_rows
from clineval.analysis.gate import MODES as GATE_MODES
from clineval.analysis.gate import GateResult, evaluate_strict, snapshot, stored_choice
from clineval.analysis.gate import mismatch as gate_mismatch
from clineval.analysis.gate_roles import RoleChoice, check_names
from clineval.analysis.gate_statistical import evaluate_statistical
from clineval.core import CaseResult, RunResult, TaskAggregate
from clineval.core.comparison import RunComparison
from clineval.core.errors import RunNotFoundError, UserInputError
from clineval.core.gate_view import GateDecision, GateDecisionRow
from clineval.core.helpers.columns import TaskColumns
from clineval.core.helpers.id_index import HashIndex
from clineval.metrics.aggregate import aggregate_columns
from clineval.metrics.combine import WARNINGS_KEY as COMBINED_WARNINGS
from clineval.metrics.combine import combined_spec, refuse_missing, with_combined
from clineval.releases.heldout import TUNED_SPLITS
from clineval.releases.promotion import finished_run
from clineval.releases.promotion import promote_baseline as promote_baseline  # re-exported
from clineval.runs.finalize import record_metrics
from clineval.runs.stored import columns_of_run, open_run, scorers_for
from clineval.store import ResultStore
from clineval.store.baselines import DEFAULT_TENANT, Baseline, BaselineStore
from clineval.store.tables import utcnow


def _task_results(run: RunResult, task_id: str) -> dict[str, CaseResult]:
    return {r.case_id: r for r in run.results if r.task_id == task_id}


def _tuned_cases(run: RunResult) -> list[tuple[str, object]]:
    """``(case id, split)`` of the run's tuned-on cases (``analysis.heldout``), from its columns."""
    found: list[tuple[str, object]] = []
    for columns in columns_of_run(run).values():
        splits = columns.metadata.get("split")
        if splits is None:
            continue
        for case_id, split in zip(columns.case_ids, splits.tolist(), strict=True):
            if str(split or "").strip().lower() in TUNED_SPLITS:
                found.append((case_id, split))
    return found


def _paired_tasks(a: RunResult, b: RunResult) -> list[tuple[str, str]]:
    common = [t for t in a.aggregates if t in b.aggregates]
    if common:
        return [(t, t) for t in common]
    if len(a.aggregates) == 1 and len(b.aggregates) == 1:  # one task each, named differently
        return [(next(iter(a.aggregates)), next(iter(b.aggregates)))]
    raise UserInputError(
        f"runs {a.run_id} and {b.run_id} have no task in common", hint="compare runs of the same suite"
    )


def _restricted(
    run: RunResult, task_id: str, rows: NDArray[np.intp] | None
) -> tuple[TaskAggregate, TaskColumns]:
    """The task's aggregate over the cases at ``rows`` of its columns (None: all of them)."""
    columns = columns_of_run(run)[task_id]
    if rows is not None:
        columns = columns.take(rows)
    task = next(t for t in run.info.suite.tasks if t.id == task_id)
    return aggregate_columns(columns, scorers_for(run.info.suite)[task_id], task.stratify), columns


def common_rows(
    a: TaskColumns, b: TaskColumns
) -> tuple[NDArray[np.intp] | None, NDArray[np.intp] | None, int, int]:
    """``(rows of a, rows of b, only in a, only in b)``: the positions of the cases both hold (None: all
    of that side's cases), matched by case id through a hash index (no set of a million strings)."""
    in_b = HashIndex(b.case_ids).positions(a.case_ids) >= 0
    in_a = HashIndex(a.case_ids).positions(b.case_ids) >= 0
    only_a, only_b = int((~in_b).sum()), int((~in_a).sum())
    rows_a = np.flatnonzero(in_b).astype(np.intp) if only_a else None
    rows_b = np.flatnonzero(in_a).astype(np.intp) if only_b else None
    return rows_a, rows_b, only_a, only_b


def compare_runs(store_url: str, run_a: str, run_b: str, *, intersection: bool = False) -> RunComparison:
    """Case-by-case comparison of two stored runs; different case sets are refused unless ``intersection``.

    Both runs are read column-wise (``clineval.runs.stored``): two million-case runs fit in memory."""
    with gc_paused():  # millions of acyclic objects: no full collections over them (analysis.compare)
        return _compare_runs(store_url, run_a, run_b, intersection)


def _compare_runs(store_url: str, run_a: str, run_b: str, intersection: bool) -> RunComparison:
    store = ResultStore(store_url, read_only=True)
    try:
        a, b = (open_run(store, store.get_run(r).run_id) for r in (run_a, run_b))
        tasks = []
        for task_a, task_b in _paired_tasks(a, b):
            rows_a, rows_b, only_a, only_b = common_rows(columns_of_run(a)[task_a], columns_of_run(b)[task_b])
            if (only_a or only_b) and not intersection:
                raise UserInputError(
                    f"task {task_a}: the runs scored different cases ({only_a} only in "
                    f"{a.run_id[:12]}, {only_b} only in {b.run_id[:12]})",
                    hint="compare runs made with the same --limit/--seed, or pass --intersection",
                )
            agg_a, cols_a = _restricted(a, task_a, rows_a)
            agg_b, cols_b = _restricted(b, task_b, rows_b)
            tasks.append(compare_columns(task_a, agg_a, agg_b, cols_a, cols_b))
    finally:
        store.close()
    return RunComparison(run_a=a.run_id, run_b=b.run_id, tasks=tasks, restricted_to_common=intersection)


def recombine(
    store_url: str,
    run_id: str,
    weights: dict[str, float],
    *,
    name: str = "combined_score",
    renormalize: bool = True,
    categories: str | None = None,
    save: bool = False,
    strict: bool = False,
) -> RunResult:
    """A stored run with its combined score recomputed under new weights; nothing is re-run or re-scored.

    Its warnings (a weighted category with no metric in a task, a mapped metric left out) replace those of
    the combined score it had in the run's ``warnings``; with ``strict`` a missing category is a
    ``UserInputError`` instead (nothing saved)."""
    store = ResultStore(store_url, must_exist=True)
    try:
        run = open_run(store, store.get_run(run_id).run_id)
        args = {"weights": weights, "name": name, "renormalize": renormalize, "categories": categories}
        args |= {"strict": True} if strict else {}
        try:
            spec = combined_spec(args)
        except (ValueError, OSError) as err:
            raise UserInputError(
                f"combined score: {err}", hint="e.g. --weights diagnostics=0.4,safety=0.3"
            ) from None
        found = with_combined(
            run.info.suite,
            scorers_for(run.info.suite),
            columns_of_run(run),
            run.aggregates,
            run.overall,
            spec,
        )
        refuse_missing(found, spec)
        provenance = {"combined_score": args, **_replaced_warnings(run.info.provenance, found.warnings)}
        if save:
            store.finish_run(run.run_id, found.aggregates, found.overall, status=run.info.status)
            store.update_provenance(run.run_id, provenance)
            saved = store.load_run(run.run_id)
            record_metrics(store, saved)
            return saved
        info = run.info.model_copy(update={"provenance": {**run.info.provenance, **provenance}})
        return run.model_copy(update={"info": info, "aggregates": found.aggregates, "overall": found.overall})
    finally:
        store.close()


def _replaced_warnings(provenance: Mapping[str, Any], new: list[str]) -> dict[str, list[str]]:
    """The run's warnings with those of its previous combined score replaced by ``new``."""
    old = provenance.get(COMBINED_WARNINGS) or []
    kept = [w for w in provenance.get("warnings") or [] if w not in old]
    return {"warnings": [*kept, *new], COMBINED_WARNINGS: new}


# -- baselines and the gate ------------------------------------------------------------------------------
GATE_ALPHA: float = _stat.ALPHA  # statistical mode defaults (docs/releases/gate.md)
GATE_MARGIN: float = _stat.MARGIN


def list_baselines(store_url: str, tenant: str | None = None) -> list[Baseline]:
    """The latest version of each baseline (of ``tenant``, or of every tenant)."""
    store = ResultStore(store_url, read_only=True)
    try:
        return BaselineStore(store.engine).latest(tenant)
    finally:
        store.close()


def show_baseline(
    store_url: str, name: str, tenant: str = DEFAULT_TENANT, version: int | None = None
) -> Baseline:
    """One version of a baseline (default: the latest)."""
    store = ResultStore(store_url, read_only=True)
    try:
        return BaselineStore(store.engine).get(name, tenant, version)
    finally:
        store.close()


def baseline_history(store_url: str, name: str, tenant: str = DEFAULT_TENANT) -> list[Baseline]:
    """Every promoted version of a baseline, oldest first."""
    store = ResultStore(store_url, read_only=True)
    try:
        return BaselineStore(store.engine).history(name, tenant)
    finally:
        store.close()


def _paired_case_sets(
    base_run: RunResult, run: RunResult
) -> tuple[dict[str, dict[str, CaseResult]], dict[str, dict[str, CaseResult]]]:
    """Per task ``case id -> CaseResult`` of both runs; different case sets are refused."""
    base_sets: dict[str, dict[str, CaseResult]] = {}
    cand_sets: dict[str, dict[str, CaseResult]] = {}
    for task in run.aggregates:
        base_sets[task], cand_sets[task] = _task_results(base_run, task), _task_results(run, task)
        ids_b, ids_c = set(base_sets[task]), set(cand_sets[task])
        if ids_b != ids_c:
            raise UserInputError(
                f"task {task}: the candidate scored different cases than the baseline's run "
                f"{base_run.run_id[:12]} ({len(ids_b - ids_c)} only in the baseline, "
                f"{len(ids_c - ids_b)} only in the candidate)",
                hint="statistical mode pairs cases by id: gate a run of the same cases, or use --mode strict",
            )
    return base_sets, cand_sets


def gate_run(
    store_url: str,
    candidate: str,
    baseline: str,
    *,
    tenant: str = DEFAULT_TENANT,
    mode: str = "strict",
    version: int | None = None,
    alpha: float = GATE_ALPHA,
    margin: float = GATE_MARGIN,
    allow_tuned_cases: bool = False,
    metrics: Sequence[str] | None = None,
    track: Sequence[str] | None = None,
) -> GateResult:
    """Gate a finished candidate run against a baseline and store the decision in ``gate_results``.

    Which metrics gate: ``metrics`` (only these; comma-separated names allowed) minus ``track``, else
    what the baseline was promoted with, else the defaults of :mod:`clineval.analysis.gate_roles`. A
    named metric missing from the baseline or the candidate, and a gate that would compare no gating
    metric, are a ``UserInputError`` (nothing is stored).

    ``strict``: every gating metric ``candidate >= baseline``. ``statistical``: per-case-mean gating metrics
    regress only when ``delta < 0`` and (Holm-adjusted ``p < alpha`` or the 95% paired interval's upper
    bound ``< -margin``), paired on the cases of the baseline's run (which must still be stored and hold the
    same case ids); other gating metrics keep the strict rule (docs/releases/gate.md). A candidate that
    includes tuned-on cases (metadata ``split: train``...) is refused unless ``allow_tuned_cases``
    (:mod:`clineval.releases.heldout`).
    """
    if mode not in GATE_MODES:
        raise UserInputError(f"unknown gate mode {mode!r}", hint=f"use one of: {', '.join(GATE_MODES)}")
    if not 0.0 < alpha < 1.0:
        raise UserInputError(f"--alpha must be in (0, 1), got {alpha}")
    if not (math.isfinite(margin) and margin >= 0.0):
        raise UserInputError(f"--margin must be a finite number >= 0, got {margin}")
    asked = RoleChoice.of(metrics, track)
    store = ResultStore(store_url, must_exist=True)
    try:
        baselines = BaselineStore(store.engine)
        promoted = baselines.get(baseline, tenant, version)
        run = finished_run(store, candidate)
        tuned = _tuned_cases(run)
        if tuned and not allow_tuned_cases:
            raise UserInputError(
                f"run {run.run_id} includes {len(tuned)} tuned-on case(s) of {len(run.results)} "
                f"(e.g. {tuned[0][0]}, split {tuned[0][1]!r}): a gate judges a "
                "change on held-out cases",
                hint="run the candidate on the held-out split (e.g. golden_set split: heldout), "
                "or pass --allow-tuned-cases to gate on tuned-on cases knowingly",
            )
        scorers = scorers_for(run.info.suite)
        cand = snapshot(run, scorers)
        problem = gate_mismatch(promoted.snapshot, cand)
        if problem is not None:
            raise UserInputError(
                f"cannot gate run {run.run_id} against baseline {promoted.name} "
                f"v{promoted.version}: {problem}",
                hint="gate a run of the same suite tasks, datasets, --limit and --seed as the baseline",
            )
        name, ver, ten = promoted.name, promoted.version, promoted.tenant
        choice = asked.over(stored_choice(promoted.snapshot))
        check_names(choice, {f"baseline {name} v{ver}": promoted.snapshot, f"run {run.run_id}": cand})
        if mode == "strict":
            result = evaluate_strict(
                promoted.snapshot, cand, run_id=run.run_id, name=name, version=ver, tenant=ten, choice=choice
            )
        else:
            try:
                base_run = store.load_run(store.get_run(promoted.run_id).run_id)
            except RunNotFoundError:
                raise UserInputError(
                    f"the baseline's run {promoted.run_id} is no longer in the store",
                    hint="statistical mode needs the baseline run's per-case scores; use --mode strict",
                ) from None
            base_sets, cand_sets = _paired_case_sets(base_run, run)
            result = evaluate_statistical(
                promoted.snapshot,
                cand,
                base_sets,
                cand_sets,
                scorers,
                run_id=run.run_id,
                name=name,
                version=ver,
                tenant=ten,
                alpha=alpha,
                margin=margin,
                choice=choice,
            )
        _refuse_empty(result, choice)
        gate_id = baselines.record_gate(run.run_id, promoted, mode, result.passed, result.details())
        rows = gate_rows(result, baseline_id=promoted.id, gate_id=gate_id, timestamp=utcnow())
        store.eval_results.record(rows)
        return result
    finally:
        store.close()


def _refuse_empty(result: GateResult, choice: RoleChoice) -> None:
    """A gate that compared no gating metric decides nothing: an error, never a PASS."""
    if result.n_compared:
        return
    if not result.n_gating:
        why = f"every one of its {result.n_tracked} metric(s) is tracked"
        why += f" (metrics named: {choice.describe()})" if choice else ""
    else:
        why = f"none of its {result.n_gating} gating metric(s) has a baseline value and a candidate value"
    raise UserInputError(
        f"the gate of run {result.run_id} against baseline {result.baseline_name} "
        f"v{result.baseline_version} gates nothing: {why}",
        hint="name metrics to gate with --metrics (docs/releases/gate.md lists the defaults)",
    )


# -- gate decisions in the reports -----------------------------------------------------------------------


def gate_decisions(store_url: str, run_id: str) -> list[GateDecision]:
    """The gate decisions stored for a run (id or unique prefix), oldest first, as the reports show them."""
    store = ResultStore(store_url, read_only=True)
    try:
        records = BaselineStore(store.engine).gate_history(store.resolve_run_id(run_id))
    finally:
        store.close()
    return [
        GateDecision(
            baseline_name=r.baseline_name,
            baseline_version=r.baseline_version,
            tenant=r.tenant,
            mode=r.mode,
            passed=r.passed,
            created_at=r.created_at,
            rows=[GateDecisionRow.model_validate(row) for row in r.details.get("rows", [])],
        )
        for r in records
    ]
