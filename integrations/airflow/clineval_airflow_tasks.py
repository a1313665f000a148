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
