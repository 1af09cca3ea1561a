#!/usr/bin/env bash
# Load benchmark (README, "Endpoint load benchmark"): wrk against the replay path of the endpoint and
# against an enforcement-free route of the same server, side by side in one run.
#
#   tests/bench/load.sh                 # 10 s per run, 16 connections, 1 wrk thread
#   DURATION=30s CONNECTIONS=64 THREADS=2 tests/bench/load.sh
#   IDEMCTL=build-ep/app/idemctl/idemctl tests/bench/load.sh
#
# What is compared (same body, same JSON parsing and validation, same HTTP stack):
#   noenforce    POST /v1/echo: parses the JSON body and answers it; no store access.
#   replay-store POST /v1/payments with an Idempotency-Key that already completed, on a second
#                endpoint started with --replay-cache off: every replay is one claim round trip
#                to PostgreSQL that answers "replay" with the stored response (the "before").
#   replay       the same on the endpoint as it runs by default: the replay cache answers from
#                memory (at most --replay-cache after the store's last read, never past expiry).
# Every replay is traced either way. The ratio replay/noenforce is the throughput the enforcement
# keeps on its hottest path; "commits/s" is the store's load during each run (pg_stat_database
# xact_commit delta: claim reads and the trace's batched COPYs).
# It needs wrk (apt install wrk) and the PostgreSQL server binaries; it starts its own private
# cluster (fsync on) and endpoints (access log off) and removes them afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/bench/lib.sh
source tests/bench/lib.sh
IDEMCTL=${IDEMCTL:-build/app/idemctl/idemctl}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
SERVER_THREADS=${SERVER_THREADS:-$((CONNECTIONS + 8))}
POOL=${POOL:-16}

bench_setup load.sh wrk

"$IDEMCTL" cluster start --dir "$WORK/pg" >/dev/null
DB="$("$IDEMCTL" cluster conninfo --dir "$WORK/pg")"
"$IDEMCTL" migrate --demo --db "$DB" >/dev/null  # serve writes the demo ledger

start_server() {  # name [flags...]: starts an endpoint, sets URL_<name>
  local name=$1
  shift
  "$IDEMCTL" serve --db "$DB" --listen 127.0.0.1:0 --threads "$SERVER_THREADS" --pool "$POOL" --access-log off "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" &
  PIDS+=($!)
  for _ in $(seq 50); do grep -q "listening on" "$WORK/$name.out" && break; sleep 0.1; done
  local url
  url=$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/$name.out" | head -1)
  [ -n "$url" ] || { echo "load.sh: the endpoint did not start:" >&2; cat "$WORK/$name.err" >&2; exit 1; }
  eval "URL_$name=$url"
}
start_server cached
start_server uncached --replay-cache off
# shellcheck disable=SC2154  # set by eval in start_server
URL=$URL_cached

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

commits() {
  psql "$DB" -Atc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
}

claims() {  # url: the store round trips its claims took (idem_claim_statements_total)
  curl -s "$1/metrics" | awk '$1 == "idem_claim_statements_total" {print $2}'
}

run() {  # name url path
  local before after trips
  before=$(commits)
  trips=$(claims "$2")
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$WORK/post.lua" "$2$3" >"$WORK/$1.txt"
  sleep 11  # an idle backend reports its statistics to pg_stat_database within 10 s (PGSTAT_IDLE_INTERVAL)
  after=$(commits)
  trips=$(( $(claims "$2") - trips ))
  local rps p50 p99 non2xx secs
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/$1.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$WORK/$1.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$WORK/$1.txt")
  non2xx=$(awk '/Non-2xx/ {print $5}' "$WORK/$1.txt")
  secs=$(awk '/requests in/ {v=$4; sub(/,$/, "", v); if (v ~ /ms$/) {sub(/ms$/, "", v); v/=1000} else sub(/s$/, "", v); print v}' "$WORK/$1.txt")
  printf '%-13s %-14s %10s req/s  p50 %-9s p99 %-9s claim round trips/s %7.0f  store commits/s %7.0f%s\n' \
    "$1" "$3" "$rps" "$p50" "$p99" "$(awk -v t="$trips" -v s="$secs" 'BEGIN { print t / s }')" \
    "$(awk -v a="$after" -v b="$before" -v s="$secs" 'BEGIN { print (a - b) / s }')" "${non2xx:+  ($non2xx non-2xx!)}"
  eval "RPS_${1//-/_}=$rps"
}

echo "wrk: $THREADS thread(s), $CONNECTIONS connections, $DURATION per run; endpoints $URL_cached (default) and" \
  "$URL_uncached (--replay-cache off), $SERVER_THREADS threads, pool $POOL each"
run noenforce "$URL" /v1/echo
run replay-store "$URL_uncached" /v1/payments
run replay "$URL" /v1/payments
# shellcheck disable=SC2154  # set by eval in run()
awk -v r="$RPS_replay" -v s="$RPS_replay_store" -v n="$RPS_noenforce" \
  'BEGIN { printf "ratio replay / no-enforce: %.2f (replay-store / no-enforce: %.2f)\n", r / n, s / n }'
curl -s "$URL/metrics" |
  grep -E '^idem_replay_cache_(hits|misses)_total' || true
