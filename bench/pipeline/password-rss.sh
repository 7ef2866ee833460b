#!/usr/bin/env bash
# RSS of `zevauth serve` around password sign-ins (docs/decisions.md, "Argon2 memory is mapped, not
# malloc'd"): on a throwaway PostgreSQL cluster, 8 concurrent full password sign-ins (bench/pipeline/signin.py),
# RUNS times, printing the server's RSS before, after each run, and its peak. Loopback only, bounded.
#   bash bench/pipeline/password-rss.sh            # BIN=path/to/zevauth (default: the debug build) RUNS=2
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-2}
here=bench/pipeline
zevauth=${BIN:-"$(swift build --show-bin-path)/zevauth"}
work=$(mktemp -d /tmp/zevauth-rss.XXXXXX)
chmod 755 "$work"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  wait 2>/dev/null || true
  bash scripts/test-postgres.sh destroy "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
url=$(bash scripts/test-postgres.sh start "$work/pg" 2>/dev/null)
ZEVAUTH_DATABASE_URL="$url" "$zevauth" migrate >/dev/null
verifier=$(python3 -c 'import secrets;print(secrets.token_urlsafe(32))')
challenge=$(python3 -c 'import sys,hashlib,base64;print(base64.urlsafe_b64encode(hashlib.sha256(sys.argv[1].encode()).digest()).rstrip(b"=").decode())' "$verifier")
/usr/lib/postgresql/15/bin/psql -X -q -v ON_ERROR_STOP=1 "$url" -v codes=1 -v sessions=1 -v minimal=1 -v users=8 \
  -v challenge="$challenge" -f $here/seed.sql >/dev/null
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
operator="zop_bench_operator_token_0123456789abcdef"
ZEVAUTH_DATABASE_URL="$url" ZEVAUTH_ISSUER="http://127.0.0.1:$port" ZEVAUTH_LISTEN="127.0.0.1:$port" \
  ZEVAUTH_OPERATOR_TOKEN="$operator" ZEVAUTH_LINK_CHECKS=0 ZEVAUTH_RATE_PASSWORD_PER_ACCOUNT=1000000 \
  ZEVAUTH_RATE_PASSWORD_PER_ADDRESS=1000000 "$zevauth" serve 2>"$work/serve.log" &
server=$!
for _ in $(seq 1 100); do curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" || { tail -20 "$work/serve.log"; exit 1; }
password="bench-password-0123456789"
for i in 1 2 3 4 5 6 7 8; do
  curl -fs -o /dev/null -X POST "http://127.0.0.1:$port/v1/admin/users" -H "Authorization: Bearer $operator" \
    -H 'Content-Type: application/json' -d "{\"email\":\"signin$i@example.com\",\"password\":\"$password\",\"name\":\"Sign-in $i\"}"
done
rss() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$server/status"; }
hwm() { awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$server/status"; }
echo "binary: $zevauth"
echo "after start and 8 account creations: RSS $(rss) MiB (peak $(hwm) MiB)"
for run in $(seq 1 "$RUNS"); do
  python3 $here/signin.py --port "$port" --verifier "$verifier" --challenge "$challenge" --password "$password" \
    --concurrent 8 --first 1 | sed 's/^/  /'
  sleep 1
  echo "after run $run (8 concurrent sign-ins): RSS $(rss) MiB (peak $(hwm) MiB)"
done
