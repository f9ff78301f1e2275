#!/bin/sh
# Records and simulates the example programs of traces/src with linegrind,
# and runs them under Callgrind with its cache simulation and cache-use
# analysis (--cacheuse=yes) and the same caches, side by side; prints the
# times and the ratios. Sizes are larger than the shipped traces' (set with
# -D at compile time) so that each run takes seconds.
#
#   benches/record_vs_callgrind.sh            # every program
#   benches/record_vs_callgrind.sh hydro      # some of them
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$repo"
cargo build --release --quiet
linegrind="$repo/target/release/linegrind"
caches="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"

size_of() {
    case $1 in
    hydro) echo "-DSTEPS=30" ;;
    pointer_chase) echo "-DWALKS=2000" ;;
    stream_table) echo "-DPARTICLES=4000000" ;;
    esac
}

# Seconds taken by the command, to the millisecond; its output is dropped.
seconds() {
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s%N)
    echo "$start $end" | awk '{ printf "%.3f", ($2 - $1) / 1e9 }'
}

ratio() {
    echo "$1 $2" | awk '{ printf "%.2f", $1 / $2 }'
}

programs=${*:-$(cd traces/src && ls -- *.c | sed 's/\.c$//')}
printf '%-14s %8s %9s %8s %8s %11s %12s %11s\n' program native callgrind record sim \
    record/cg "record+sim/cg" bytes/event
for name in $programs; do
    # shellcheck disable=SC2046 # the size flags split on purpose
    gcc -O2 -g $(size_of "$name") -o "$work/$name" "traces/src/$name.c"
    native=$(seconds "$work/$name")
    # shellcheck disable=SC2086
    callgrind=$(seconds valgrind --tool=callgrind --cacheuse=yes $caches \
        --callgrind-out-file="$work/callgrind.out" "$work/$name")
    record=$(seconds "$linegrind" record -o "$work/$name.lgt" -- "$work/$name")
    # shellcheck disable=SC2086
    sim=$(seconds "$linegrind" sim $caches -o "$work/linegrind.out" "$work/$name.lgt")
    both=$(echo "$record $sim" | awk '{ printf "%.3f", $1 + $2 }')
    bytes=$("$linegrind" info "$work/$name.lgt" | sed -n 's/^size: .*, \([0-9.]*\) bytes per.*/\1/p')
    printf '%-14s %8s %9s %8s %8s %11s %12s %11s\n' "$name" "$native" "$callgrind" "$record" \
        "$sim" "$(ratio "$record" "$callgrind")" "$(ratio "$both" "$callgrind")" "$bytes"
    rm -f "$work/$name.lgt" "$work/callgrind.out" "$work/linegrind.out"
done
