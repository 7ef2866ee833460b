#!/usr/bin/env bash
# The fault test (docs/operations.md, "The fault test"): a PostgreSQL failover under load, on loopback only.
#
#   bash tests/fault/run.sh [--variant postmaster|node|switchover|stale-url] [--pgbouncer] [--out DIR]
#                           [--duration 60] [--event-at 20] [--bin PATH/TO/zevauth]
#   bash tests/fault/run.sh --all [--bin …]   # the four variants, then the four through PgBouncer (~20 min);
#                                             # outputs in /tmp/zevauth-fault-<variant>[-pgbouncer]/
#
# Builds, under a temp dir: a single-member etcd; a 2-node PostgreSQL 15 cluster run by Patroni with
# synchronous replication (synchronous_mode) and automatic failover; three `zevauth serve` instances behind
# haproxy, which checks GET /readyz every 500 ms; ZEVAUTH_DATABASE_URL names both nodes with
# target_session_attrs=read-write (with --pgbouncer: PgBouncer in transaction mode in front of a haproxy TCP
# frontend that follows Patroni's leader through its REST API, GET /primary). Then tests/fault/load.py runs
# a bounded mixed load for --duration seconds and the variant's fault at --event-at seconds:
#   postmaster  kill -9 the primary's postmaster (Patroni restarts it or fails over);
#   node        kill -9 the primary node's Patroni and every PostgreSQL process of it (the node is lost);
#   switchover  `patronictl switchover` to the standby;
#   stale-url   instance c's URL names only the first primary, without target_session_attrs, and the
#               primary is switched over: c must answer 503 with Retry-After, /readyz not ready, and haproxy
#               must take it out of rotation while the others carry the load.
# Prints the report (also DIR/report.json with the logs of every process) and exits 0 when every goal is
# met, 1 when one is missed, 2 when the set-up failed. Everything it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

variant=postmaster pgbouncer=0 out="" duration=60 event_at=20 bin=""
if [ "${1:-}" = --all ]; then
  shift
  failed=0
  for extra in "" --pgbouncer; do
    for v in postmaster node switchover stale-url; do
      bash "$root/tests/fault/run.sh" --variant $v $extra "$@" || failed=1
    done
  done
  exit $failed
fi
while [ $# -gt 0 ]; do
  case "$1" in
    --variant) variant=$2; shift 2 ;;
    --pgbouncer) pgbouncer=1; shift ;;
    --out) out=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --event-at) event_at=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--variant postmaster|node|switchover|stale-url] [--pgbouncer] [--out DIR] [--duration S] [--event-at S] [--bin PATH]" >&2; exit 2 ;;
  esac
done
case "$variant" in postmaster|node|switchover|stale-url) ;; *) echo "fault: unknown variant $variant" >&2; exit 2 ;; esac
label=$variant; [ "$pgbouncer" = 1 ] && label="$variant-pgbouncer"
out=${out:-/tmp/zevauth-fault-$label}
rm -rf "$out"; mkdir -p "$out"
PG_BIN=/usr/lib/postgresql/15/bin
PY=/usr/bin/python3     # Debian's, with psycopg2 (python3-psycopg2, a dependency of patroni)
for tool in patroni patronictl etcd haproxy pgbouncer; do
  command -v $tool >/dev/null || { echo "fault: $tool is missing (scripts/bootstrap.sh installs it)" >&2; exit 2; }
done
if [ -z "$bin" ]; then
  swift build -c release --product zevauth -j 2 >/dev/null
  bin="$(swift build -c release --show-bin-path)/zevauth"
fi

work=$(mktemp -d /tmp/zevauth-fault.XXXXXX)
chmod 755 "$work"
pids=()          # every process this script started, stopped in reverse order on exit
# `exec_as_postgres TOOL …` in a background subshell: as root, the tool runs as `postgres` through setpriv;
# both exec, so the pid this script records ($!) is the tool's own.
exec_as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then cd / && exec setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; else exec "$@"; fi
}
postmaster_of() { head -1 "$work/$1/data/postmaster.pid" 2>/dev/null || true; }
stop_pids() {  # SIGTERM, up to 20 s, then SIGKILL
  local pid alive
  for pid in "$@"; do kill "$pid" 2>/dev/null; done
  for _ in $(seq 1 100); do
    alive=0
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.2
  done
  for pid in "$@"; do kill -9 "$pid" 2>/dev/null; done
}
cleanup() {
  set +e
  # Everything but etcd first (newest first), so Patroni still reaches its DCS while it stops PostgreSQL.
  local rest=()
  for ((i = ${#pids[@]} - 1; i >= 1; i--)); do rest+=("${pids[i]}"); done
  [ ${#rest[@]} -gt 0 ] && stop_pids "${rest[@]}"
  [ ${#pids[@]} -gt 0 ] && stop_pids "${pids[0]}"
  # PostgreSQL's postmasters (started by Patroni, not by this script): stopped by their pid file.
  for node in n1 n2; do
    pm=$(postmaster_of $node)
    if [ -n "$pm" ] && kill -0 "$pm" 2>/dev/null; then
      kill -QUIT "$pm" 2>/dev/null
      for _ in $(seq 1 50); do kill -0 "$pm" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pm" 2>/dev/null
    fi
  done
  cp "$work"/*.log "$work"/pgbouncer/*.log "$out"/ 2>/dev/null
  for node in n1 n2; do cp "$work/$node/patroni.log" "$out/patroni-$node.log" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

free_port() { $PY -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND…: bounded
  local seconds=$1 what=$2; shift 2
  local until=$((SECONDS + seconds))
  while ! "$@" >/dev/null 2>&1; do
    [ $SECONDS -ge $until ] && { echo "fault: $what did not happen within ${seconds} s" >&2; return 1; }
    sleep 0.2
  done
}
etcd_client=$(free_port); etcd_peer=$(free_port)
pg1=$(free_port); pg2=$(free_port); rest1=$(free_port); rest2=$(free_port)
lb=$(free_port); lb_stats=$(free_port); pg_lb=$(free_port); pgb=$(free_port); pgb_stale=$(free_port)
ports=($(free_port) $(free_port) $(free_port))
names=(a b c)

echo "== fault test: variant $variant$([ "$pgbouncer" = 1 ] && echo ', through PgBouncer (transaction mode)'); load ${duration} s, fault at ${event_at} s"
echo "   $("$bin" --version 2>/dev/null | head -1); $(patroni --version); etcd $(etcd --version | head -1 | awk '{print $3}'); $(haproxy -v | head -1 | awk '{print $1, $3}'); $(pgbouncer --version | head -1)"

# --- etcd: one member on loopback.
etcd --name fault --data-dir "$work/etcd" --listen-client-urls "http://127.0.0.1:$etcd_client" \
  --advertise-client-urls "http://127.0.0.1:$etcd_client" --listen-peer-urls "http://127.0.0.1:$etcd_peer" \
  --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" --initial-cluster "fault=http://127.0.0.1:$etcd_peer" \
  --enable-v2=true >"$work/etcd.log" 2>&1 &
pids+=($!)
wait_for 20 "etcd answering" curl -fs "http://127.0.0.1:$etcd_client/health"

# --- Patroni: two nodes, synchronous replication, short timeouts (ttl 10 s, loop_wait 1 s).
node_config() {  # node_config NAME PG_PORT REST_PORT
  local name=$1 port=$2 rest=$3 dir="$work/$1"
  mkdir -p "$dir"; chown postgres:postgres "$dir" 2>/dev/null || true
  cat >"$dir/patroni.yml" <<EOF
scope: zevauth-fault
name: $name
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$rest
  connect_address: 127.0.0.1:$rest
etcd3:
  hosts: 127.0.0.1:$etcd_client
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 5
        max_replication_slots: 5
        max_connections: 200
  initdb:
    - encoding: UTF8
    - locale: C
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication replicator 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$port
  connect_address: 127.0.0.1:$port
  data_dir: $dir/data
  bin_dir: $PG_BIN
  pgpass: $dir/pgpass
  authentication:
    superuser: {username: postgres, password: fault}
    replication: {username: replicator, password: fault}
  parameters:
    unix_socket_directories: $dir
tags: {}
EOF
  chown postgres:postgres "$dir/patroni.yml" 2>/dev/null || true
}
node_config n1 $pg1 $rest1
node_config n2 $pg2 $rest2
start_patroni() {
  (HOME="$work/$1" exec_as_postgres patroni "$work/$1/patroni.yml") >"$work/$1/patroni.log" 2>&1 &
  pids+=($!)
  echo $! >"$work/$1/patroni.pid"
  disown $!   # the node variant kills it: no "Killed" line from bash in the report
}
start_patroni n1
wait_for 60 "n1 becoming the primary" curl -fs "http://127.0.0.1:$rest1/primary"
start_patroni n2
wait_for 90 "n2 streaming as the synchronous standby" bash -c \
  "curl -fs http://127.0.0.1:$rest2/sync && curl -fs http://127.0.0.1:$rest2/replica"
# A standby caught up is not yet listed as synchronous until Patroni's next loop: wait for it too.
wait_for 30 "synchronous replication on n1" bash -c \
  "[ \"\$($PG_BIN/psql -X -Atq -h 127.0.0.1 -p $pg1 -U postgres -d postgres -c \"SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'\")\" = 1 ]"
$PG_BIN/psql -X -q -h 127.0.0.1 -p $pg1 -U postgres -d postgres -c "CREATE DATABASE zevauth"
echo "   PostgreSQL: n1 127.0.0.1:$pg1 (primary), n2 127.0.0.1:$pg2 (synchronous standby): $($PG_BIN/psql -X -Atq -h 127.0.0.1 -p $pg1 -U postgres -d postgres -c "SHOW synchronous_standby_names")"

url="postgresql://postgres@127.0.0.1:$pg1,127.0.0.1:$pg2/zevauth?target_session_attrs=read-write"
stale_url="postgresql://postgres@127.0.0.1:$pg1/zevauth"
# The server's switch for PgBouncer's transaction mode, when this build has it.
prepared_supported=0
# The help text is read whole first: `grep -q` in a pipe would stop reading at the first match, and the
# help's writer, cut off, would fail the pipe (pipefail) and the build would be taken for one without it.
help_text=$("$bin" serve --help 2>&1 || true)
case "$help_text" in *ZEVAUTH_DATABASE_PREPARED*) prepared_supported=1 ;; esac

# --- haproxy: HTTP in front of the instances (/readyz checks); with --pgbouncer, TCP to the current primary.
{
  cat <<EOF
global
  maxconn 4000
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  timeout check 1s
  retries 2
  option redispatch
frontend web
  bind 127.0.0.1:$lb
  default_backend zevauth
backend zevauth
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 500ms fall 2 rise 2
EOF
  for i in 0 1 2; do echo "  server ${names[i]} 127.0.0.1:${ports[i]} check"; done
  cat <<EOF
listen stats
  bind 127.0.0.1:$lb_stats
  stats enable
  stats uri /stats
EOF
  if [ "$pgbouncer" = 1 ]; then cat <<EOF
listen postgres
  mode tcp
  bind 127.0.0.1:$pg_lb
  timeout client 5m
  timeout server 5m
  option httpchk GET /primary
  http-check expect status 200
  default-server inter 500ms fall 1 rise 1 on-marked-down shutdown-sessions
  server n1 127.0.0.1:$pg1 check port $rest1
  server n2 127.0.0.1:$pg2 check port $rest2
EOF
  fi
} >"$work/haproxy.cfg"
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
pids+=($!)

# --- PgBouncer (transaction mode): one that follows the primary through haproxy, one pinned to n1 (stale).
if [ "$pgbouncer" = 1 ]; then
  mkdir -p "$work/pgbouncer"; chown postgres:postgres "$work/pgbouncer" 2>/dev/null || true
  for which in follow stale; do
    if [ $which = follow ]; then target="host=127.0.0.1 port=$pg_lb"; listen=$pgb; else target="host=127.0.0.1 port=$pg1"; listen=$pgb_stale; fi
    echo '"postgres" ""' >"$work/pgbouncer/users.txt"
    cat >"$work/pgbouncer/$which.ini" <<EOF
[databases]
zevauth = $target dbname=zevauth user=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $listen
unix_socket_dir =
auth_type = trust
auth_file = $work/pgbouncer/users.txt
pool_mode = transaction
max_client_conn = 400
default_pool_size = 60
server_connect_timeout = 2
server_login_retry = 1
query_wait_timeout = 10
ignore_startup_parameters = extra_float_digits,options
logfile = $work/pgbouncer/$which.log
EOF
    chown -R postgres:postgres "$work/pgbouncer" 2>/dev/null || true
    (exec_as_postgres pgbouncer "$work/pgbouncer/$which.ini") >>"$work/pgbouncer-$which.out" 2>&1 &
    pids+=($!)
  done
  wait_for 20 "PgBouncer answering" $PG_BIN/psql -X -Atq -h 127.0.0.1 -p $pgb -U postgres -d zevauth -c "SELECT 1"
  url="postgresql://postgres@127.0.0.1:$pgb/zevauth"
  stale_url="postgresql://postgres@127.0.0.1:$pgb_stale/zevauth"
  if [ $prepared_supported = 1 ]; then
    echo "   PgBouncer 127.0.0.1:$pgb → haproxy 127.0.0.1:$pg_lb → the primary; this build has ZEVAUTH_DATABASE_PREPARED: set to false"
  else
    echo "   PgBouncer 127.0.0.1:$pgb → haproxy 127.0.0.1:$pg_lb → the primary; this build has NO ZEVAUTH_DATABASE_PREPARED: prepared statements go through transaction mode as they are"
  fi
fi

# --- The instances: migrate once, then three `zevauth serve` (c on the stale URL in that variant).
ZEVAUTH_DATABASE_URL="$url" "$bin" migrate >"$work/migrate.log" 2>&1 || { cat "$work/migrate.log" >&2; exit 2; }
operator="zop_fault_operator_token_$(openssl rand -hex 16)"
instance_pids=()
for i in 0 1 2; do
  instance_url=$url
  [ "$variant" = stale-url ] && [ $i = 2 ] && instance_url=$stale_url
  extra=()
  [ "$pgbouncer" = 1 ] && [ $prepared_supported = 1 ] && extra=(ZEVAUTH_DATABASE_PREPARED=false)
  env ZEVAUTH_DATABASE_URL="$instance_url" ZEVAUTH_ISSUER="http://127.0.0.1:$lb" ZEVAUTH_LISTEN="127.0.0.1:${ports[i]}" \
    ZEVAUTH_OPERATOR_TOKEN="$operator" ZEVAUTH_LINK_CHECKS=$([ $i = 0 ] && echo 1 || echo 0) ZEVAUTH_HTTP_THREADS=8 \
    ZEVAUTH_LOG_FORMAT=text ZEVAUTH_RATE_PASSWORD_PER_ACCOUNT=1000000 ZEVAUTH_RATE_PASSWORD_PER_ADDRESS=1000000 \
    ZEVAUTH_RATE_EXCHANGE_FAILURES_PER_ADDRESS=1000000 ZEVAUTH_RATE_REFRESH_FAILURES_PER_ADDRESS=1000000 \
    ZEVAUTH_RATE_MFA_PER_ACCOUNT=1000000 "${extra[@]}" \
    "$bin" serve >"$work/instance-${names[i]}.log" 2>&1 &
  pids+=($!); instance_pids+=($!)
done
for i in 0 1 2; do
  wait_for 30 "instance ${names[i]} ready" curl -fs "http://127.0.0.1:${ports[i]}/readyz" || { tail -20 "$work/instance-${names[i]}.log" >&2; exit 2; }
done
wait_for 20 "haproxy routing to the instances" curl -fs "http://127.0.0.1:$lb/readyz"
starts=(); for pid in "${instance_pids[@]}"; do starts+=("$(cut -d' ' -f22 /proc/$pid/stat)"); done
echo "   instances a, b, c on 127.0.0.1:${ports[0]}, ${ports[1]}, ${ports[2]} (pids ${instance_pids[*]}) behind haproxy 127.0.0.1:$lb"

# --- Seeds, through the admin API as an operator would: a project, the loopback callback, 8 accounts.
api() { curl -fsS -X "$1" "http://127.0.0.1:$lb$2" -H "Authorization: Bearer $3" -H 'Content-Type: application/json' ${4:+-d "$4"}; }
project=$(api POST /v1/admin/projects "$operator" '{"name":"Fault test"}')
key=$(echo "$project" | $PY -c 'import json,sys;print(json.load(sys.stdin)["development"]["publishableKey"])')
secret=$(echo "$project" | $PY -c 'import json,sys;print(json.load(sys.stdin)["development"]["secretKey"])')
api POST /v1/admin/callbacks "$secret" '{"uri":"http://127.0.0.1:54321/callback"}' >/dev/null
: >"$work/users.tsv"
for n in 1 2 3 4 5 6 7 8; do
  password="fault-password-$(openssl rand -hex 8)"
  api POST /v1/admin/users "$operator" "{\"email\":\"fault$n@example.com\",\"password\":\"$password\",\"name\":\"Fault $n\"}" >/dev/null
  printf 'fault%s@example.com\t%s\n' "$n" "$password" >>"$work/users.tsv"
done

# --- The fault.
leader=n1
case "$variant" in
  postmaster) event="kill -9 \$(head -1 $work/n1/data/postmaster.pid)" ;;
  node) event="kill -9 \$(cat $work/n1/patroni.pid) 2>/dev/null; pm=\$(head -1 $work/n1/data/postmaster.pid); kill -9 \$pm \$(ps -o pid= --ppid \$pm) 2>/dev/null; true" ;;
  switchover|stale-url) event="patronictl -c $work/n1/patroni.yml switchover --leader n1 --candidate n2 --force" ;;
esac
probe=()
[ "$variant" = stale-url ] && probe=(--probe "127.0.0.1:${ports[2]}" --probe-name c)
set +e
$PY tests/fault/load.py --lb "127.0.0.1:$lb" --lb-stats "127.0.0.1:$lb_stats" --key "$key" --users "$work/users.tsv" \
  --nodes "n1=127.0.0.1:$pg1,n2=127.0.0.1:$pg2" --old-primary $leader --event-cmd "$event" \
  --event-at "$event_at" --duration "$duration" "${probe[@]}" --report "$out/report.json"
verdict=$?
set -e
[ -f "$out/report.json" ] || { echo "fault: the load produced no report" >&2; exit 2; }

# --- No instance restarted: the same processes, started at the same time, still running.
restarted=0
for i in 0 1 2; do
  pid=${instance_pids[i]}
  if ! kill -0 "$pid" 2>/dev/null || [ "$(cut -d' ' -f22 /proc/$pid/stat 2>/dev/null)" != "${starts[i]}" ]; then
    echo "   instance ${names[i]} (pid $pid) is no longer running" ; restarted=1
  fi
done
prepared_note=$([ "$pgbouncer" = 1 ] && { [ $prepared_supported = 1 ] && echo "ZEVAUTH_DATABASE_PREPARED=false" || echo "ZEVAUTH_DATABASE_PREPARED not supported by this build"; } || echo "-")
$PY - "$out/report.json" "$restarted" "$label" "$prepared_note" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
restarted, label, prepared = sys.argv[2] == "1", sys.argv[3], sys.argv[4]
if restarted:
    report["goals_missed"].append("an instance stopped or restarted")
report["instances_restarted"] = restarted
report["variant"] = label
report["prepared"] = prepared
json.dump(report, open(sys.argv[1], "w"), indent=1)
def fmt(counter):
    return ", ".join(f"{k} × {v}" for k, v in sorted(counter.items())) or "none"
e = report["event"]
print(f"== {label}: event at {e['at_s']} s (took {e['took_s']} s, exit {e['exit']}); {report['requests']} requests in {report['duration_s']} s")
print(f"   primary {report['old_primary']} → {report['new_primary']} (writable nodes at the end: {', '.join(report['writable_nodes_at_end']) or 'none'})")
print(f"   a primary accepted writes {report['writable_after_event_s']} s after the event; first failure at {report['first_failure_after_event_s']} s, last at {report['last_failure_after_event_s']} s")
print(f"   requests succeed again {report['recovered_after_event_s']} s after the event, {report['recovered_after_writable_s']} s after a primary accepted writes")
for phase, counter in report["phases"].items():
    print(f"   {phase:7} {fmt(counter)}")
for kind, counter in report["by_kind"].items():
    print(f"     {kind:13} {fmt(counter)}")
if "probe" in report:
    print(f"   stale instance c, probed directly: {fmt(report['probe'])}")
    print(f"   its /readyz answered 200 {report['probe_readyz_ready_while_stale']} of {report['probe_readyz_samples_while_stale']} times while its database was a standby")
    print(f"   haproxy first marked down (s after the event): {report['lb_marked_down_after_event_s'] or 'none'}; the stale instance UP in {report['lb_stale_instance_up_while_stale']} of {report['lb_stale_instance_samples_while_stale']} samples while stale")
db = report["database"]
a = report["acknowledged"]
if "error" in db:
    print(f"   database check failed: {db['error']}")
else:
    print(f"   acknowledged: {a['exchanges']} exchanges, {a['refreshes']} refreshes; lost in the database: {len(db['lost'])}; "
          f"codes with two sessions: {len(db['twice_db']) + len(db['twice_client'])}; sessions revoked: {fmt(db['revoked'])} (of {db['sessions_total']})")
print(f"   retries after a 503 refused: {fmt(report['retries_refused'])}; instances restarted: {'yes' if restarted else 'no'}; PgBouncer: {prepared}")
print("   timeline (second from the event: statuses through the balancer):")
for second, counter in report["timeline_from_event"].items():
    print(f"     {int(second):+3d} {fmt(counter)}")
if report["goals_missed"]:
    print("   GOALS MISSED:")
    for miss in report["goals_missed"]:
        print(f"     - {miss}")
else:
    print("   every goal met")
EOF
if [ $restarted = 1 ] || [ $verdict != 0 ]; then exit 1; fi
exit 0
