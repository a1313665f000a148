"""The plan of a run: the suite loaded and checked, and the stored row of a new run.

Second step of the lifecycle (request -> plan -> execute -> finalize): everything that would make a run
"finish" with exit 0 without meaning anything (an empty task, predictions that match no case, a combined score
over metrics no scorer produces, an endpoint that is not there) is refused here, before the run is stored.
"""

from __future__ import annotations

from datetime import UTC, datetime

from clineval import systems
from clineval.analysis.case_summary import SummaryPlan
from clineval.config import BuiltSuite
from clineval.core import RunInfo
from clineval.core.errors import UserInputError
from clineval.metrics.combine import check_strict, combined_spec
from clineval.runs.provenance import effective_options, provenance
from clineval.runs.request import RunRequest
from clineval.runs.stored import PLAN_KEY


def check_inputs(suite: BuiltSuite, request: RunRequest | None = None) -> None:
    """Before the run is stored: what would "finish" with exit 0 (empty task, unmatched predictions...)."""
    for task in suite.tasks:
        if not task.cases:
            dataset = task.spec.dataset
            raise UserInputError(
                f"task {task.spec.id}: dataset {dataset.args.get('path', '')} ({dataset.type}) has no cases",
                path=suite.spec.source,
                hint="check the dataset path and its filters (split, limit)",
            )
        check = getattr(task.system, "check_cases", None)
        if callable(check):
            check(task.cases)
    if suite.spec.combined is not None:
        try:
            combined = combined_spec(suite.spec.combined)
        except (ValueError, OSError) as err:
            raise UserInputError(f"combined_score: {err}", path=suite.spec.source) from None
        check_strict(suite.spec, {t.spec.id: t.scorers for t in suite.tasks}, combined)
    systems.preflight_suite(suite.tasks, request.policy.timeout_s if request and request.preflight else None)


RESUME_SAME_SUITE = "resume with the suite file and data of the original run, or start a new run"


def check_same_suite(info: RunInfo, suite: BuiltSuite, hint: str) -> None:
    """A stored run is continued (``--resume``, another shard) only from the suite it was made from."""
    if info.suite.spec_hash != suite.spec.spec_hash:
        raise UserInputError(
            f"run {info.run_id} was made from a different suite (its datasets, systems, scorers, limit "
            "or seed differ from this suite file now)",
            path=suite.spec.source,
            hint=hint,
        )


def new_run_info(suite: BuiltSuite, request: RunRequest, run_id: str, **extra: object) -> RunInfo:
    """The stored row of a new run of ``suite`` (``extra``: more provenance, e.g. ``shards``)."""
    sizes = {t.spec.id: len(t.cases) for t in suite.tasks}
    options = {t.spec.id: [effective_options(s) for s in t.scorers] for t in suite.tasks}
    return RunInfo(
        run_id=run_id,
        suite=suite.spec,
        status="running",
        created_at=datetime.now(UTC),
        provenance={
            **provenance(suite.spec, sizes, options),
            PLAN_KEY: summary_plan(suite).fingerprint,
            **extra,
        },
        tenant_id=request.tenant_id,
        run_type=request.run_type,
    )


def summary_plan(suite: BuiltSuite) -> SummaryPlan:
    """What each result's case summary keeps (``clineval.analysis.case_summary``)."""
    return SummaryPlan.for_suite(suite.spec, {t.spec.id: t.scorers for t in suite.tasks})
