#!/usr/bin/env bash
# Runs the libFuzzer targets (docs/fuzzing.md). Builds them first (Tests/Fuzz/build.sh).
#   Tests/Fuzz/run.sh short [target…]   a bounded pass of each: FUZZ_SECONDS (default 5) seconds each
#   Tests/Fuzz/run.sh long  [target…]   FUZZ_RUNS (default 10000000) executions each
# Each target starts from its seeds in Tests/Fuzz/Corpus/<target> (and, for the association judges, the
# real files in Tests/AssociationTests/RealFiles), working in a copy under .build/fuzz/work so the
# repository's corpus is never rewritten. A crash or sanitizer report fails the target; its input is kept
# in .build/fuzz/crashes. Inputs are at most FUZZ_MAX_LEN (default 4096) bytes. Prints one line per target with executions and executions per second, and
# `fuzz: N passed, N failed`; exits non-zero when any target failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mode=${1:-short}
shift || true
bash "$root/Tests/Fuzz/build.sh" "$@" || { echo "fuzz: 0 passed, 1 failed"; exit 1; }
out=$root/.build/fuzz
mkdir -p "$out/work" "$out/crashes" "$out/logs"
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(cd "$root/Tests/Fuzz/Targets" && ls *.swift | sed 's/\.swift$//')
fi
passed=0 failed=0
for target in "${targets[@]}"; do
    work=$out/work/$target
    rm -rf "$work" && mkdir -p "$work"
    seeds=("$root/Tests/Fuzz/Corpus/$target")
    case $target in
    aasa) seeds+=("$root/Tests/AssociationTests/RealFiles/aasa") ;;
    assetlinks) seeds+=("$root/Tests/AssociationTests/RealFiles/assetlinks") ;;
    esac
    if [[ $mode == long ]]; then bound=(-runs="${FUZZ_RUNS:-10000000}"); else bound=(-max_total_time="${FUZZ_SECONDS:-5}"); fi
    log=$out/logs/$target-$mode.log
    start=$(date +%s)
    # Swift's own crash backtracer reads the dead process's memory, which ASan reports as a second error.
    # Leak detection is off: the Swift runtime's caches (type metadata, string breadcrumbs) make every run
    # look like it leaked, and libFuzzer would then scan the heap after each run (100 times slower).
    # AddressSanitizer's memory-error checks stay on.
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 "$out/bin/$target" "${bound[@]}" -detect_leaks=0 -timeout=10 -rss_limit_mb=2048 \
        -max_len="${FUZZ_MAX_LEN:-4096}" -print_final_stats=1 -artifact_prefix="$out/crashes/$target-" "$work" "${seeds[@]}" >"$log" 2>&1
    status=$?
    seconds=$(($(date +%s) - start))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    reports=$(grep -c "ERROR: AddressSanitizer\|ERROR: libFuzzer\|SUMMARY: AddressSanitizer" "$log")
    if [[ $status -eq 0 && $reports -eq 0 ]]; then
        passed=$((passed + 1))
        echo "fuzz $target: ok, ${runs:-?} executions in ${seconds}s (${rate:-?}/s), 0 crashes, 0 sanitizer reports"
    else
        failed=$((failed + 1))
        echo "fuzz $target: FAILED (exit $status, $reports reports), see $log"
        grep -m5 "ERROR\|Fatal error\|SUMMARY\|artifact" "$log" | sed 's/^/    /'
    fi
done
echo "fuzz: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
