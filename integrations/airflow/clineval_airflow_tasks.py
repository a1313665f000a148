"""The scheduler-independent part of clineval's Airflow DAGs (see ``clineval_dags.py``).

This module imports neither Airflow nor clineval at import time, so it can be unit-tested without
Airflow installed and parsed cheaply by Airflow's DAG processor. It decides three things:

* which pipeline config to use (:func:`resolve_config_path`);
* how to call :func:`clineval.pipelines.run_pipeline` and what to hand back as the task's XCom
  (:func:`run_clineval_pipeline`);
* which failures are *not* worth retrying (:class:`PipelineNotRetryable`): a pipeline whose checks did
  not pass (a regression will not go away on retry), a config clineval rejects, and clineval missing
  from the worker's environment. Anything else (database down, network error, a killed worker) is
  left to propagate, so the scheduler's ordinary retries handle it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)

#: Name of the Airflow Variable holding the config path (Airflow also reads it from the environment
#: variable ``AIRFLOW_VAR_CLINEVAL_PIPELINE_CONFIG``).
CONFIG_VARIABLE = "clineval_pipeline_config"
#: Plain environment variable consulted when the Airflow Variable is unset.
CONFIG_ENV = "CLINEVAL_PIPELINE_CONFIG"
#: Used when neither is set.
DEFAULT_CONFIG = "/opt/clineval/pipeline.yaml"

KINDS = ("nightly", "weekly")


class PipelineNotRetryable(Exception):
    """The pipeline failed for a reason that retrying the task will not fix."""


class PipelineChecksFailed(PipelineNotRetryable):
    """The pipeline ran to the end but its checks did not pass (e.g. a regression was found)."""


class PipelineConfigError(PipelineNotRetryable):
    """clineval rejected the pipeline config, or clineval is not installed where the task runs."""


def resolve_config_path(variable_value: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The config path: the Airflow Variable if set, else ``$CLINEVAL_PIPELINE_CONFIG``, else the default."""
    env = os.environ if environ is None else environ
    for candidate in (variable_value, env.get(CONFIG_ENV)):
        if candidate is not None and str(candidate).strip():
            return str(candidate).strip()
    return DEFAULT_CONFIG


def _default_runner() -> Callable[[str, str], Any]:
    try:
        from clineval.pipelines import run_pipeline
    except ModuleNotFoundError as err:
        if err.name is not None and err.name.split(".")[0] == "clineval":
            raise PipelineConfigError(
                f"clineval.pipelines cannot be imported where this task runs ({err}) — "
                "pip install a clineval that has `clineval pipeline` into the Airflow worker's environment"
            ) from err
        raise
    return run_pipeline


def run_clineval_pipeline(
    kind: str,
    config_path: str,
    *,
    fail_on_not_passed: bool = True,
    runner: Callable[[str, str], Any] | None = None,
) -> dict[str, Any]:
    """Run ``clineval.pipelines.run_pipeline(kind, config_path)`` and return a JSON-able outcome.

    Raises :class:`PipelineConfigError` on a config clineval rejects, and :class:`PipelineChecksFailed`
    when the pipeline did not pass and ``fail_on_not_passed`` is true. Alerts are sent by clineval
    itself; this only decides how the scheduler records the run. ``runner`` replaces ``run_pipeline``
    (for tests).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown pipeline kind {kind!r}; expected one of {', '.join(KINDS)}")
    run = runner if runner is not None else _default_runner()
    from clineval.core.errors import UserInputError

    log.info("clineval %s pipeline: config %s", kind, config_path)
    try:
        result = run(kind, config_path)
    except UserInputError as err:
        raise PipelineConfigError(f"clineval {kind} pipeline: bad config {config_path}: {err}") from err

    summary = result.summary()
    outcome: dict[str, Any] = {
        "kind": kind,
        "config": str(config_path),
        "passed": bool(result.passed),
        "run_ids": [str(run_id) for run_id in result.run_ids],
        "summary": summary,
    }
    log.info("clineval %s pipeline summary:\n%s", kind, summary)
    if not outcome["passed"]:
        message = (
            f"clineval {kind} pipeline did not pass (runs: {', '.join(outcome['run_ids']) or 'none'})\n"
            f"{summary}"
        )
        if fail_on_not_passed:
            raise PipelineChecksFailed(message)
        log.warning("%s", message)
    return outcome


# --- sharded runs (issue 16): one suite fanned out over N mapped tasks, then finalized -----------------

#: Airflow Variables (or ``AIRFLOW_VAR_<NAME>`` environment variables) the example sharded DAG reads.
SHARD_SUITE_VARIABLE = "clineval_shard_suite"
SHARD_STORE_VARIABLE = "clineval_shard_store"
#: Plain environment variables consulted when the Variables are unset.
SHARD_SUITE_ENV = "CLINEVAL_SHARD_SUITE"
SHARD_STORE_ENV = "CLINEVAL_SHARD_STORE"

_MAX_RUN_NAME = 64  # clineval's --run-id limit


def resolve_setting(
    explicit: str | None, variable_value: str | None, env_name: str, environ: Mapping[str, str] | None = None
) -> str:
    """The first non-blank of: the DAG factory's argument, the Airflow Variable, ``$env_name``."""
    env = os.environ if environ is None else environ
    for candidate in (explicit, variable_value, env.get(env_name)):
        if candidate is not None and str(candidate).strip():
            return str(candidate).strip()
    raise PipelineConfigError(
        f"no value for {env_name}: set it in the DAG, as an Airflow Variable or on the worker"
    )


def shard_run_name(dag_id: str, airflow_run_id: str, explicit: str | None = None) -> str:
    """The clineval ``--run-id`` every shard of one DAG run shares: ``explicit`` if given, else
    ``"<dag_id>:<Airflow run id>"`` (a new clineval run per DAG run, the same for a retried task), or, when
    that is longer than 64 characters, its uuid5 as 32 hex digits (which clineval takes as the run id)."""
    if explicit is not None and explicit.strip():
        return explicit.strip()
    name = f"{dag_id}:{airflow_run_id}"
    if len(name) <= _MAX_RUN_NAME:
        return name
    import uuid

    return uuid.uuid5(uuid.NAMESPACE_URL, f"clineval-airflow:{name}").hex


def _user_input_error() -> type[Exception]:
    try:
        from clineval.core.errors import UserInputError
    except ModuleNotFoundError as err:
        raise PipelineConfigError(f"clineval cannot be imported where this task runs ({err})") from err
    return UserInputError


def run_clineval_shard(job: Mapping[str, Any], k: int) -> dict[str, Any]:
    """Shard ``k`` of ``job["shards"]``: ``clineval.runs.run.run_suite`` with ``shard=(k, n)`` into the shared
    run.

    ``job``: ``suite_path``, ``store_url``, ``run_id`` (the clineval run name), ``shards`` (N) and
    ``concurrency`` (per shard: see docs/runs/sharding.md). A suite or store clineval rejects raises
    :class:`PipelineConfigError` (not retryable); anything else propagates for the scheduler's retries
    (re-running a shard resumes it: it runs only its cases not stored yet).
    """
    user_error = _user_input_error()
    from pathlib import Path

    from clineval.runs import run as api

    n = int(job["shards"])
    log.info("clineval shard %d/%d of run %s: suite %s", k, n, job["run_id"], job["suite_path"])
    try:
        result = api.run_suite(
            api.RunRequest(
                suite_path=Path(job["suite_path"]),
                store_url=job["store_url"],
                shard=(int(k), n),
                run_id=job["run_id"],
                cache_path=None,
                concurrency=int(job.get("concurrency", 16)),
            )
        )
    except user_error as err:
        raise PipelineConfigError(f"clineval shard {k}/{n}: {err}") from err
    return {
        "shard": int(k),
        "of": n,
        "run_id": result.info.run_id,
        "finalized": result.info.status == "finished",  # this shard was the last one and aggregated the run
    }


def finalize_clineval_run(job: Mapping[str, Any]) -> dict[str, Any]:
    """``clineval.runs.run.finalize`` once every shard task succeeded: aggregates the run (again, if the last
    shard already did) and returns its id, case count and overall scores. Missing shards (clineval names
    them) are not retryable: re-run the failed shard task, then this one."""
    user_error = _user_input_error()
    from clineval.runs import run as api

    try:
        run = api.finalize(job["run_id"], job["store_url"])
    except user_error as err:
        raise PipelineConfigError(f"clineval finalize {job['run_id']}: {err}") from err
    outcome = {
        "run_name": job["run_id"],
        "run_id": run.info.run_id,
        "status": run.info.status,
        "cases": len(run.results),
        "overall": {str(key): value for key, value in run.overall.items()},
    }
    log.info("clineval run %s finalized: %d cases", run.info.run_id, len(run.results))
    return outcome
