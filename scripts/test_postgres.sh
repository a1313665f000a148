#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1 for the store tests and benchmarks.
#
#   eval "$(scripts/test_postgres.sh start)"   # installs Debian's postgresql if missing, prints an export line
#   scripts/test_postgres.sh stop
#   scripts/test_postgres.sh restart [SECONDS]   # stop the server, wait SECONDS (default 0), start it again
#
# CLINEVAL_PG_STATE and CLINEVAL_PG_PORT pick another cluster (a test restarting its own server leaves the
# shared one alone).
# The cluster lives in a temporary directory owned by the `postgres` user (the server refuses to run as
# root), trusts local connections and is deleted by `stop`. Its URL is exported as CLINEVAL_TEST_POSTGRES_URL.
set -euo pipefail

STATE=${CLINEVAL_PG_STATE:-/tmp/clineval-test-postgres}
PORT=${CLINEVAL_PG_PORT:-55432}
FSYNC=${CLINEVAL_PG_FSYNC:-off}  # off for tests; benchmarks start it with CLINEVAL_PG_FSYNC=on

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

pg_bin() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    echo "$found"
}

install_postgres() {
    if [ -n "$(pg_bin)" ]; then return; fi
    echo "installing Debian's postgresql package" >&2
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get install -y -q postgresql >&2 || { as_root apt-get update -q >&2 && as_root apt-get install -y -q postgresql >&2; }
}

run_as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
    install_postgres
    local bin data
    bin=$(pg_bin)
    data="$STATE/data"
    stop_quiet
    mkdir -p "$STATE"
    if [ "$(id -u)" = 0 ]; then chown postgres "$STATE"; fi
    run_as_owner "$bin/initdb" -D "$data" -U clineval --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    run_as_owner "$bin/pg_ctl" -D "$data" -l "$STATE/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $STATE -c max_connections=100 -c fsync=$FSYNC" start >&2
    echo "export CLINEVAL_TEST_POSTGRES_URL=postgresql+psycopg://clineval@127.0.0.1:$PORT/postgres"
}

restart() {
    local bin data
    bin=$(pg_bin)
    data="$STATE/data"
    [ -f "$data/postmaster.pid" ] || { echo "no server running in $STATE" >&2; exit 1; }
    run_as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >&2
    sleep "${1:-0}"
    run_as_owner "$bin/pg_ctl" -D "$data" -l "$STATE/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $STATE -c max_connections=100 -c fsync=$FSYNC" start >&2
}

stop_quiet() {
    local bin
    bin=$(pg_bin)
    if [ -n "$bin" ] && [ -f "$STATE/data/postmaster.pid" ]; then
        run_as_owner "$bin/pg_ctl" -D "$STATE/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$STATE"
}

case "${1:-}" in
    start) start ;;
    stop) stop_quiet ;;
    restart) restart "${2:-0}" ;;
    *) echo "usage: $0 start|stop|restart [SECONDS]" >&2; exit 2 ;;
esac
