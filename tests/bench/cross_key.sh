#!/usr/bin/env bash
# What a tier's `cross_key` costs a new key through the proxy (docs/policy.md, "Duplicates across
# keys"): two `idemctl proxy` processes on one store in front of one upstream
# (tests/bench/peer/charge_service.js), the same tier with cross_key off and in hold, fed by the
# same load generator (wrk) with new keys whose bodies all differ (so none matches: this is the
# price every new key pays for the look). Alternating rounds, which side goes first alternating
# too, so the host's drift falls on both; per side: requests/s, p50, and the CPU per request of
# that proxy and of its PostgreSQL backends, then hold / off.
#
#   tests/bench/cross_key.sh                         # 4 rounds of 5 s, 16 connections, then 1
#   ROUNDS=8 DURATION=3s tests/bench/cross_key.sh
#   HOLD_CROSS_KEY='{ "mode": "off" }' tests/bench/cross_key.sh   # both sides off: the noise floor
# Needs wrk, node + npm (the upstream's packages are installed into tests/bench/peer on first
# use) and the PostgreSQL server binaries. Everything runs on loopback in a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
IDEMCTL=${IDEMCTL:-build/app/idemctl/idemctl}
DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-4}
CONNECTIONS=${CONNECTIONS:-16}
PEER=tests/bench/peer
# shellcheck source=tests/bench/lib.sh
source tests/bench/lib.sh

bench_setup cross_key.sh wrk node npm psql
[ -d "$PEER/node_modules" ] || (cd "$PEER" && npm ci --no-audit --no-fund >/dev/null)

"$IDEMCTL" cluster start --dir "$WORK/pg" >/dev/null
DB="$("$IDEMCTL" cluster conninfo --dir "$WORK/pg")"
"$IDEMCTL" migrate --db "$DB" >/dev/null
node "$PEER/charge_service.js" --port 0 >"$WORK/upstream.out" 2>"$WORK/upstream.out.err" &
PIDS+=($!)
wait_for "$WORK/upstream.out" "listening on" "the upstream"
UPSTREAM=$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/upstream.out" | head -1)

start_proxy() {  # side cross_key-json
  cat >"$WORK/$1.json" <<JSON
{ "docs_url": "https://docs.example/idempotency", "single_tenant": true,
  "tiers": [ { "name": "charges", "routes": ["POST /v1/charges"], "ttl": "24h", "lease": "30s",
               "fingerprint": { "mode": "json" }, "cross_key": $2 } ] }
JSON
  # Two services on one store: each records its own policy.
  # Each side's connections carry its name, so its backends' CPU can be told from the other's and
  # from PostgreSQL's own background work (autovacuum, checkpoints), which lands on whichever
  # side runs when it happens.
  "$IDEMCTL" proxy --db "$DB application_name=bench-$1" --policy "$WORK/$1.json" --service "bench-$1" --upstream "$UPSTREAM" \
    --listen 127.0.0.1:0 --access-log off >"$WORK/$1.out" 2>"$WORK/$1.out.err" &
  PIDS+=($!)
  eval "PID_$1=$!"
  wait_for "$WORK/$1.out" "listening on" "idemctl proxy ($1)"
  eval "URL_$1=$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/$1.out" | head -1)"
}
start_proxy off '{ "mode": "off" }'
start_proxy hold "${HOLD_CROSS_KEY:-{ \"mode\": \"hold\", \"window\": \"60s\" \}}"

# Every request a new key and a body of its own (the key is in the body).
new_keys_lua "$WORK/new.lua"

ticks() {  # pid...: their CPU clock ticks, summed
  local total=0 pid t
  for pid in "$@"; do
    t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) || continue
    total=$((total + t))
  done
  echo "$total"
}
backends() {  # side: the pids of that proxy's PostgreSQL backends
  psql "$DB" -XAt -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'bench-$1'"
}
HZ=$(getconf CLK_TCK)
declare -A REQ SEC P50 PROXYT PGT NON2XX ROUND_RPS ROUND_CPU
run() {  # side connections round
  local pid url before_p before_g after_p after_g
  pid=$(eval echo "\$PID_$1")
  url=$(eval echo "\$URL_$1")
  local pids
  pids=$(backends "$1")
  before_p=$(ticks "$pid")
  # shellcheck disable=SC2086  # the backends, one word each
  before_g=$(ticks $pids)
  wrk -t1 -c"$2" -d"$DURATION" --latency -s "$WORK/new.lua" "$url" -- "$1-$2-$3-$RANDOM" >"$WORK/run.txt"
  after_p=$(ticks "$pid")
  # shellcheck disable=SC2086
  after_g=$(ticks $pids)
  local k="$1/$2"
  REQ[$k]=$(( ${REQ[$k]:-0} + $(awk '/requests in/ {print $1}' "$WORK/run.txt") ))
  SEC[$k]=$(awk -v s="${SEC[$k]:-0}" '/requests in/ {v = $4; sub(/s,?$/, "", v); print s + v}' "$WORK/run.txt")
  P50[$k]="${P50[$k]:-} $(ms "$(awk '$1 == "50%" {print $2}' "$WORK/run.txt")")"
  PROXYT[$k]=$(( ${PROXYT[$k]:-0} + after_p - before_p ))
  PGT[$k]=$(( ${PGT[$k]:-0} + after_g - before_g ))
  NON2XX[$k]=$(( ${NON2XX[$k]:-0} + $(awk '/Non-2xx/ {print $5; f = 1} END {if (!f) print 0}' "$WORK/run.txt") ))
  # This round's own figures, for the per-round ratios below
  ROUND_RPS[$k/$3]=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/run.txt")
  ROUND_CPU[$k/$3]=$(awk -v n="$(awk '/requests in/ {print $1}' "$WORK/run.txt")" -v t=$((after_g - before_g)) 'BEGIN {print t / n}')
  # VERBOSE=1: each run's own figures, to see whether one round carries a ratio
  [ -z "${VERBOSE:-}" ] || awk -v side="$1" -v c="$2" -v r="$3" -v pt=$((after_p - before_p)) \
    -v gt=$((after_g - before_g)) '/requests in/ {printf "round %s, %s connection(s), %s: %s requests, ticks proxy %d backends %d\n", r, c, side, $1, pt, gt}' \
    "$WORK/run.txt" >&2
}

for side in off hold; do wrk -t1 -c"$CONNECTIONS" -d2s -s "$WORK/new.lua" "$(eval echo "\$URL_$side")" -- "warm-$side" >/dev/null; done
for conns in "$CONNECTIONS" 1; do
  for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then run off "$conns" "$round"; run hold "$conns" "$round"
    else run hold "$conns" "$round"; run off "$conns" "$round"; fi
  done
done

echo "cross_key off vs hold through idemctl proxy: $ROUNDS alternating round(s) of $DURATION per side;" \
  "wrk -t1; each request a new key and its own body; PostgreSQL fsync on; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| connections | cross_key | req/s | p50 (median of rounds) | proxy CPU per request | its backends' CPU per request | non-2xx |"
echo "|---|---|---:|---:|---:|---:|---:|"
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for conns in "$CONNECTIONS" 1; do
  for side in off hold; do
    k="$side/$conns"
    awk -v c="$conns" -v s="$side" -v n="${REQ[$k]}" -v sec="${SEC[$k]}" -v p50="$(echo "${P50[$k]}" | median)" \
      -v pt="${PROXYT[$k]}" -v gt="${PGT[$k]}" -v hz="$HZ" -v bad="${NON2XX[$k]}" 'BEGIN {
      printf "| %s | %s | %.0f | %.2f ms | %.3f ms | %.3f ms | %d |\n", c, s, n / sec, p50, pt / hz * 1000 / n, gt / hz * 1000 / n, bad }'
  done
  awk -v c="$conns" -v no="${REQ[off/$conns]}" -v so="${SEC[off/$conns]}" -v nh="${REQ[hold/$conns]}" \
    -v sh="${SEC[hold/$conns]}" -v po="${PROXYT[off/$conns]}" -v ph="${PROXYT[hold/$conns]}" \
    -v go="${PGT[off/$conns]}" -v gh="${PGT[hold/$conns]}" 'BEGIN {
    printf "| %s | **hold / off** | **%.2fx** | | %.2fx | %.2fx | |\n", c, (nh / sh) / (no / so), (ph / nh) / (po / no), (gh / nh) / (go / no) }'
  # A round that a neighbour's burst hit moves the totals; the median of the rounds' own ratios
  # does not follow one outlier.
  rps_ratios="" cpu_ratios=""
  for round in $(seq "$ROUNDS"); do
    rps_ratios+=" $(awk -v h="${ROUND_RPS[hold/$conns/$round]}" -v o="${ROUND_RPS[off/$conns/$round]}" 'BEGIN {print h / o}')"
    cpu_ratios+=" $(awk -v h="${ROUND_CPU[hold/$conns/$round]}" -v o="${ROUND_CPU[off/$conns/$round]}" 'BEGIN {print h / o}')"
  done
  printf '| %s | hold / off, median of the %s rounds | %.2fx | | | %.2fx | |\n' "$conns" "$ROUNDS" \
    "$(echo "$rps_ratios" | median)" "$(echo "$cpu_ratios" | median)"
done
# Each side measured what it says: the hold proxy's keys carry their request's mark, the off one's do not.
echo
psql "$DB" -XAtF' ' -c "SELECT 'keys marked as their request''s latest execution: ' || string_agg(service || ' ' || marked || ' of ' || n, ', ' ORDER BY service) FROM (SELECT service, count(*) FILTER (WHERE same_request_latest) AS marked, count(*) AS n FROM idem.keys GROUP BY service) s"
