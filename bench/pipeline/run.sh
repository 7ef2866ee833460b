#!/usr/bin/env bash
# The pipeline benchmark (docs/performance.md, "Pipeline benchmark"): in ONE run, on one throwaway PostgreSQL 15
# cluster with PostgreSQL's default durability (fsync, synchronous_commit and full_page_writes on), the
# release build of `zevauth serve` under wrk and pgbench on the same cluster, both reaching PostgreSQL over
# its unix socket, at 8, 16 and 32 connections; prints each ratio, RSS around 8 concurrent password
# sign-ins, the server's CPU per exchange, and SQL round trips per operation (pg_stat_statements calls).
# Each measurement also prints the hypervisor's steal time (/proc/stat): a ratio measured while a neighbour
# took the cores is not a figure of this code; and, per operation, the WAL written (records, full-page
# images, bytes), the WAL syncs (fewer per operation when more commits share one flush) and the commits, with
# the number of connections opened during the measurement (the script's own psql sessions included).
# Before each, `VACUUM (ANALYZE)` and `CHECKPOINT`, so that maintenance one measurement's writes call for
# (autovacuum, a checkpoint) is not billed to the next.
# Everything on loopback, bounded in time (about 27 × DURATION seconds of measurement plus setup).
#   bash bench/pipeline/run.sh     # DURATION=10 CONNECTIONS="8 16 32" THREADS=32 (POOL= to override the pool;
#                                  # BINARY=path measures that build of zevauth instead of building this tree)
# PROFILE=1 adds, after every measurement, `perf record` of the whole machine under exchanges and under the
# discovery document (16 connections; PROFILE_ROUTES="start.lua:/v1/auth/zevid/start …" picks others), and
# prints where the CPU went: by process, the server inclusive of callees and by own time, PostgreSQL by own
# time (Debian's linux-perf).
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-10}         # seconds per measurement
CONNECTIONS=${CONNECTIONS:-"8 16 32"}
THREADS=${THREADS:-32}           # the server's HTTP threads (ZEVAUTH_HTTP_THREADS)
POOL=${POOL:-}                   # the server's PostgreSQL connections (ZEVAUTH_DATABASE_POOL_SIZE); empty: the
                                 # server's own rule (HTTP threads + hashing threads + fetch threads + shared)
RATE_MAX=${RATE_MAX:-8000}       # exchanges or refreshes per second one seeded range must cover
MINIMAL_RATE_MAX=${MINIMAL_RATE_MAX:-18000}
USERS=${USERS:-1000}             # accounts the seeded codes and sessions are spread over
REQUESTS=${REQUESTS:-100000}     # pending sign-ins (and their browser bindings) on record before the starts
PROFILE=${PROFILE:-0}
PG_BIN=/usr/lib/postgresql/15/bin
here=bench/pipeline

echo "== load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
bash scripts/bootstrap.sh
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
if [ -n "${BINARY:-}" ]; then
  zevauth=$BINARY      # another build of zevauth to measure (to compare two builds in turn on the same machine)
else
  swift build -c release --product zevauth >/dev/null
  zevauth="$(swift build -c release --show-bin-path)/zevauth"
fi

work=$(mktemp -d /tmp/zevauth-pipeline.XXXXXX)
chmod 755 "$work"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  wait 2>/dev/null
  bash scripts/test-postgres.sh destroy "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# --- The cluster: made by scripts/test-postgres.sh, then restarted with the default durability (the test
# script turns it off) and pg_stat_statements loaded. Same socket and port, so the URL stays.
url=$(bash scripts/test-postgres.sh start "$work/pg" 2>/dev/null)
bash scripts/test-postgres.sh stop "$work/pg"
base=$(cat "$work/pg/cluster-location" 2>/dev/null || echo "$work/pg")
as_postgres() { if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
as_postgres "$PG_BIN/pg_ctl" -D "$base/pgdata" -l "$base/run/postgres.log" -w -t 60 \
  -o "-p $(cat "$base/port") -k '$base/run' -c listen_addresses='' -c fsync=on -c synchronous_commit=on \
      -c full_page_writes=on -c shared_preload_libraries=pg_stat_statements" \
  start >/dev/null
psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$url" "$@"; }
echo "== PostgreSQL: $(psql -Atc "SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) FROM pg_settings
  WHERE name IN ('fsync','synchronous_commit','full_page_writes','wal_sync_method','shared_buffers','max_wal_size')")"
echo "   both sides over the unix socket ($base/run); HTTP on TCP loopback"
ZEVAUTH_DATABASE_URL="$url" "$zevauth" migrate >/dev/null
psql -c "CREATE EXTENSION pg_stat_statements"

# --- Seeds: disjoint ranges of codes and refresh tokens, one per measurement that consumes them.
levels=$(echo $CONNECTIONS | wc -w)
slot=$((DURATION * RATE_MAX))
minimal_slot=$((DURATION * MINIMAL_RATE_MAX))
profiled=0; [ "$PROFILE" = 1 ] && profiled=$(echo ${PROFILE_ROUTES:-exchange discovery} | wc -w)
codes=$((slot * (2 * levels + 3 + profiled)))   # per level: the server and pgbench; the two RSS runs; spare; PROFILE
sessions=$((slot * (2 * levels + profiled)))
minimal=$((minimal_slot * levels))
verifier=$(python3 -c 'import secrets;print(secrets.token_urlsafe(32))')
challenge=$(python3 -c 'import sys,hashlib,base64;print(base64.urlsafe_b64encode(hashlib.sha256(sys.argv[1].encode()).digest()).rstrip(b"=").decode())' "$verifier")
echo "== seeding $codes codes, $sessions sessions, $minimal minimal codes over $USERS accounts, $REQUESTS pending sign-ins"
began=$SECONDS
psql -v codes="$codes" -v sessions="$sessions" -v minimal="$minimal" -v users="$USERS" -v requests="$REQUESTS" \
  -v challenge="$challenge" -f $here/seed.sql
psql -c "VACUUM (ANALYZE)" -c "CHECKPOINT"
echo "   seeded in $((SECONDS - began)) s"
python3 $here/statements.py "$zevauth" "$work/sql" | sed 's/^/   statement /'
next_code=0; next_session=0; next_minimal=0; next_start=0

# --- The server.
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
operator="zop_bench_operator_token_0123456789abcdef"
# `env` so an empty POOL sets nothing and the server sizes its own pool.
env ZEVAUTH_DATABASE_URL="$url" ZEVAUTH_ISSUER="http://127.0.0.1:$port" ZEVAUTH_LISTEN="127.0.0.1:$port" \
  ZEVAUTH_OPERATOR_TOKEN="$operator" ZEVAUTH_HTTP_THREADS="$THREADS" ${POOL:+ZEVAUTH_DATABASE_POOL_SIZE="$POOL"} \
  ZEVAUTH_LINK_CHECKS=0 ZEVAUTH_RATE_PASSWORD_PER_ACCOUNT=1000000 ZEVAUTH_RATE_PASSWORD_PER_ADDRESS=1000000 \
  ZEVAUTH_RATE_EXCHANGE_FAILURES_PER_ADDRESS=1000000 ZEVAUTH_RATE_REFRESH_FAILURES_PER_ADDRESS=1000000 \
  "$zevauth" serve 2>"$work/serve.log" &
server=$!
for _ in $(seq 1 100); do curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" || { tail -20 "$work/serve.log"; exit 1; }
echo "== zevauth serve: $THREADS HTTP threads, ${POOL:-the default number of} PostgreSQL connections, rate limits out of reach"
password="bench-password-0123456789"
for i in 1 2 3 4 5 6 7 8; do
  curl -fs -o /dev/null -X POST "http://127.0.0.1:$port/v1/admin/users" -H "Authorization: Bearer $operator" \
    -H 'Content-Type: application/json' -d "{\"email\":\"signin$i@example.com\",\"password\":\"$password\",\"name\":\"Sign-in $i\"}"
done

# --- Instruments.
ticks=$(getconf CLK_TCK)
server_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
# PostgreSQL's CPU: the postmaster, its reaped children (cutime/cstime) and its live children.
pg_ticks() {
  local pm total pid
  pm=$(head -1 "$base/pgdata/postmaster.pid")
  total=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
  for pid in $(cat "/proc/$pm/task/$pm/children" 2>/dev/null); do
    [ -r "/proc/$pid/stat" ] && total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
# Statements executed (pg_stat_statements updates at each statement's end; BEGIN/COMMIT count too), without
# this script's own reads of the statistics.
stmt_reset() { psql -Atc "SELECT pg_stat_statements_reset()" >/dev/null; }
stmt_calls() { psql -Atc "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_%'"; }
rows() { psql -Atc "SELECT count(*) FROM $1"; }
# WAL written and synced, for a per-operation figure: "records full-page-images bytes syncs" since the reset.
wal_reset() { psql -Atc "SELECT pg_stat_reset_shared('wal')" >/dev/null; db_mark=$(db_counters); }
# Sessions (backends) started and transactions committed in this database, cumulative.
db_counters() { psql -Atc "SELECT sessions || ' ' || xact_commit FROM pg_stat_database WHERE datname = current_database()"; }
wal_per_op() {
  local s0 x0 s1 x1; read -r s0 x0 <<<"$db_mark"; read -r s1 x1 <<<"$(db_counters)"
  printf '%s; %s connections opened, %s commits\n' "$(psql -Atc "SELECT round(wal_records::numeric / greatest(1, $1), 1)
    || ' records, ' || round(wal_fpi::numeric / greatest(1, $1), 2) || ' full pages, ' || round(wal_bytes / greatest(1, $1))
    || ' bytes, ' || round(wal_sync::numeric / greatest(1, $1), 2) || ' syncs' FROM pg_stat_wal")" \
    "$((s1 - s0))" "$(python3 -c "print('%.2f' % (($x1 - $x0) / max(1, $1)))")"
}
# Before every measurement: the maintenance the previous one's writes called for (autovacuum after its inserts,
# a checkpoint after its WAL) is done now, so that neither the server's run nor pgbench's is billed for it.
settle() { psql -c "VACUUM (ANALYZE)" -c "CHECKPOINT"; }
# The hypervisor's steal time (/proc/stat, all CPUs): the share of the cores' time this machine was not given.
# A measurement with steal of more than a few percent competed with a neighbour: read its ratio with care.
steal_mark() { awk '/^cpu / {s = 0; for (i = 2; i <= NF; i++) s += $i; print $9, s}' /proc/stat; }
steal_pct() { read -r s1 t1 <<<"$(steal_mark)"; read -r s0 t0 <<<"$1"; python3 -c "print('%.0f%%' % (100 * ($s1 - $s0) / max(1, $t1 - $t0)))"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$server/status"; }
results="$work/results.tsv"; : >"$results"
roundtrips="$work/roundtrips.tsv"; : >"$roundtrips"
# measurement connections product ceiling target; then the steal during the product's and the ceiling's run
result() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" "$product_steal / $last_steal" >>"$results"; }
field() { sed -n "s/.*$1=\\([0-9.]*\\).*/\\1/p" <<<"$2"; }

# wrk NAME CONNECTIONS SCRIPT PATH [BASE]: prints "successes/s"; leaves CPU and statements in globals.
wrk_run() {
  local name=$1 c=$2 script=$3 path=$4 base_n=${5:-0} out s0 p0 q
  settle; stmt_reset; wal_reset; eval "${AFTER_SETTLE:-}"; s0=$(server_ticks); p0=$(pg_ticks); local st0; st0=$(steal_mark)
  out=$(WRK_THREADS=2 BASE="$base_n" VERIFIER="$verifier" CHALLENGE="$challenge" \
    wrk -t2 -c"$c" -d"${DURATION}s" --timeout 10s -s "$here/$script" "http://127.0.0.1:$port$path" | grep '^RESULT')
  q=$(stmt_calls)
  local requests errors us ok
  requests=$(field requests "$out"); errors=$(field errors "$out"); us=$(field duration_us "$out")
  ok=$((requests - errors))
  last_ok=$ok; last_rate=$(python3 -c "print(round($ok / ($us / 1e6)))")
  last_server_us=$(python3 -c "print(round(($(server_ticks) - $s0) / $ticks * 1e6 / max(1, $ok)))")
  last_pg_us=$(python3 -c "print(round(($(pg_ticks) - $p0) / $ticks * 1e6 / max(1, $ok)))")
  last_stmts=$(python3 -c "print('%.2f' % ($q / max(1, $ok)))")
  last_steal=$(steal_pct "$st0")
  printf '   %-22s c=%-3s %7s/s  ok %-7s non-2xx %-5s p50 %5.1f ms  p99 %6.1f ms  CPU/op: server %s µs, PostgreSQL %s µs  statements/op %s  steal %s\n' \
    "$name" "$c" "$last_rate" "$ok" "$errors" "$(python3 -c "print($(field p50_us "$out")/1000)")" \
    "$(python3 -c "print($(field p99_us "$out")/1000)")" "$last_server_us" "$last_pg_us" "$last_stmts" "$last_steal"
  # The server's connections stay open, and PostgreSQL takes up to a second to report their counts.
  sleep 1.5
  echo "      WAL per operation: $(wal_per_op "$ok")"
}

# pgbench NAME CONNECTIONS SCRIPT TABLE BASE: counts the rows TABLE gained, so a transaction that found no
# fresh code or token does not count. Prints "successes/s" like wrk_run.
pgbench_run() {
  local name=$1 c=$2 script=$3 table=$4 base_n=$5 out r0 r1 p0 now
  settle; wal_reset; r0=$(rows "$table"); p0=$(pg_ticks); local st0; st0=$(steal_mark)
  now=$(date +%s.%N)
  out=$("$PG_BIN/pgbench" -n -M prepared -c "$c" -j 2 -T "$DURATION" -f "$script" \
    -D base="$base_n" -D step="$c" -D k=-1 -D pk=pk_test_bench -D redirect=http://127.0.0.1:5000/cb \
    -D challenge="$challenge" -D now="$now" -D bucket=exchange_failure_address -D addr=127.0.0.1 \
    -D window="$(python3 -c "import math;print(math.floor($now / 900) * 900)")" -D threshold=1000000 \
    -D env=00000000-0000-0000-0000-00000000b002 -D binding="$(printf 'b%.0s' $(seq 64))" \
    -D expires="$(python3 -c "print($now + 600)")" "$url" 2>"$work/pgbench.err") || { cat "$work/pgbench.err"; exit 1; }
  r1=$(rows "$table")
  local done_tx tps ok
  done_tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")
  ok=$((r1 - r0))
  last_rate=$(python3 -c "print(round($tps * $ok / max(1, $done_tx)))")
  last_pg_us=$(python3 -c "print(round(($(pg_ticks) - $p0) / $ticks * 1e6 / max(1, $ok)))")
  last_steal=$(steal_pct "$st0")
  printf '   %-22s c=%-3s %7s/s  ok %-7s of %-7s                                 CPU/op: PostgreSQL %s µs  steal %s\n' \
    "$name" "$c" "$last_rate" "$ok" "$done_tx" "$last_pg_us" "$last_steal"
  echo "      WAL per operation: $(wal_per_op "$ok")"
  [ "$ok" -ge "$done_tx" ] || echo "   (pgbench: $((done_tx - ok)) transactions found no fresh row: raise RATE_MAX or MINIMAL_RATE_MAX)"
  last_done=$done_tx
}

echo "== throughput, ${DURATION}s per measurement (the server side runs over HTTP; pgbench -M prepared)"
for c in $CONNECTIONS; do
  wrk_run "exchange (server)" "$c" exchange.lua /v1/auth/handoff/exchange "$next_code"; next_code=$((next_code + slot))
  product=$last_rate; product_steal=$last_steal
  [ "$last_ok" -lt "$slot" ] || echo "   (the server used its whole range of codes: raise RATE_MAX)"
  printf 'exchange\t%s\t%s\t%s\t%s\n' "$c" "$last_stmts" "$last_server_us" "$last_pg_us" >>"$roundtrips"
  pgbench_run "exchange (statement)" "$c" "$work/sql/exchange.sql" sessions "$next_code"; next_code=$((next_code + slot))
  [ "$last_done" -lt "$slot" ] || echo "   (pgbench reached into the next range of codes: raise RATE_MAX)"
  result "exchange / its statement" "$c" "$product" "$last_rate" 0.8
  pgbench_run "exchange (minimal)" "$c" $here/minimal-exchange.sql bench_minimal.sessions "$next_minimal"
  next_minimal=$((next_minimal + minimal_slot))
  result "exchange / minimal 2-table" "$c" "$product" "$last_rate" 0.4

  wrk_run "refresh (server)" "$c" refresh.lua /v1/auth/session/refresh "$next_session"; next_session=$((next_session + slot))
  product=$last_rate; product_steal=$last_steal
  printf 'refresh\t%s\t%s\t%s\t%s\n' "$c" "$last_stmts" "$last_server_us" "$last_pg_us" >>"$roundtrips"
  pgbench_run "refresh (statement)" "$c" "$work/sql/refresh.sql" "refresh_tokens" "$next_session"; next_session=$((next_session + slot))
  [ "$last_done" -lt "$slot" ] || echo "   (pgbench reached into the next range of tokens: raise RATE_MAX)"
  result "refresh / its statement" "$c" "$product" "$last_rate" 0.8

  wrk_run "start (server)" "$c" start.lua /v1/auth/zevid/start
  product=$last_rate; product_steal=$last_steal
  printf 'start\t%s\t%s\t%s\t%s\n' "$c" "$last_stmts" "$last_server_us" "$last_pg_us" >>"$roundtrips"
  # Each level's starts mint their own binding ids (the statement records them), so each takes a fresh range.
  pgbench_run "start (its insert)" "$c" "$work/sql/start.sql" authorization_requests "$next_start"
  next_start=$((next_start + minimal_slot))   # the bare insert runs at the minimal exchange's pace or faster
  result "start / its insert" "$c" "$product" "$last_rate" 0.6

  wrk_run "discovery document" "$c" get.lua /.well-known/oauth-authorization-server
  product=$last_rate; product_steal=$last_steal
  wrk_run "healthz" "$c" get.lua /healthz
  result "discovery / healthz" "$c" "$product" "$last_rate" 0.8
done

echo "== one full password sign-in (start, page, password, consent page, allow, exchange): statements"
stmt_reset
python3 $here/signin.py --port "$port" --verifier "$verifier" --challenge "$challenge" --password "$password" --concurrent 1 --first 1 >/dev/null
signin_stmts=$(stmt_calls)
psql -Atc "SELECT lpad(calls::text, 3) || '  ' || left(regexp_replace(query, '\s+', ' ', 'g'), 100) FROM pg_stat_statements
  WHERE query NOT LIKE '%pg_stat_%' ORDER BY calls DESC, query" | sed 's/^/   /'
echo "   total: $signin_stmts statements"

echo "== RSS: 8 concurrent password sign-ins, then ${DURATION}s of exchanges at 32 connections; twice"
rss_suite=$(rss_kb)
echo "   after the throughput measurements: RSS $((rss_suite / 1024)) MiB (peak so far $(( $(hwm_kb) / 1024 )) MiB)"
declare -a rss
for run in 1 2; do
  python3 $here/signin.py --port "$port" --verifier "$verifier" --challenge "$challenge" --password "$password" --concurrent 8 --first 1 | sed 's/^/   /'
  wrk_run "exchange (server)" 32 exchange.lua /v1/auth/handoff/exchange "$next_code" >/dev/null; next_code=$((next_code + slot))
  rss[$run]=$(rss_kb)
  echo "   run $run: RSS $((rss[run] / 1024)) MiB (peak $(( $(hwm_kb) / 1024 )) MiB)"
done

echo "== load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "$roundtrips" "${rss[1]}" "${rss[2]}" "$signin_stmts" <<'EOF'
import sys
results, roundtrips, rss1, rss2, signin = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
print("\n%-28s %5s %9s %9s %7s %7s %5s  %s" % ("measurement", "conns", "product", "ceiling", "ratio", "target", "met?", "steal"))
for line in open(results):
    name, c, product, ceiling, target, steal = line.rstrip("\n").split("\t")
    ratio = float(product) / max(1.0, float(ceiling))
    print("%-28s %5s %9s %9s %7.2f %7s %5s  %s" % (name, c, product, ceiling, ratio, "≥ " + target, "yes" if ratio >= float(target) else "NO", steal))
change = (rss2 - rss1) / rss1 * 100
print("%-28s %5s %9s %9s %7s %7s %5s" % ("RSS after run 1 (MiB)", "8", "%.1f" % (rss1 / 1024), "", "", "≤ 96", "yes" if rss1 / 1024 <= 96 else "NO"))
print("%-28s %5s %9s %9s %7s %7s %5s" % ("RSS after run 2 (MiB)", "8", "%.1f" % (rss2 / 1024), "", "%+.1f%%" % change, "± 5 %", "yes" if abs(change) <= 5 and rss2 / 1024 <= 96 else "NO"))
print("\n%-10s %5s %14s %18s %22s" % ("per op", "conns", "statements", "server CPU (µs)", "PostgreSQL CPU (µs)"))
for line in open(roundtrips):
    name, c, stmts, server, pg = line.rstrip("\n").split("\t")
    print("%-10s %5s %14s %18s %22s" % (name, c, stmts, server, pg))
print("%-10s %5s %14s" % ("sign-in", "1", signin))
EOF

if [ "$PROFILE" = 1 ] && command -v perf >/dev/null; then
  report() { perf report -i "$work/perf.data" "$@" -g none --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' \
    | { swift demangle --simplified 2>/dev/null || cat; } | head -"${LINES_SHOWN:-30}" | cut -c1-170 || true; }
  for target in ${PROFILE_ROUTES:-"exchange.lua:/v1/auth/handoff/exchange" "get.lua:/.well-known/oauth-authorization-server"}; do
    script=${target%%:*}; path=${target#*:}
    echo "== perf: the whole machine under $path, 16 connections, ${DURATION}s (after the measurements; not in the table)"
    # Started once the measurement's settling is done, so the profile holds the load alone.
    AFTER_SETTLE='perf record -a -F 499 -g -o "$work/perf.data" -- sleep "$DURATION" 2>/dev/null & profiler=$!'
    # Each profiled route takes its own range of codes and of sessions (a refresh presents the sessions').
    base_n=$next_code; [ "$script" = refresh.lua ] && base_n=$next_session
    wrk_run "$path" 16 "$script" "$path" "$base_n" >/dev/null; next_code=$((next_code + slot)); next_session=$((next_session + slot))
    AFTER_SETTLE=''
    wait "$profiler" || true
    echo "   by process:"; report --sort comm --percent-limit 1
    # Below, percentages of that process's own samples.
    echo "   the server, inclusive of callees:"
    report --pid "$server" --percentage relative --children --sort symbol --percent-limit 4
    echo "   the server, own time:"
    report --pid "$server" --percentage relative --no-children --sort dso,symbol --percent-limit 0.7
    echo "   PostgreSQL, inclusive of callees:"
    LINES_SHOWN=60 report --comm postgres --percentage relative --children --sort dso,symbol --percent-limit 2
  done
fi
