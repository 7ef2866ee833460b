#!/usr/bin/env bash
# Schema-driven fuzzing of the admin API (docs/openapi.yaml) with schemathesis, against a running demo
# server: the operator calls with dev.json's operator token, the environment calls with its development
# secret key. Bounded: SCHEMATHESIS_EXAMPLES (default 12) examples per operation and SCHEMATHESIS_SECONDS
# (default 50) seconds per run. Checks: no 5xx
# (not_a_server_error) and every response as the schema says (status code, content type, body schema).
# The calls that fetch from the internet (adding or changing an app, "check again", domain verification)
# are left out: this workplace sends traffic to loopback only.
# Usage: Tests/Schemathesis/run.sh --dev-json PATH --url http://127.0.0.1:PORT [--venv DIR]
# Prints `schemathesis: N passed, N failed` (one per run); exits non-zero when a run found a problem.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$root/.build/pyvenv
while [[ $# -gt 0 ]]; do
    case $1 in
    --dev-json) devjson=$2; shift 2 ;;
    --url) url=$2; shift 2 ;;
    --venv) venv=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
read -r operator secret < <(python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print(d["operatorToken"],d["development"]["secretKey"])' "$devjson")
examples=${SCHEMATHESIS_EXAMPLES:-12}
# schemathesis keeps its example database in ./.schemathesis: keep it in .build.
venv=$(cd "$venv" && pwd)
devjson=$(cd "$(dirname "$devjson")" && pwd)/$(basename "$devjson")
mkdir -p "$root/.build" && cd "$root/.build"
passed=0 failed=0
st() {
    local name=$1 token=$2
    shift 2
    echo "schemathesis: $name" >&2
    local log
    log=$(mktemp)
    "$venv/bin/schemathesis" run "$root/docs/openapi.yaml" --url "$url" \
        --header "Authorization: Bearer $token" \
        --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
        --max-examples "$examples" --max-time "${SCHEMATHESIS_SECONDS:-50}" --workers 1 --seed 1 --no-color \
        --request-timeout 10 "$@" >"$log" 2>&1
    local status=$?
    cat "$log"
    # A run that generated no test case (the time budget spent before any) proves nothing: a failure.
    if [[ $status -eq 0 ]] && grep -qE '^  [0-9]+ generated, [0-9]+ passed' "$log"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "schemathesis: $name found a problem or ran no test case" >&2
    fi
    rm -f "$log"
}
# The operator's calls: projects and ZevID accounts.
# Account creation hashes a password (Argon2id), so the coverage phase's hundreds of edge cases would not
# fit the time budget: this run takes the fuzzing and stateful phases only.
st "operator token" "$operator" --include-path-regex '^/v1/admin/(projects|users)' --phases fuzzing,stateful
# The environment's calls, with the secret key; the outbound fetches left out.
st "secret key" "$secret" --include-path-regex '^/v1/admin/(callbacks|domains|apps|association-files|settings|keys|clients)' \
    --exclude-name-regex '^(POST /v1/admin/apps|PATCH /v1/admin/apps/\{id\}|POST /v1/admin/apps/\{id\}/check|POST /v1/admin/domains/\{domain\}/verify)$'
echo "schemathesis: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
