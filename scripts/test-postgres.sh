#!/usr/bin/env bash
# Throwaway PostgreSQL 15 cluster for tests, run from the raw binaries on a unix socket only.
#
#   URL=$(bash scripts/test-postgres.sh start DIR)   # prints the libpq URL on stdout (logs go to stderr)
#   bash scripts/test-postgres.sh stop DIR
#
# As root, the tools run as `postgres` through runuser (initdb refuses root). If `postgres` cannot enter DIR,
# the cluster lives in a postgres-owned directory under ${TMPDIR:-/tmp} named by DIR/cluster-location.
# fsync, synchronous_commit and full_page_writes are off: fast, never for data you keep.
set -euo pipefail

BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
command=${1:-}
dir=${2:-}
if [[ -z "$command" || -z "$dir" ]]; then
    echo "usage: $0 start|stop DIR" >&2
    exit 2
fi

as_postgres() {
    if [[ $(id -u) -eq 0 ]]; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

base_of() {
    if [[ -f "$dir/cluster-location" ]]; then cat "$dir/cluster-location"; else echo "$dir"; fi
}

case "$command" in
start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    base=$(base_of)
    if [[ ! -f "$dir/cluster-location" && $(id -u) -eq 0 ]] && ! as_postgres test -x "$dir" -a -r "$dir"; then
        base=$(mktemp -d "${TMPDIR:-/tmp}/zevauth-pg-XXXXXX")
        echo "$base" >"$dir/cluster-location"
    fi
    # Keep the socket path short (limit 107 bytes).
    run="$base/run"
    if (( ${#run} > 80 )); then
        echo "test-postgres: $run is too long for a unix socket path; use a shorter DIR" >&2
        exit 1
    fi
    mkdir -p "$base/pgdata" "$run"
    chmod 700 "$base/pgdata"
    if [[ $(id -u) -eq 0 ]]; then
        if [[ "$base" == "$dir" ]]; then chown postgres:postgres "$base/pgdata" "$run"; else chown -R postgres:postgres "$base"; fi
    fi
    if [[ ! -f "$base/pgdata/PG_VERSION" ]]; then
        # Its progress report goes nowhere; its warnings and errors (stderr) stay visible.
        as_postgres "$BIN/initdb" -D "$base/pgdata" -U postgres -A trust -E UTF8 --locale=C --no-sync \
            --no-instructions >/dev/null
    fi
    if [[ -f "$base/port" ]] && as_postgres "$BIN/pg_ctl" -D "$base/pgdata" status >/dev/null 2>&1; then
        port=$(cat "$base/port")
    else
        # A random port that no socket in this directory uses (the socket dir is private, so that suffices;
        # the number also seeds the shared-memory key, which PostgreSQL retries on collision).
        while :; do
            port=$(( 20000 + RANDOM % 30000 ))
            [[ -e "$run/.s.PGSQL.$port" ]] || break
        done
        echo "$port" >"$base/port"
        as_postgres "$BIN/pg_ctl" -D "$base/pgdata" -l "$run/postgres.log" -w -t 60 \
            -o "-p $port -k '$run' -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
            start >/dev/null || {
            echo "test-postgres: PostgreSQL did not start; the end of its log:" >&2
            tail -n 20 "$run/postgres.log" >&2 || true
            exit 1
        }
    fi
    exists=$(as_postgres "$BIN/psql" -h "$run" -p "$port" -U postgres -d postgres -Atc \
        "SELECT 1 FROM pg_database WHERE datname = 'zevauth'")
    if [[ "$exists" != "1" ]]; then
        as_postgres "$BIN/psql" -h "$run" -p "$port" -U postgres -d postgres -qc "CREATE DATABASE zevauth" >&2
    fi
    echo "postgresql:///zevauth?host=$run&port=$port&user=postgres"
    ;;
stop)
    [[ -d "$dir" ]] || exit 0
    base=$(base_of)
    if [[ -f "$base/pgdata/PG_VERSION" ]] && as_postgres "$BIN/pg_ctl" -D "$base/pgdata" status >/dev/null 2>&1; then
        as_postgres "$BIN/pg_ctl" -D "$base/pgdata" -m fast -w -t 60 stop >/dev/null
    fi
    ;;
destroy)
    # stop, then delete the cluster: DIR and, when the data was relocated, the directory it points to.
    [[ -d "$dir" ]] || exit 0
    base=$(base_of)
    "$0" stop "$dir"
    # Compare with repeated slashes folded: a writer may join "/tmp/" and "/zevauth-pg-…" into "/tmp//…".
    tmp=${TMPDIR:-/tmp}
    tmp=${tmp%/}
    base=$(tr -s / <<<"$base")
    if [[ "$base" != "$dir" && "$base" == "$tmp"/zevauth-pg-* ]]; then rm -rf "$base"; fi
    rm -rf "$dir"
    ;;
*)
    echo "usage: $0 start|stop|destroy DIR" >&2
    exit 2
    ;;
esac
