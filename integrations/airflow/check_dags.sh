#!/usr/bin/env bash
# Load integrations/airflow/ with Airflow's own DagBag, in a virtualenv holding Airflow and clineval
# together, and run tests/test_airflow_dag.py there (the Airflow tests must run, not skip). Then, with a
# PostgreSQL server, run the sharded DAG (clineval_sharded_suite: the demo suite over 4 mapped shard tasks,
# then finalize) with Airflow's own local test runner, dag.test(), into a fresh database, and check the run
# equals an unsharded run case for case (integrations/airflow/check_sharded_dag.py).
#
#   bash integrations/airflow/check_dags.sh
#
# Environment:
#   PYTHON                 interpreter for the virtualenv (default: python3)
#   AIRFLOW_SPEC           what to pip install (default: 'apache-airflow>=3,<4'; Airflow 2 cannot share an
#                          environment with clineval: it pins SQLAlchemy<2)
#   CLINEVAL_AIRFLOW_VENV  reuse or create the virtualenv here instead of a throwaway one
#   CLINEVAL_TEST_POSTGRES_URL  a PostgreSQL server (eval "$(scripts/test_postgres.sh start)"): the sharded
#                          DAG runs against a new database there (created, then dropped); unset: skipped,
#                          or a failure with CLINEVAL_REQUIRE_POSTGRES=1 (as in .ci/run)
#
# The DagBag check needs nothing but PyPI: no metadata database, no scheduler. The dag.test() run uses a
# throwaway SQLite metadata database under a temp AIRFLOW_HOME.
set -euo pipefail
cd "$(dirname "$0")/../.."

PYTHON="${PYTHON:-python3}"
AIRFLOW_SPEC="${AIRFLOW_SPEC:-apache-airflow>=3,<4}"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
venv="${CLINEVAL_AIRFLOW_VENV:-$scratch/venv}"

if [ ! -x "$venv/bin/python" ]; then
    "$PYTHON" -m venv "$venv"
fi
# One resolver pass for Airflow and clineval together: fails here if they cannot coexist.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "$AIRFLOW_SPEC" pytest -e '.[postgresql]'
"$venv/bin/python" -m pip check

export AIRFLOW_HOME="$scratch/airflow_home"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export CLINEVAL_REQUIRE_AIRFLOW=1
"$venv/bin/python" -c 'import airflow; print("airflow", airflow.__version__)'
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/test_airflow_dag.py

if [ -z "${CLINEVAL_TEST_POSTGRES_URL:-}" ]; then
    if [ "${CLINEVAL_REQUIRE_POSTGRES:-}" = 1 ]; then
        echo "error: CLINEVAL_REQUIRE_POSTGRES=1 but CLINEVAL_TEST_POSTGRES_URL is not set" >&2
        exit 1
    fi
    echo "SKIP: sharded DAG run (no CLINEVAL_TEST_POSTGRES_URL)"
    exit 0
fi
# dag.test() creates its DAG run in the metadata database, from the DAG as serialized there.
export AIRFLOW__CORE__DAGS_FOLDER="$PWD/integrations/airflow"
"$venv/bin/airflow" db migrate >"$scratch/db_migrate.log" 2>&1 || { cat "$scratch/db_migrate.log"; exit 1; }
"$venv/bin/airflow" dags reserialize >"$scratch/reserialize.log" 2>&1 || { cat "$scratch/reserialize.log"; exit 1; }
# Airflow's task logs go to the log file; the summary lines (and any failure) to the terminal.
if ! "$venv/bin/python" integrations/airflow/check_sharded_dag.py >"$scratch/sharded.log" 2>&1; then
    cat "$scratch/sharded.log"
    exit 1
fi
grep -E '^(dag.test|sharded run|unsharded run|  overall|OK:)' "$scratch/sharded.log"
