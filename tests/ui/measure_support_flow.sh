#!/usr/bin/env bash
# Measures the support flow under Xvfb with real X key events (xdotool): Ctrl+K, paste the
# customer's id (Ctrl+V), Enter, then Ctrl+P ("Export for customer"), and reports the time from
# the paste to a complete PDF in the case folder. Not a CTest test: timing is not a test.
#   tests/ui/measure_support_flow.sh CONNINFO ID [BUILD_DIR]
# Run it under a display: xvfb-run -a -s "-screen 0 1600x1000x24" tests/ui/measure_support_flow.sh …
set -euo pipefail
conninfo=$1 id=$2 build=${3:-build}
work=$(mktemp -d)
trap 'kill "$console" 2>/dev/null || true; rm -rf "$work"' EXIT
printf '[cases]\nfolder=%s\n' "$work/cases" > "$work/s.ini"
"$build/app/console/idem-console" --settings "$work/s.ini" --db "$conninfo" 2>"$work/console.log" &
console=$!
window=$(xdotool search --sync --onlyvisible --name "Idem console" | head -1)
sleep 3  # connected, key table loaded: the agent is looking at the console
printf '%s' "$id" | xclip -selection clipboard
xdotool windowfocus --sync "$window"  # no window manager under Xvfb: focus it directly
xdotool key --clearmodifiers ctrl+k
start=$(date +%s%N)
xdotool key --clearmodifiers ctrl+v Return
# The agent presses Ctrl+P when the explanation is in view; a press before the key is open
# only says so in the status bar, so press until the export starts, then wait for the file.
presses=0
while [ -z "$(ls "$work/cases" 2>/dev/null)" ]; do
  xdotool key --clearmodifiers ctrl+p
  presses=$((presses + 1))
  if [ "$presses" -gt 300 ]; then echo "no export after $presses presses; focus: $(xdotool getwindowfocus getwindowname)" >&2; cat "$work/console.log" >&2; exit 1; fi
  sleep 0.05
done
pdf=$(ls "$work/cases"/*.pdf | head -1)
until tail -c 8 "$pdf" 2>/dev/null | grep -q '%%EOF'; do sleep 0.01; done
end=$(date +%s%N)
echo "file: $(basename "$pdf")"
echo "paste to PDF in the case folder: $(( (end - start) / 1000000 )) ms (Ctrl+P pressed $presses time(s) while the key opened)"
