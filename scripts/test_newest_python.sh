#!/usr/bin/env bash
# Run the tests again on the newest Python this machine has: CI (.ci/run) tests the oldest supported one,
# python3 (3.11 on the CI image), in .venv, then calls this for the newest.
#
#   bash scripts/test_newest_python.sh [pytest args...]      (no args: -q, the whole suite)
#
# The interpreter is $NEWEST_PYTHON, else the newest of Python 3.14, 3.13, 3.12 found (pyenv's versions, then
# python3.N on PATH) that runs; none, or only the python3 version: a printed SKIP and exit 0. The virtualenv
# is a throwaway one ($CLINEVAL_NEWEST_VENV: created there, or reused). The environment passes through, so
# with CLINEVAL_TEST_POSTGRES_URL and CLINEVAL_REQUIRE_POSTGRES=1 the store tests run on PostgreSQL here too.
set -euo pipefail
cd "$(dirname "$0")/.."

minor_version() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])'; }

find_newest() {
    local root minor candidate
    root="$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"
    for minor in 14 13 12; do
        for candidate in "$root"/versions/3."$minor".*/bin/python3 "$(command -v "python3.$minor" || true)"; do
            # pyenv's shims exist for versions that are not active and fail when run: try each one
            if [ -x "$candidate" ] && "$candidate" -c 'import sys' >/dev/null 2>&1; then
                echo "$candidate"
                return 0
            fi
        done
    done
    return 0
}

python="${NEWEST_PYTHON:-$(find_newest)}"
oldest="$(minor_version python3)"
if [ -z "$python" ]; then
    echo "SKIP tests on the newest Python: no Python 3.12-3.14 on this machine (python3 is $oldest)"
    exit 0
fi
version="$(minor_version "$python")"
if [ "$version" = "$oldest" ]; then
    echo "SKIP tests on the newest Python: the newest found ($python) is python3's version, $oldest"
    exit 0
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
venv="${CLINEVAL_NEWEST_VENV:-$scratch/venv}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q -e '.[dev]'
echo "tests on Python $version ($python)"
"$venv/bin/python" -m pytest "${@:--q}"
