#!/usr/bin/env bash
# Two builds of idemctl side by side on one private cluster: new keys and replays through the
# library (idemctl bench --profile), the two binaries alternating for ROUNDS rounds so the
# machine's drift falls on both. For a refactor that must be "no slower" (e.g. a build change).
#   tests/bench/compare_binaries.sh BEFORE AFTER [ROUNDS] [SECONDS] [CLIENTS]
set -euo pipefail
before=${1:?usage: compare_binaries.sh BEFORE AFTER [ROUNDS] [SECONDS] [CLIENTS]}
after=${2:?usage: compare_binaries.sh BEFORE AFTER [ROUNDS] [SECONDS] [CLIENTS]}
rounds=${3:-3} seconds=${4:-4} clients=${5:-8}
dir=$(mktemp -d /tmp/idem-compare-XXXXXX)
trap '"$after" cluster stop --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
"$after" cluster start --dir "$dir" >/dev/null
psql "host=$dir/sock port=5432 user=idem dbname=postgres" -qc "CREATE DATABASE compare" >/dev/null
db="host=$dir/sock port=5432 user=idem dbname=compare"
"$after" migrate --db "$db" >/dev/null

declare -A total=()
for ((round = 1; round <= rounds; round++)); do
  for profile in new replay; do
    for side in before after; do
      bin=$before; [ "$side" = after ] && bin=$after
      rate=$("$bin" bench --db "$db" --profile "$profile" --clients "$clients" --seconds "$seconds" 2>/dev/null |
        tail -1 | grep -o '[0-9]*/s' | tr -d '/s')
      echo "round $round  $profile  $side  $rate/s"
      total[$profile-$side]=$(( ${total[$profile-$side]:-0} + rate ))
    done
  done
done
for profile in new replay; do
  awk -v p="$profile" -v b="${total[$profile-before]}" -v a="${total[$profile-after]}" \
    'BEGIN { printf "%-6s after/before over all rounds: %.2fx (%d vs %d)\n", p, a / b, a, b }'
done
