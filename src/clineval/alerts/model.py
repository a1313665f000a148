"""What an alert says: a kind, a title, a summary and the metrics that regressed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args
from urllib.parse import urlsplit

from clineval.analysis.gate import GateResult

AlertKind = Literal["gate_failed", "nightly_regression", "pipeline_failed"]
KINDS: tuple[str, ...] = get_args(AlertKind)


@dataclass(frozen=True)
class AlertRow:
    """One regressed metric; ``stratum`` is ``""`` for the task-level value."""

    task: str
    metric: str
    stratum: str = ""
    baseline: float | None = None
    candidate: float | None = None
    delta: float | None = None
    p: float | None = None

    @property
    def label(self) -> str:
        return f"{self.metric} ({self.stratum})" if self.stratum else self.metric


@dataclass(frozen=True)
class Alert:
    """A message for people: rendered by ``slack_payload`` and ``email_message``."""

    kind: AlertKind
    title: str
    summary: str = ""
    rows: list[AlertRow] = field(default_factory=list)
    run_id: str = ""
    tenant: str = ""
    baseline_name: str = ""
    baseline_version: int | None = None
    report_url: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown alert kind {self.kind!r}; use one of: {', '.join(KINDS)}")
        if self.report_url is not None and urlsplit(self.report_url).scheme not in ("http", "https"):
            raise ValueError("report_url must be an http:// or https:// URL")


def alert_from_gate(
    result: GateResult, *, kind: AlertKind = "gate_failed", report_url: str | None = None
) -> Alert:
    """The alert for a failed gate: only its failed rows. A passed gate is a ``ValueError``."""
    failures = result.failures
    if not failures:
        raise ValueError(f"gate of run {result.run_id} passed: nothing to alert")
    what = "nightly regression" if kind == "nightly_regression" else f"gate failed ({result.mode})"
    title = (
        f"{what}: run {result.run_id[:12]} vs baseline {result.baseline_name} "
        f"v{result.baseline_version} (tenant {result.tenant})"
    )
    summary = f"{len(failures)} gating metric(s) below the baseline"
    rows = [AlertRow(r.task, r.metric, r.stratum, r.baseline, r.candidate, r.delta, r.p) for r in failures]
    return Alert(
        kind=kind,
        title=title,
        summary=summary,
        rows=rows,
        run_id=result.run_id,
        tenant=result.tenant,
        baseline_name=result.baseline_name,
        baseline_version=result.baseline_version,
        report_url=report_url,
    )
