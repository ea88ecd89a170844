#!/usr/bin/env bash
# The C boundary's cost on batched lookups: the same filter and hashes through
# `linebloom_blocked_contains_hashes` (C, this folder) and the crate's `contains_hashes`
# (`examples/batched_lookup.rs`), three alternating rounds. Usage: capi/bench/run.sh [ITEMS] [PROBES]
set -euo pipefail
cd "$(dirname "$0")/../.."
ITEMS=${1:-100000}
PROBES=${2:-10000000}
cargo build -q --release -p linebloom-capi
cargo build -q --release --example batched_lookup
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cc -O2 -std=c11 -D_POSIX_C_SOURCE=199309L -Icapi/include capi/bench/batched_lookup.c \
    -Ltarget/release -llinebloom -Wl,-rpath,"$PWD/target/release" -o "$DIR/bench"
for round in 1 2 3; do
    echo "C    $("$DIR/bench" "$ITEMS" "$PROBES" "$DIR/filter" "$DIR/hashes")"
    echo "Rust $(target/release/examples/batched_lookup "$DIR/filter" "$DIR/hashes")"
done
