#!/usr/bin/env bash
# Issue 29's walk, as an agent works a queue: three tickets, the second pasted first with a typo
# and then right, on a running store, with real X key events (xdotool) in the real console under a display. For each ticket:
# Ctrl+K, paste the customer's id (Ctrl+V), Enter, Ctrl+P, and the ticket typed when the console
# asks for it. Prints what each step showed (the message bar, the prompt) and leaves the letters
# (PDF, and a PNG of each first page) and a screenshot per ticket in OUT. Not a CTest test: it is
# the walk a person does, kept so it can be done again.
#   xvfb-run -a -s "-screen 0 1600x1000x24" tests/ui/walk_ticket_queue.sh CONNINFO OUT ID1 TYPO ID2 ID3 [BUILD]
set -euo pipefail
conninfo=$1 out=$2 first=$3 typo=$4 second=$5 third=$6 build=${7:-build}
mkdir -p "$out/cases"
rm -f "$out"/*.png "$out"/cases/*
work=$(mktemp -d)
trap 'kill "$console" 2>/dev/null || true; rm -rf "$work"' EXIT
printf '[cases]\nfolder=%s\ndatabase=%s\n[letter]\nsender=Globex Shop\naddressee=consumer\n' \
  "$out/cases" "$work/cases.sqlite" > "$work/s.ini"
"$build/app/console/idem-console" --settings "$work/s.ini" --db "$conninfo" 2>"$work/console.log" &
console=$!
window=$(xdotool search --sync --onlyvisible --name "Idem console" | head -1)
xdotool windowmove "$window" 0 0
xdotool windowsize "$window" 1280 800
sleep 4  # connected, the key list loaded
xdotool windowfocus --sync "$window"  # no window manager under Xvfb: focus it directly

shot() { import -window root -crop 1280x800+0+0 "$out/$1.png" 2>/dev/null || xwd -root -silent | convert xwd:- -crop 1280x800+0+0 "$out/$1.png"; }
pdfs() { find "$out/cases" -name '*.pdf' | wc -l; }

# ticket NAME ID TICKET: search, then Ctrl+P; answer the prompt with TICKET when one appears.
ticket() {
  local name=$1 id=$2 answer=$3 before
  before=$(pdfs)
  printf '%s' "$id" | xclip -selection clipboard
  xdotool key --clearmodifiers ctrl+k
  xdotool key --clearmodifiers ctrl+a ctrl+v Return
  sleep 3  # the key opens (or the console says nothing matches)
  xdotool windowfocus --sync "$window"
  xdotool key --clearmodifiers ctrl+p
  local focused=""
  for _ in $(seq 1 30); do  # the prompt, when the console asks for the ticket
    focused=$(xdotool getwindowfocus getwindowname 2>/dev/null || true)
    [ "$focused" = "Ticket reference" ] && break
    [ "$(pdfs)" -gt "$before" ] && break
    sleep 0.2
  done
  echo "[$name] pasted $id; after Ctrl+P the focused window is: $focused"
  if [ "$focused" = "Ticket reference" ]; then
    shot "$name-prompt"
    xdotool key --clearmodifiers ctrl+a
    xdotool type --delay 20 "$answer"
    xdotool key --clearmodifiers Return
    echo "[$name] answered the prompt with: ${answer:-<empty>}"
  fi
  for _ in $(seq 1 100); do [ "$(pdfs)" -gt "$before" ] && break; sleep 0.1; done
  sleep 1
  shot "$name"
  if [ "$(pdfs)" -gt "$before" ]; then
    local pdf
    pdf=$(ls -t "$out/cases"/*.pdf | head -1)
    until tail -c 8 "$pdf" | grep -q '%%EOF'; do sleep 0.1; done
    echo "[$name] letter: $(basename "$pdf")"
    pdftotext "$pdf" - | sed 's/^/    /' | grep -v '^ *$' | head -40
    pdftoppm -png -r 60 -f 1 -l 1 "$pdf" "$out/$name-letter"
  else
    echo "[$name] no letter written"
  fi
}

ticket 1-first "$first" "T-1001"
ticket 2-typo "$typo" "T-1002"
ticket 2-second "$second" "T-1002"
ticket 3-third "$third" "T-1003"
echo "screenshots and letters in $out"
