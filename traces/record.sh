#!/bin/sh
# Rebuilds the example programs in traces/src and records them into
# traces/NAME.lgt with `linegrind record`. Run from anywhere; needs gcc and
# Valgrind. The traces carry their symbols, so they simulate the same on
# machines without these binaries.
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
# A fixed folder, so that re-recording names the same objects.
build=/tmp/linegrind-traces
rm -rf "$build"
mkdir -p "$build"
trap 'rm -rf "$build"' EXIT

cd "$repo"
cargo build --release --quiet
linegrind="$repo/target/release/linegrind"

for source in traces/src/*.c; do
    name=$(basename "$source" .c)
    # Source paths relative to the repository, so that callgrind_annotate
    # finds them from its root on any machine.
    gcc -O2 -g -fdebug-prefix-map="$repo"=. -o "$build/$name" "$source"
    # Run as ./NAME, so the trace's command line names no temporary folder.
    (cd "$build" && "$linegrind" record -o "$repo/traces/$name.lgt" -- "./$name" >/dev/null)
    "$linegrind" info "traces/$name.lgt"
done
