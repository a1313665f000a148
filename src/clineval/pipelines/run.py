"""Run a nightly or weekly pipeline: each step runs a suite, stores it, checks it, and alerts on failure.

For every step of the kind: run the suite (``run_type`` = the kind, the pipeline's tenant, no response
cache: a scheduled evaluation must call the system as it is tonight), which stores the run and its metric
rows in ``eval_results``; then, for a nightly step, the regression check: floors (every task's metric >=
the floor) and/or a baseline gate (``clineval gate``, stored as ``config_gate`` rows). A step that fails
to run (bad suite, missing baseline, unreachable store) is an ``error``: the other steps still run. One
alert goes out per pipeline when any step regressed or errored (``nightly_regression`` /
``pipeline_failed``); its delivery outcome is part of the result, and a delivery failure never raises.
A degraded run (``clineval.analysis.degradation``) keeps its step's status; its warnings are listed in
``StepResult.warnings``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clineval.alerts import Alert, AlertConfig, AlertOutcome, AlertRow, load_alert_config, send_alert
from clineval.analysis.gate import GateResult
from clineval.core import RunResult
from clineval.core.errors import ClinevalError, UserInputError
from clineval.pipelines.config import KINDS, PipelineConfig, StepEntry, load_pipeline_config
from clineval.releases import gate as releases
from clineval.runs import run as api


@dataclass(frozen=True)
class FloorCheck:
    task: str
    metric: str
    floor: float
    value: float | None

    @property
    def passed(self) -> bool:
        return self.value is not None and not math.isnan(self.value) and self.value >= self.floor


@dataclass(frozen=True)
class StepResult:
    """``status``: ``pass``, ``regression``, ``error`` or ``tracked`` (weekly / no check configured)."""

    name: str
    status: str
    run_id: str | None = None
    gate: GateResult | None = None
    floors: list[FloorCheck] = field(default_factory=list)
    error: str | None = None
    warnings: list[str] = field(default_factory=list)  # a degraded run: reported, never a step error

    def alert_rows(self) -> list[AlertRow]:
        rows = [
            AlertRow(f"{self.name}/{r.task}", r.metric, r.stratum, r.baseline, r.candidate, r.delta, r.p)
            for r in (self.gate.failures if self.gate is not None else [])
        ]
        for f in self.floors:
            if not f.passed:
                delta = None if f.value is None else f.value - f.floor
                rows.append(AlertRow(f"{self.name}/{f.task}", f.metric, "floor", f.floor, f.value, delta))
        return rows


@dataclass(frozen=True)
class PipelineResult:
    kind: str
    name: str
    tenant: str
    steps: list[StepResult]
    alert: AlertOutcome | None = None

    @property
    def passed(self) -> bool:
        return all(s.status in ("pass", "tracked") for s in self.steps)

    @property
    def run_ids(self) -> list[str]:
        return [s.run_id for s in self.steps if s.run_id is not None]

    def summary(self) -> str:
        lines = [
            f"{self.kind} pipeline {self.name} (tenant {self.tenant}): {'PASS' if self.passed else 'FAIL'}"
        ]
        for step in self.steps:
            run = f" run {step.run_id[:12]}" if step.run_id else ""
            lines.append(f"  {step.name}: {step.status}{run}" + (f" ({step.error})" if step.error else ""))
            lines.extend(f"    warning: {w}" for w in step.warnings)
            lines.extend(
                f"    {row.label}: {_fmt(row.baseline)} -> {_fmt(row.candidate)}" for row in step.alert_rows()
            )
        if self.alert is not None:
            sent = ", ".join(
                f"{c.channel} {'ok' if c.ok else 'FAILED: ' + c.detail}" for c in self.alert.channels
            )
            lines.append(f"  alert: {sent}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "tenant": self.tenant,
            "passed": self.passed,
            "steps": [
                {
                    "name": s.name,
                    "status": s.status,
                    "run_id": s.run_id,
                    "error": s.error,
                    "warnings": list(s.warnings),
                    "gate": None if s.gate is None else s.gate.details(),
                    "floors": [{**vars(f), "passed": f.passed} for f in s.floors],
                }
                for s in self.steps
            ],
            "alert": None if self.alert is None else self.alert.to_dict(),
        }


def _fmt(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.4f}"


def _floors(run: RunResult, floors: dict[str, float]) -> list[FloorCheck]:
    checks: list[FloorCheck] = []
    for metric, floor in sorted(floors.items()):
        tasks = [(t, agg.scores.get(metric)) for t, agg in run.aggregates.items() if metric in agg.scores]
        if not tasks:  # a floor on a metric no task produces is a config mistake, not a pass
            checks.append(FloorCheck("*", metric, floor, None))
        for task, value in tasks:
            number = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
            checks.append(FloorCheck(task, metric, floor, number))
    return checks


def _log_mlflow(run: RunResult, mlflow_uri: str | None, warnings: list[str]) -> list[str]:
    """Log the step's run to MLflow when asked; a logging failure is a warning of the step, not its error
    (the evaluation itself is stored and gated either way)."""
    if mlflow_uri is None:
        return warnings
    from clineval.integrations.mlflow_log import log_run  # lazy: the mlflow extra is optional

    try:
        log_run(run, tracking_uri=mlflow_uri, report_dir=None)
    except ClinevalError as err:
        return [*warnings, f"mlflow: {err}"]
    return warnings


def _run_step(
    config: PipelineConfig, kind: str, step: StepEntry, store_url: str, mlflow_uri: str | None = None
) -> StepResult:
    tenant = config.file.tenant
    request = api.RunRequest(
        suite_path=config.suite_path(step),
        store_url=store_url,
        cache_path=None,
        tenant_id=tenant,
        run_type="nightly" if kind == "nightly" else "weekly",
    )
    run_id: str | None = None
    try:
        run = api.run_suite(request)
        run_id = run.run_id
        if run.info.status != "finished":
            return StepResult(step.name, "error", run_id, error=f"run ended {run.info.status}")
        warnings = _log_mlflow(
            run, mlflow_uri, run.info.provenance.get("degradation", {}).get("warnings", [])
        )
        if kind == "weekly" or not step.gating:
            return StepResult(step.name, "tracked", run_id, warnings=warnings)
        floors = _floors(run, step.floors)
        gate = None
        if step.baseline is not None:
            gate = releases.gate_run(
                store_url,
                run_id,
                step.baseline,
                tenant=tenant,
                mode=step.mode,
                alpha=step.alpha,
                margin=step.margin,
                allow_tuned_cases=step.allow_tuned_cases,
            )
        regressed = (gate is not None and not gate.passed) or any(not f.passed for f in floors)
        status = "regression" if regressed else "pass"
        return StepResult(step.name, status, run_id, gate, floors, warnings=warnings)
    except ClinevalError as err:
        message = err.render() if isinstance(err, UserInputError) else str(err)
        return StepResult(step.name, "error", run_id, error=message)


def _alert(config: PipelineConfig, kind: str, steps: list[StepResult]) -> Alert:
    errored = [s for s in steps if s.status == "error"]
    regressed = [s for s in steps if s.status == "regression"]
    what = f"{kind} pipeline {config.file.name}"
    if errored:
        title = f"{what}: {len(errored)} step(s) failed to run"
        summary = "; ".join(f"{s.name}: {s.error}" for s in errored)
    else:
        title = f"{what}: regression in {', '.join(s.name for s in regressed)}"
        summary = f"{len(regressed)} step(s) below their baseline or floors"
    return Alert(
        kind="pipeline_failed" if errored else "nightly_regression",
        title=title,
        summary=summary,
        rows=[row for s in regressed for row in s.alert_rows()],
        run_id=", ".join(s.run_id[:12] for s in steps if s.run_id),
        tenant=config.file.tenant,
    )


def run_pipeline(
    kind: str,
    config: str | Path | PipelineConfig,
    *,
    store_url: str | None = None,
    mlflow_uri: str | None = None,
) -> PipelineResult:
    """Run every step of the ``nightly`` or ``weekly`` pipeline in ``config``; alerts when one fails.
    ``mlflow_uri``: also log each step's run to that MLflow tracking URI (no report artifacts)."""
    if kind not in KINDS:
        raise UserInputError(f"unknown pipeline {kind!r}", hint=f"use one of: {', '.join(KINDS)}")
    loaded = config if isinstance(config, PipelineConfig) else load_pipeline_config(config)
    steps = loaded.steps(kind)
    if not steps:
        raise UserInputError(f"{loaded.path}: no {kind} steps", hint=f"add a '{kind}:' list of steps")
    alerts: AlertConfig | None = None
    if loaded.file.alerts is not None:
        alerts = load_alert_config(loaded.file.alerts, path=loaded.path)
    url = store_url or loaded.file.store or api.DEFAULT_STORE
    results = [_run_step(loaded, kind, step, url, mlflow_uri) for step in steps]
    outcome = None
    if alerts is not None and any(s.status in ("regression", "error") for s in results):
        outcome = send_alert(_alert(loaded, kind, results), alerts)
    return PipelineResult(kind, loaded.file.name, loaded.file.tenant, results, outcome)
