#!/usr/bin/env bash
# Issue 28 #10, side by side: REPLAYS concurrent replays of one large stored answer through
# `idemctl proxy` (Python's http.server upstream, tests/proxy/raw_upstream.py), while another
# tenant sends a new key every 100 ms. For each binary, alternating for ROUNDS rounds on one
# private cluster: the proxy's peak resident memory (VmHWM, reset before the burst), its resident
# memory 5 s after, the replays' statuses (every 201 is compared byte for byte with the stored
# answer) and the other tenant's statuses and slowest answer.
#   tests/bench/replay_memory.sh BEFORE AFTER [ROUNDS]
#   REPLAYS=60 BYTES=15728640 POOL=16 tests/bench/replay_memory.sh old/idemctl build/app/idemctl/idemctl
# Needs curl, python3 and the PostgreSQL server binaries.
set -euo pipefail
cd "$(dirname "$0")/../.."
before=${1:?usage: replay_memory.sh BEFORE AFTER [ROUNDS]}
after=${2:?usage: replay_memory.sh BEFORE AFTER [ROUNDS]}
rounds=${3:-1}
replays=${REPLAYS:-60} bytes=${BYTES:-15728640} pool=${POOL:-16}
dir=$(mktemp -d /tmp/idem-replaymem-XXXXXX)
chmod 755 "$dir"  # the cluster's server may run as another user (postgres, when this runs as root)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "$after" cluster stop --dir "$dir/pg" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
"$after" cluster start --dir "$dir/pg" >/dev/null
admin="host=$dir/pg/sock port=5432 user=idem dbname=postgres"
cat > "$dir/policy.json" <<'EOF'
{ "docs_url": "https://docs.test/idempotency",
  "tiers": [ { "name": "big", "routes": ["POST /v1/big"], "ttl": "1h" },
             { "name": "charges", "routes": ["POST /v1/charges"], "ttl": "1h" } ] }
EOF
python3 tests/proxy/raw_upstream.py --ledger "$dir/ledger" > "$dir/upstream.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q http "$dir/upstream.out" && break; sleep 0.1; done
upstream=$(grep -o 'http://[0-9.:]*' "$dir/upstream.out")

status_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

run() {  # run SIDE BINARY ROUND
  local side=$1 bin=$2 round=$3 db="rm_${1}_$3" out="$dir/$1_$3"
  mkdir -p "$out"
  psql "$admin" -qc "CREATE DATABASE $db" >/dev/null
  local conn="host=$dir/pg/sock port=5432 user=idem dbname=$db"
  "$bin" migrate --db "$conn" >/dev/null
  "$bin" proxy --db "$conn" --policy "$dir/policy.json" --upstream "$upstream" --tenant-header X-Tenant-Id \
    --pool "$pool" --access-log off > "$out/proxy.out" 2> "$out/proxy.err" &
  local proxy=$!
  pids+=($proxy)
  for _ in $(seq 100); do grep -q http "$out/proxy.out" && break; sleep 0.1; done
  local port
  port=$(grep -o 'http://127.0.0.1:[0-9]*' "$out/proxy.out" | head -1 | sed 's/.*://')
  local big=(-s -X POST -H 'Idempotency-Key: big-1' -H 'X-Tenant-Id: a' -H "X-Test-Bytes: $bytes"
             -H 'Content-Type: application/json' --data '{}' "http://127.0.0.1:$port/v1/big")
  curl -o "$out/stored" "${big[@]}"
  sleep 1
  local base
  base=$(status_kib "$proxy" VmRSS)
  echo 5 > "/proc/$proxy/clear_refs"  # VmHWM starts over: the peak of the burst alone
  (for i in $(seq 40); do
     curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -X POST -H "Idempotency-Key: other-$i" \
       -H 'X-Tenant-Id: b' -H 'Content-Type: application/json' --data '{"n":1}' \
       "http://127.0.0.1:$port/v1/charges"
     sleep 0.1
   done > "$out/other") &
  local other=$!
  local burst=()
  for i in $(seq "$replays"); do
    curl -o "$out/r$i" -w '%{http_code}\n' "${big[@]}" >> "$out/codes" &
    burst+=($!)
  done
  wait "${burst[@]}" "$other"
  local peak same=0
  peak=$(status_kib "$proxy" VmHWM)
  for i in $(seq "$replays"); do
    cmp -s "$out/stored" "$out/r$i" && same=$((same + 1))
    rm -f "$out/r$i"
  done
  sleep 5
  local idle
  idle=$(status_kib "$proxy" VmRSS)
  kill "$proxy"
  wait "$proxy" 2>/dev/null || true
  printf '%-6s round %d  peak %7d KiB (+%d)  after 5 s %7d KiB (+%d)  replays: %s, %d byte-identical  other tenant: %s, slowest %s s\n' \
    "$side" "$round" "$peak" $((peak - base)) "$idle" $((idle - base)) \
    "$(sort "$out/codes" | uniq -c | awk '{printf "%s%s x %s", sep, $1, $2; sep=", "}')" "$same" \
    "$(cut -d' ' -f1 "$out/other" | sort | uniq -c | awk '{printf "%s%s x %s", sep, $1, $2; sep=", "}')" \
    "$(cut -d' ' -f2 "$out/other" | sort -n | tail -1)"
  psql "$admin" -qc "DROP DATABASE $db" >/dev/null
}

echo "$replays concurrent replays of a $bytes-byte stored answer, --pool $pool"
for ((round = 1; round <= rounds; round++)); do
  run before "$before" "$round"
  run after "$after" "$round"
done
