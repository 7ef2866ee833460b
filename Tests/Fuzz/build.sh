#!/usr/bin/env bash
# Builds the libFuzzer targets of Tests/Fuzz/Targets (docs/fuzzing.md) with swiftc -sanitize=fuzzer,address,
# outside `swift build`: the pure modules they fuzz (Encoding, PKCE, Authorize, Association, WebAuthn, IDNA over
# libidn2 and CBOR over libcbor) are compiled again here, instrumented, into .build/fuzz/lib, then one executable per target
# into .build/fuzz/bin. The Framing target is compiled together with the HTTPServer files it checks.
# Rebuilds only when a source changed. Usage: Tests/Fuzz/build.sh [target…] (default: every target).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/.build/fuzz
lib=$out/lib
bin=$out/bin
mkdir -p "$lib" "$bin"
src=$root/Sources
flags=(-sanitize=fuzzer,address -O -g -parse-as-library -swift-version 6)

# Keep the linker's notes about ASan's local symbols out of the output.
quiet() { "$@" 2> >(grep -v "Cannot export local symbol" >&2); }

# A module's stamp is its sources and the compiler flags; a target's adds the module stamps.
stamp_of() { { cat "$@"; echo "${flags[*]}"; } | sha256sum | cut -c1-16; }

module() { # name, sources dir, extra flags…
    local name=$1 dir=$2
    shift 2
    local stamp
    local sources
    mapfile -t sources < <(find "$dir" -name '*.swift' | sort)
    stamp=$(stamp_of "${sources[@]}")
    if [[ -f $lib/$name.stamp && $(cat "$lib/$name.stamp") == "$stamp" && -f $lib/lib$name.a ]]; then return; fi
    echo "fuzz build: module $name"
    quiet swiftc "${flags[@]}" -wmo -emit-library -static -module-name "$name" -emit-module \
        -emit-module-path "$lib/$name.swiftmodule" -I "$lib" "$@" "${sources[@]}" -o "$lib/lib$name.a"
    echo "$stamp" >"$lib/$name.stamp"
}

module Encoding "$src/Encoding"
# Two lanes, for two cores: PKCE, WebAuthn, Authorize (which imports both), then Association (which imports
# Authorize), beside IDNA and CBOR.
{ module PKCE "$src/PKCE" && module WebAuthn "$src/WebAuthn" && module Authorize "$src/Authorize" \
    && module Association "$src/Association"; } &
lane=$!
module IDNA "$src/IDNA" -I "$src/CIDN2"
module CBOR "$src/CBOR" -I "$src/CCBOR"
wait "$lane"

framing_sources=("$src/HTTPServer/Framing.swift" "$src/HTTPServer/HTTPHeaders.swift"
    "$src/HTTPServer/HTTPMessages.swift" "$src/HTTPServer/WorkQueue.swift")

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(cd "$root/Tests/Fuzz/Targets" && ls *.swift | sed 's/\.swift$//')
fi
for target in "${targets[@]}"; do
    file=$root/Tests/Fuzz/Targets/$target.swift
    extra=()
    [[ $target == framing ]] && extra=("${framing_sources[@]}")
    stamp=$(stamp_of "$file" "${extra[@]}" "$lib"/*.stamp)
    if [[ -f $bin/$target.stamp && $(cat "$bin/$target.stamp") == "$stamp" && -x $bin/$target ]]; then continue; fi
    echo "fuzz build: target $target"
    quiet swiftc "${flags[@]}" -module-name "Fuzz_$target" -I "$lib" -I "$src/CIDN2" -I "$src/CCBOR" -L "$lib" \
        -lAssociation -lAuthorize -lPKCE -lWebAuthn -lIDNA -lCBOR -lEncoding -lidn2 -lcbor "$file" "${extra[@]}" -o "$bin/$target"
    echo "$stamp" >"$bin/$target.stamp"
done
