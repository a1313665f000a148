#!/usr/bin/env bash
# Load integrations/airflow/ with Airflow's own DagBag, in a virtualenv holding Airflow and clineval
# together, and run tests/test_airflow_dag.py there (the Airflow tests must run, not skip).
#
#   bash integrations/airflow/check_dags.sh
#
# Environment:
#   PYTHON                 interpreter for the virtualenv (default: python3)
#   AIRFLOW_SPEC           what to pip install (default: 'apache-airflow>=3,<4'; Airflow 2 cannot share an
#                          environment with clineval: it pins SQLAlchemy<2)
#   CLINEVAL_AIRFLOW_VENV  reuse or create the virtualenv here instead of a throwaway one
#
# Needs nothing but PyPI: no metadata database, no scheduler, no network access at parse time.
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
"$venv/bin/python" -m pip install -q --disable-pip-version-check "$AIRFLOW_SPEC" pytest -e .
"$venv/bin/python" -m pip check

export AIRFLOW_HOME="$scratch/airflow_home"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export CLINEVAL_REQUIRE_AIRFLOW=1
"$venv/bin/python" -c 'import airflow; print("airflow", airflow.__version__)'
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/test_airflow_dag.py
