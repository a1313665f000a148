"""Apache Airflow DAGs for clineval's scheduled pipelines (Airflow 2.7+ and 3.x).

* ``clineval_nightly`` (02:00 UTC daily): ``run_pipeline("nightly", config)`` — Tier 1 on stored production
  recommendations, Tier 2 on the curated query set, Tier 3 on the golden set, store, regression check,
  alert. The task fails, without retries, when the pipeline does not pass.
* ``clineval_weekly`` (04:00 UTC Sundays): ``run_pipeline("weekly", config)`` — Tier 4, tracked. A run
  that does not pass is logged and returned in the XCom, but the task succeeds.
* ``clineval_sharded_suite`` (no schedule: triggered): one suite fanned out over 4 mapped ``run_shard``
  tasks (``clineval run SUITE --shard K/4 --run-id R``), then ``finalize`` (``clineval finalize R``); built
  by :func:`sharded_suite_dag`, which makes such a DAG for any suite, store and N.

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
    SHARD_STORE_ENV,
    SHARD_STORE_VARIABLE,
    SHARD_SUITE_ENV,
    SHARD_SUITE_VARIABLE,
    PipelineNotRetryable,
    finalize_clineval_run,
    resolve_config_path,
    resolve_setting,
    run_clineval_pipeline,
    run_clineval_shard,
    shard_run_name,
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


def _not_retryable(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except PipelineNotRetryable as err:
        raise AirflowFailException(str(err)) from err


def sharded_suite_dag(
    dag_id: str,
    suite_path: str | os.PathLike[str] | None = None,
    store_url: str | None = None,
    shards: int = 4,
    run_id: str | None = None,
    *,
    concurrency: int = 16,
    schedule: Any = None,
    default_args: dict[str, Any] | None = None,
    **dag_kwargs: Any,
) -> Any:
    """A DAG that runs one clineval suite as ``shards`` mapped tasks writing into one run, then finalizes it.

    ``resolve_run`` -> ``run_shard`` mapped over ``k = 0 .. shards-1`` (dynamic task mapping: one task
    instance per shard, each calling ``clineval.runs.run.run_suite(RunRequest(..., shard=(k, shards),
    run_id=R, cache_path=None))`` in its worker) -> ``finalize`` (``clineval.runs.run.finalize(R,
    store_url)``, once every shard succeeded).

    ``suite_path`` / ``store_url``: when None, read when the task runs from the Airflow Variables
    ``clineval_shard_suite`` / ``clineval_shard_store``, else ``$CLINEVAL_SHARD_SUITE`` /
    ``$CLINEVAL_SHARD_STORE`` on the worker. The store must be one every worker reaches (PostgreSQL).
    ``run_id``: the clineval run name; None gives each DAG run its own (``"<dag_id>:<Airflow run id>"``),
    so a retried shard task resumes the same run. ``concurrency`` is per shard: for an endpoint that takes
    T concurrent calls, pass T // shards (docs/runs/sharding.md).
    """
    if shards < 1:
        raise ValueError(f"shards must be at least 1, not {shards}")
    suite = None if suite_path is None else os.fspath(suite_path)

    @dag(
        dag_id=dag_id,
        description=f"clineval: one suite over {shards} shards, then finalize",
        schedule=schedule,
        start_date=dag_kwargs.pop("start_date", START_DATE),
        catchup=dag_kwargs.pop("catchup", False),
        default_args=DEFAULT_ARGS if default_args is None else default_args,
        tags=dag_kwargs.pop("tags", ["clineval", "sharded"]),
        doc_md=sharded_suite_dag.__doc__,
        **dag_kwargs,
    )
    def sharded() -> None:
        @task(task_id="resolve_run")
        def resolve_run(**context: Any) -> dict[str, Any]:
            def setting(explicit: str | None, variable: str, env: str) -> str:
                value = None if explicit is not None else Variable.get(variable, None)
                return _not_retryable(resolve_setting, explicit, value, env)

            return {
                "suite_path": setting(suite, SHARD_SUITE_VARIABLE, SHARD_SUITE_ENV),
                "store_url": setting(store_url, SHARD_STORE_VARIABLE, SHARD_STORE_ENV),
                "run_id": shard_run_name(dag_id, str(context["run_id"]), run_id),
                "shards": shards,
                "concurrency": concurrency,
            }

        @task(task_id="run_shard", execution_timeout=timedelta(hours=6))
        def run_shard(job: dict[str, Any], k: int) -> dict[str, Any]:
            return _not_retryable(run_clineval_shard, job, k)  # type: ignore[no-any-return]

        @task(task_id="finalize", execution_timeout=timedelta(hours=2))
        def finalize(job: dict[str, Any], outcomes: Any) -> dict[str, Any]:
            done = sorted(int(o["shard"]) for o in outcomes)
            if done != list(range(shards)):  # the trigger rule already waits for all: a guard, not a wait
                raise AirflowFailException(f"shards done {done}, expected 0..{shards - 1}")
            return _not_retryable(finalize_clineval_run, job)  # type: ignore[no-any-return]

        job = resolve_run()
        outcomes = run_shard.partial(job=job).expand(k=list(range(shards)))
        finalize(job, outcomes)

    return sharded()


# The example: the suite and store come from Variables / the environment when it runs (README.md).
sharded_example_dag = sharded_suite_dag("clineval_sharded_suite", shards=4)
