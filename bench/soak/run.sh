#!/usr/bin/env bash
# The soak (docs/operations.md, "Soak"): memory under a long mixed load, on loopback only; not in CI.
#   bash bench/soak/run.sh        # DURATION=600 CONNECTIONS=16 INTERVAL=10 THREADS=16 BIN=…/zevauth
# One release `zevauth serve` on a throwaway PostgreSQL 15 cluster (scripts/test-postgres.sh), seeded by
# bench/pipeline/seed.sql; wrk runs bench/soak/mixed.lua (exchanges, refreshes, session reads, starts,
# /healthz, discovery) for DURATION seconds while the server's RSS is sampled every INTERVAL seconds.
# Verdict: flat when the mean RSS of the last third of the samples is within 5 % of the middle third's
# (the first third is the warm-up: pools, caches, allocator arenas). Exits 1 when it is not flat, or when
# any answer was a 5xx.
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-600}
CONNECTIONS=${CONNECTIONS:-16}
INTERVAL=${INTERVAL:-10}
THREADS=${THREADS:-16}
RATE_MAX=${RATE_MAX:-1500}   # requests per second the seeded codes and tokens must cover (1 in 8 each)
USERS=${USERS:-1000}
PG_BIN=/usr/lib/postgresql/15/bin
if [ -z "${BIN:-}" ]; then
  swift build -c release --product zevauth -j 2 >/dev/null
  BIN="$(swift build -c release --show-bin-path)/zevauth"
fi
command -v wrk >/dev/null || { echo "soak: wrk is missing (scripts/bootstrap.sh installs it)" >&2; exit 2; }
work=$(mktemp -d /tmp/zevauth-soak.XXXXXX)
chmod 755 "$work"
server="" load=""
cleanup() {
  [ -n "$load" ] && kill "$load" 2>/dev/null
  [ -n "$server" ] && kill "$server" 2>/dev/null
  wait 2>/dev/null || true
  bash scripts/test-postgres.sh destroy "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
url=$(bash scripts/test-postgres.sh start "$work/pg" 2>/dev/null)
ZEVAUTH_DATABASE_URL="$url" "$BIN" migrate >/dev/null
per=$((DURATION * RATE_MAX / 8 + 1000))
verifier=$(python3 -c 'import secrets;print(secrets.token_urlsafe(32))')
challenge=$(python3 -c 'import sys,hashlib,base64;print(base64.urlsafe_b64encode(hashlib.sha256(sys.argv[1].encode()).digest()).rstrip(b"=").decode())' "$verifier")
$PG_BIN/psql -X -q -v ON_ERROR_STOP=1 "$url" -v codes="$per" -v sessions="$per" -v minimal=1 -v users="$USERS" \
  -v challenge="$challenge" -f bench/pipeline/seed.sql >/dev/null
$PG_BIN/psql -X -q "$url" -c "VACUUM (ANALYZE)"
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
ZEVAUTH_DATABASE_URL="$url" ZEVAUTH_ISSUER="http://127.0.0.1:$port" ZEVAUTH_LISTEN="127.0.0.1:$port" \
  ZEVAUTH_OPERATOR_TOKEN="zop_soak_operator_token_0123456789abcdef" ZEVAUTH_HTTP_THREADS="$THREADS" \
  ZEVAUTH_LINK_CHECKS=0 ZEVAUTH_RATE_EXCHANGE_FAILURES_PER_ADDRESS=1000000 ZEVAUTH_RATE_REFRESH_FAILURES_PER_ADDRESS=1000000 \
  "$BIN" serve 2>"$work/serve.log" &
server=$!
for _ in $(seq 1 100); do curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" || { tail -20 "$work/serve.log"; exit 1; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
echo "== soak: ${DURATION} s of mixed requests, $CONNECTIONS connections, $THREADS HTTP threads; $per codes and $per sessions seeded"
mib() { python3 -c "print('%.1f' % ($1 / 1024))"; }
echo "   RSS at start: $(mib "$(rss_kb)") MiB"
WRK_THREADS=2 VERIFIER="$verifier" CHALLENGE="$challenge" CODES="$per" SESSIONS="$per" \
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 10s -s bench/soak/mixed.lua "http://127.0.0.1:$port" >"$work/wrk.out" 2>&1 &
load=$!
samples=()
began=$SECONDS
while kill -0 "$load" 2>/dev/null; do
  sleep "$INTERVAL"
  kill -0 "$load" 2>/dev/null || break
  kb=$(rss_kb); samples+=("$kb")
  printf '   t=%4ds RSS %6.1f MiB\n' $((SECONDS - began)) "$(python3 -c "print($kb / 1024)")"
done
wait "$load" || true
load=""
kill -0 "$server" 2>/dev/null || { echo "soak: the server died"; tail -20 "$work/serve.log"; exit 1; }
grep -E '^(RESULT|STATUS)' "$work/wrk.out" | sed 's/^/   /'
echo "   RSS at end: $(mib "$(rss_kb)") MiB; peak (VmHWM): $(mib "$(awk '/^VmHWM/ {print $2}' "/proc/$server/status")") MiB"
python3 - "${samples[*]}" "$(grep '^STATUS' "$work/wrk.out")" <<'PY'
import sys
samples = [int(x) for x in sys.argv[1].split()]
statuses = dict(p.split("=") for p in sys.argv[2].split()[1:])
five = sum(int(c) for s, c in statuses.items() if s.startswith("5"))
if len(samples) < 6:
    print("   too few samples for a verdict"); sys.exit(1)
third = len(samples) // 3
middle = samples[third:2 * third]; last = samples[2 * third:]
m, l = sum(middle) / len(middle), sum(last) / len(last)
change = (l - m) / m * 100
flat = abs(change) <= 5
print(f"   RSS mean, middle third {m/1024:.1f} MiB, last third {l/1024:.1f} MiB: {change:+.1f} % → {'flat' if flat else 'NOT flat'} (limit ±5 %)")
print(f"   5xx answers: {five}")
sys.exit(0 if flat and five == 0 else 1)
PY
