"""CI check (run by check_dags.sh in its Airflow venv): the example DAG ``clineval_sharded_suite`` run with
Airflow's own local test runner (``dag.test()``) fans the demo suite out over 4 mapped shard tasks into a
fresh PostgreSQL database and finalizes it; the run must equal an unsharded run of the same suite case for
case (task, case id, every scorer's value and label, failed, reference, metadata) and in its aggregates.

    CLINEVAL_TEST_POSTGRES_URL=postgresql+psycopg://clineval@127.0.0.1:55432/postgres \\
        python integrations/airflow/check_sharded_dag.py

Exits 1 on any difference. The database is created with a unique name and dropped at the end.
"""

from __future__ import annotations

import os
import sys
import uuid
from importlib import resources
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

AIRFLOW_DIR = Path(__file__).resolve().parent
DAG_ID = "clineval_sharded_suite"
SHARDS = 4


def _check(server: str, store_url: str) -> list[str]:
    demo = Path(str(resources.files("clineval.demo") / "suite.yaml"))
    # The example DAG reads its suite and store from Airflow Variables; AIRFLOW_VAR_* sets them.
    os.environ["AIRFLOW_VAR_CLINEVAL_SHARD_SUITE"] = str(demo)
    os.environ["AIRFLOW_VAR_CLINEVAL_SHARD_STORE"] = store_url

    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(AIRFLOW_DIR))
    if bag.import_errors:
        return [f"DagBag import errors: {bag.import_errors}"]
    dag = bag.dags[DAG_ID]
    for t in dag.tasks:
        t.retries = 0  # a failure here must fail CI now, not wait 15 minutes for a retry

    dagrun = dag.test()
    print(f"dag.test(): {DAG_ID} run {dagrun.run_id}: {dagrun.state}")
    problems: list[str] = []
    if str(dagrun.state) != "success":
        problems.append(f"the DAG run ended {dagrun.state}")

    sys.path.append(str(AIRFLOW_DIR))
    from clineval_airflow_tasks import shard_run_name

    from clineval.runs import run as api
    from clineval.store import ResultStore
    from clineval.store.shards import shard_run_id
    from clineval.testing import case_records

    name = shard_run_name(DAG_ID, dagrun.run_id)
    run_id = shard_run_id(name)
    whole = api.run_suite(api.RunRequest(suite_path=demo, store_url=store_url, cache_path=None))
    with ResultStore(store_url) as store:
        sharded = store.load_run(run_id)
        rows = store.shards.rows(run_id)
    shard_rows = [(r.shard, r.of, r.status) for r in rows]
    print(f"sharded run {name} ({run_id}): {len(sharded.results)} cases, shards {shard_rows}")
    print(f"unsharded run {whole.info.run_id}: {len(whole.results)} cases")
    if sharded.info.status != "finished":
        problems.append(f"sharded run status {sharded.info.status}")
    if shard_rows != [(k, SHARDS, "complete") for k in range(SHARDS)]:
        problems.append(f"run_shards rows {shard_rows}")
    if not 0 < len(whole.results) == sum(r.cases for r in rows):
        problems.append(f"{sum(r.cases for r in rows)} cases over the shards, {len(whole.results)} unsharded")
    a, b = case_records(sharded), case_records(whole)
    if a != b:
        differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        problems.append(f"{len(differ)} cases differ, e.g. {differ[:5]}")
    if sharded.overall != whole.overall:
        problems.append(f"overall differs: {sharded.overall} vs {whole.overall}")
    aggregates = [{t: x.model_dump(mode="json") for t, x in r.aggregates.items()} for r in (sharded, whole)]
    if aggregates[0] != aggregates[1]:
        problems.append("aggregates differ")
    for metric, value in sorted(whole.overall.items()):
        print(f"  overall {metric}: sharded {sharded.overall.get(metric)}, unsharded {value}")
    return problems


def main() -> int:
    server = os.environ.get("CLINEVAL_TEST_POSTGRES_URL")
    if not server:
        print('error: CLINEVAL_TEST_POSTGRES_URL is not set (eval "$(scripts/test_postgres.sh start)")')
        return 2
    database = f"clineval_airflow_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{database}"'))
    try:
        store_url = make_url(server).set(database=database).render_as_string(hide_password=False)
        problems = _check(server, store_url)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        admin.dispose()
    for problem in problems:
        print(f"FAIL: {problem}")
    if problems:
        return 1
    print(f"OK: {DAG_ID} over {SHARDS} mapped shards equals an unsharded run, case for case and aggregates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
