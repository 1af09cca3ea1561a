#!/usr/bin/env bash
# What one index costs the new-key path: new keys per second through the library
# (idemctl bench --profile new) on two databases of one private cluster, the same schema but for
# INDEX (dropped on one side), alternating for ROUNDS rounds so the machine's drift falls on both.
#   tests/bench/index_cost.sh IDEMCTL INDEX [ROUNDS] [SECONDS] [CLIENTS]
set -euo pipefail
idemctl=${1:?usage: index_cost.sh IDEMCTL INDEX [ROUNDS] [SECONDS] [CLIENTS]}
index=${2:?usage: index_cost.sh IDEMCTL INDEX [ROUNDS] [SECONDS] [CLIENTS]}
rounds=${3:-4} seconds=${4:-8} clients=${5:-8}
dir=$(mktemp -d /tmp/idem-index-cost-XXXXXX)
trap '"$idemctl" cluster stop --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
"$idemctl" cluster start --dir "$dir" >/dev/null
admin="host=$dir/sock port=5432 user=idem dbname=postgres"
for side in with without; do
  psql "$admin" -qc "CREATE DATABASE cost_$side" >/dev/null
  "$idemctl" migrate --db "host=$dir/sock port=5432 user=idem dbname=cost_$side" >/dev/null
done
psql "host=$dir/sock port=5432 user=idem dbname=cost_without" -qc "DROP INDEX idem.$index" >/dev/null

declare -A total=()
for ((round = 1; round <= rounds; round++)); do
  for side in with without; do
    rate=$("$idemctl" bench --db "host=$dir/sock port=5432 user=idem dbname=cost_$side" --profile new \
      --clients "$clients" --seconds "$seconds" 2>/dev/null | tail -1 | grep -o '[0-9]*/s' | tr -d '/s')
    echo "round $round  $side $index  $rate new keys/s"
    total[$side]=$(( ${total[$side]:-0} + rate ))
  done
done
awk -v i="$index" -v w="${total[with]}" -v o="${total[without]}" \
  'BEGIN { printf "new keys with %s / without, over all rounds: %.3fx (%d vs %d)\n", i, w / o, w, o }'
