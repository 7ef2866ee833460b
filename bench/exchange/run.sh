#!/usr/bin/env bash
# Reproduces docs/performance.md: code exchanges per second of a release build under wrk, SQL transactions
# per exchange, four concurrent redemptions of one code, and PostgreSQL's own ceiling for the same
# one-statement exchange under pgbench. Everything on loopback, on a throwaway cluster, bounded in time.
#   bash bench/exchange/run.sh            # CODES=300000 DURATION=10 CONNECTIONS=32 THREADS=16
set -euo pipefail
cd "$(dirname "$0")/../.."
CODES=${CODES:-300000}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-16}
PG_BIN=/usr/lib/postgresql/15/bin

bash scripts/bootstrap.sh
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
swift build -c release --product zevauth >/dev/null
zevauth="$(swift build -c release --show-bin-path)/zevauth"

work=$(mktemp -d /tmp/zevauth-bench.XXXXXX)
chmod 755 "$work"
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; bash scripts/test-postgres.sh destroy "$work/pg" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
url=$(bash scripts/test-postgres.sh start "$work/pg" 2>/dev/null)
psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$url" "$@"; }
ZEVAUTH_DATABASE_URL="$url" "$zevauth" migrate >/dev/null

verifier=$(python3 -c 'import secrets;print(secrets.token_urlsafe(32))')
challenge=$(python3 -c 'import sys,hashlib,base64;print(base64.urlsafe_b64encode(hashlib.sha256(sys.argv[1].encode()).digest()).rstrip(b"=").decode())' "$verifier")
psql -v codes="$CODES" -v challenge="$challenge" -f bench/exchange/seed.sql

port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
ZEVAUTH_DATABASE_URL="$url" ZEVAUTH_ISSUER="http://127.0.0.1:$port" ZEVAUTH_LISTEN="127.0.0.1:$port" \
  ZEVAUTH_OPERATOR_TOKEN="zop_bench_operator_token_0123456789abcdef" ZEVAUTH_HTTP_THREADS="$THREADS" \
  ZEVAUTH_DATABASE_POOL_SIZE="$THREADS" "$zevauth" serve 2>"$work/serve.log" &
server=$!
for _ in $(seq 1 100); do curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done

echo "== four concurrent redemptions of one code (hoc_bench_$CODES)"
body="{\"code\":\"hoc_bench_$CODES\",\"codeVerifier\":\"$verifier\",\"redirectUri\":\"http://127.0.0.1:5000/cb\"}"
for _ in 1 2 3 4; do
  curl -s -o /dev/null -w '%{http_code}\n' -X POST "http://127.0.0.1:$port/v1/auth/handoff/exchange" \
    -H 'Authorization: Bearer pk_test_bench' -H 'Content-Type: application/json' -d "$body" &
done | sort | uniq -c   # the pipeline ends when every curl has answered
echo "sessions for that code: $(psql -Atc "SELECT count(*) FROM sessions s JOIN authorization_codes c ON c.id = s.authorization_code_id WHERE c.code_hash = encode(sha256(convert_to('hoc_bench_$CODES','UTF8')),'hex')")"

echo "== wrk: $CONNECTIONS connections, ${DURATION}s, $THREADS server threads"
before=$(psql -Atc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
sessions_before=$(psql -Atc "SELECT count(*) FROM sessions")
# CPU seconds (user+system) of the server and of every postgres process, before and after the run.
cpu_of() { local total=0; for pid in "$@"; do [ -r "/proc/$pid/stat" ] && total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$total"; }
postgres_pids() { pgrep -u postgres -f "$work" | tr '\n' ' '; pgrep -u postgres -P "$(pgrep -u postgres -f "postgres -D $work" | head -1)" 2>/dev/null | tr '\n' ' '; }
server_cpu_before=$(cpu_of "$server"); pg_cpu_before=$(cpu_of $(postgres_pids))
WRK_THREADS=2 VERIFIER="$verifier" wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/exchange/exchange.lua "http://127.0.0.1:$port" | tee "$work/wrk.txt"
server_cpu_after=$(cpu_of "$server"); pg_cpu_after=$(cpu_of $(postgres_pids))
ticks=$(getconf CLK_TCK)
python3 -c "import sys;t=float(sys.argv[5]);d=float(sys.argv[6]);print('CPU over the run: server %.1f s, PostgreSQL %.1f s (of %d s on 2 cores)' % ((int(sys.argv[2])-int(sys.argv[1]))/t, (int(sys.argv[4])-int(sys.argv[3]))/t, 2*d))" \
  "$server_cpu_before" "$server_cpu_after" "$pg_cpu_before" "$pg_cpu_after" "$ticks" "$DURATION"
after=$(psql -Atc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
sessions_after=$(psql -Atc "SELECT count(*) FROM sessions")
made=$((sessions_after - sessions_before))
echo "sessions created: $made; exchanges/s (successful): $((made / DURATION))"
python3 -c "import sys;print('SQL transactions per exchange: %.2f (includes the 4 psql reads)' % ((int(sys.argv[2])-int(sys.argv[1]))/max(1,int(sys.argv[3]))))" "$before" "$after" "$made"

kill "$server"; wait "$server" 2>/dev/null || true; server=""
echo "== pgbench: the exchange statement alone, 8 clients, ${DURATION}s"
"$PG_BIN/pgbench" -n -f bench/exchange/pgbench-exchange.sql -D codes="$CODES" -c 8 -j 2 -T "$DURATION" "$url" 2>/dev/null | grep -E "^(tps|latency average|number of transactions actually processed)"
