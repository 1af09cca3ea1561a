#!/usr/bin/env bash
# Load benchmark (README, "Endpoint load benchmark"): wrk against the replay path of the endpoint and
# against an enforcement-free route of the same server, side by side in one run.
#
#   tests/bench/load.sh                 # 10 s per run, 16 connections, 1 wrk thread
#   DURATION=30s CONNECTIONS=64 THREADS=2 tests/bench/load.sh
#   IDEMCTL=build-ep/app/idemctl/idemctl tests/bench/load.sh
#
# What is compared (same body, same JSON parsing and validation, same HTTP stack):
#   replay     POST /v1/payments with an Idempotency-Key that already completed: one claim
#              round trip to PostgreSQL that answers "replay" with the stored response.
#   no-enforce POST /v1/echo: parses the JSON body and answers it; no store access.
# The ratio replay/no-enforce is the throughput the enforcement keeps on its hottest path.
# It needs wrk (apt install wrk) and the PostgreSQL server binaries; it starts its own private
# cluster (fsync on) and endpoint (access log off) and removes them afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."
IDEMCTL=${IDEMCTL:-build/app/idemctl/idemctl}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
SERVER_THREADS=${SERVER_THREADS:-$((CONNECTIONS + 8))}
POOL=${POOL:-16}

command -v wrk >/dev/null || { echo "load.sh: wrk is not installed (apt install wrk)" >&2; exit 2; }
[ -x "$IDEMCTL" ] || { echo "load.sh: $IDEMCTL not found; build first (./run build) or set IDEMCTL" >&2; exit 2; }

WORK=$(mktemp -d /tmp/idem-bench-XXXXXX)
chmod 755 "$WORK"
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  "$IDEMCTL" cluster stop --dir "$WORK/pg" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

"$IDEMCTL" cluster start --dir "$WORK/pg" >/dev/null
DB="$("$IDEMCTL" cluster conninfo --dir "$WORK/pg")"
"$IDEMCTL" migrate --db "$DB" >/dev/null

"$IDEMCTL" serve --db "$DB" --listen 127.0.0.1:0 --threads "$SERVER_THREADS" --pool "$POOL" --access-log off \
  >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVER_PID=$!
for _ in $(seq 50); do grep -q "listening on" "$WORK/serve.out" && break; sleep 0.1; done
URL=$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/serve.out" | head -1)
[ -n "$URL" ] || { echo "load.sh: the endpoint did not start:" >&2; cat "$WORK/serve.err" >&2; exit 1; }

BODY='{"amount":1000,"currency":"usd","customer":"cus_bench"}'
# The key's first request executes; every request of the run is then a replay.
curl -sf -o /dev/null -X POST "$URL/v1/payments" -H 'Content-Type: application/json' \
  -H 'Idempotency-Key: bench-replay-1' -H 'Account-Id: acct_bench' -d "$BODY"

cat >"$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Idempotency-Key"] = "bench-replay-1"
wrk.headers["Account-Id"] = "acct_bench"
LUA

run() {  # name path
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$WORK/post.lua" "$URL$2" >"$WORK/$1.txt"
  local rps p50 p99 non2xx
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/$1.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$WORK/$1.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$WORK/$1.txt")
  non2xx=$(awk '/Non-2xx/ {print $5}' "$WORK/$1.txt")
  printf '%-11s %-18s %12s req/s   p50 %-9s p99 %-9s%s\n' "$1" "$2" "$rps" "$p50" "$p99" \
    "${non2xx:+  ($non2xx non-2xx!)}"
  eval "RPS_$1=$rps"
}

echo "wrk: $THREADS thread(s), $CONNECTIONS connections, $DURATION per run; endpoint $URL ($SERVER_THREADS threads, pool $POOL)"
run noenforce /v1/echo
run replay /v1/payments
# shellcheck disable=SC2154  # set by eval in run()
awk -v r="$RPS_replay" -v n="$RPS_noenforce" 'BEGIN { printf "ratio replay / no-enforce: %.2f\n", r / n }'
