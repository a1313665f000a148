"""Apache Airflow DAGs for clineval's scheduled pipelines (Airflow 2.7+ and 3.x).

* ``clineval_nightly`` (02:00 UTC daily): ``run_pipeline("nightly", config)`` — Tier 1 on stored production
  recommendations, Tier 2 on the curated query set, Tier 3 on the golden set, store, regression check,
  alert. The task fails, without retries, when the pipeline does not pass.
* ``clineval_weekly`` (04:00 UTC Sundays): ``run_pipeline("weekly", config)`` — Tier 4, tracked. A run
  that does not pass is logged and returned in the XCom, but the task succeeds.

The config path comes from the Airflow Variable ``clineval_pipeline_config`` (or the environment variable
``AIRFLOW_VAR_CLINEVAL_PIPELINE_CONFIG``), else ``$CLINEVAL_PIPELINE_CONFIG`` on the worker, else
``/opt/clineval/pipeline.yaml``. It is read when the task runs, never while the DAG file is parsed.

Put this file and ``clineval_airflow_tasks.py`` side by side in the DAGs folder; see README.md.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

try:  # Airflow 3: the Task SDK is the public authoring interface
    from airflow.sdk import Variable, dag, task
    from airflow.sdk.exceptions import AirflowFailException
except ImportError:  # Airflow 2.7 - 2.11
    from airflow.decorators import dag, task
    from airflow.exceptions import AirflowFailException
    from airflow.models import Variable

# Airflow 2 puts the DAGs folder on sys.path, Airflow 3 the bundle folder; a DagBag pointed at another
# folder (tests, `airflow dags list -S`) does neither, so make the sibling module importable here too.
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.append(_HERE)

from clineval_airflow_tasks import (  # noqa: E402
    CONFIG_VARIABLE,
    PipelineNotRetryable,
    resolve_config_path,
    run_clineval_pipeline,
)

START_DATE = datetime(2025, 1, 1, tzinfo=UTC)

# Retries are for infrastructure trouble (database, network, a lost worker). A pipeline that ran and
# did not pass, or a bad config, raises AirflowFailException, which skips the remaining retries.
DEFAULT_ARGS: dict[str, Any] = {
    "owner": "clineval",
    "retries": 2,
    "retry_delay": timedelta(minutes=15),
}


def _run(kind: str, *, fail_on_not_passed: bool) -> dict[str, Any]:
    # Variable.get(key, default): the second positional parameter is the default in Airflow 2 and 3.
    config = resolve_config_path(Variable.get(CONFIG_VARIABLE, None))
    try:
        return run_clineval_pipeline(kind, config, fail_on_not_passed=fail_on_not_passed)
    except PipelineNotRetryable as err:
        raise AirflowFailException(str(err)) from err


@dag(
    dag_id="clineval_nightly",
    description="clineval nightly: Tier 1-3 checks, store, regression check, alert",
    schedule="0 2 * * *",
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    tags=["clineval"],
    doc_md=__doc__,
)
def clineval_nightly() -> None:
    @task(task_id="run_nightly_pipeline", execution_timeout=timedelta(hours=6))
    def run_nightly_pipeline() -> dict[str, Any]:
        return _run("nightly", fail_on_not_passed=True)

    run_nightly_pipeline()


@dag(
    dag_id="clineval_weekly",
    description="clineval weekly: Tier 4, tracked",
    schedule="0 4 * * 0",
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    tags=["clineval"],
    doc_md=__doc__,
)
def clineval_weekly() -> None:
    @task(task_id="run_weekly_pipeline", execution_timeout=timedelta(hours=12))
    def run_weekly_pipeline() -> dict[str, Any]:
        return _run("weekly", fail_on_not_passed=True)  # weekly steps never gate: only a failed step fails it

    run_weekly_pipeline()


nightly_dag = clineval_nightly()
weekly_dag = clineval_weekly()
