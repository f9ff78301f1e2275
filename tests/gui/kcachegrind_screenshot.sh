#!/bin/sh
# End-to-end look at a file linegrind writes, in KCachegrind itself:
# simulates traces/hydro.lgt, opens callgrind.out.hydro in KCachegrind on a
# virtual display (Xvfb), chooses the SpLoss1 event (L1 bytes wasted),
# selects `main` and saves a screenshot of its callees.
#
#   tests/gui/kcachegrind_screenshot.sh [OUTPUT.png]
#
# Optional: needs kcachegrind, xvfb, imagemagick, xdotool and dbus
# (Debian: apt-get install kcachegrind xvfb imagemagick xdotool dbus).
# `LINEGRIND_GUI=1 cargo test gui` runs it as a test.
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
shot=$(realpath -m "${1:-kcachegrind.png}")
work=$(mktemp -d)
display=:$((90 + $$ % 9))
cleanup() {
    kill ${viewer:-} ${xvfb:-} 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

cd "$repo"
cargo build --release --quiet
"$repo/target/release/linegrind" sim -q traces/hydro.lgt -o "$work/callgrind.out.hydro"

# A private configuration: no tip of the day.
mkdir -p "$work/config"
printf '[TipOfDay]\nRunOnStart=false\n' > "$work/config/kcachegrindrc"

Xvfb "$display" -screen 0 1400x900x24 >/dev/null 2>&1 &
xvfb=$!
sleep 2
export DISPLAY="$display" XDG_CONFIG_HOME="$work/config" XDG_RUNTIME_DIR="$work"
(cd "$work" && exec dbus-run-session -- kcachegrind callgrind.out.hydro) >/dev/null 2>&1 &
viewer=$!

# Wait for the main window, titled after the file.
window=""
for _ in $(seq 1 60); do
    window=$(xdotool search --name "callgrind.out.hydro" 2>/dev/null | head -1 || true)
    [ -n "$window" ] && break
    sleep 1
done
if [ -z "$window" ]; then
    echo "KCachegrind did not open callgrind.out.hydro" >&2
    exit 1
fi
xdotool windowsize "$window" 1400 900
sleep 3

# The event type box (top right): choose "L1 Bytes Wasted" (SpLoss1).
xdotool mousemove 878 38 click 1
sleep 1
xdotool type --delay 50 "L1 Bytes W"
xdotool key Return
sleep 1
# The flat profile's search field: list the functions called *main*, then
# select `main` itself, the fourth row: (below main) twice,
# __libc_start_main, main.
xdotool mousemove 128 89 click 1
xdotool type --delay 50 "main"
xdotool key Return
sleep 2
xdotool mousemove 200 195 click 1
sleep 3
import -window root "$shot"
echo "wrote $shot"
