#!/usr/bin/env bash
# ./run fuzz [SECONDS]: runs every libFuzzer target (tests/fuzz/fuzz_*.cpp, built by ./run
# with clang, ASan and UBSan into build-asan) for SECONDS each (default 10) from its seeds in
# tests/fuzz/corpus/<name>/, and prints executions per second and what was found.
# Exits non-zero when a target crashed or broke an invariant; the input is kept under
# build-asan/fuzz-artifacts/ (reproduce: build-asan/tests/fuzz/fuzz_<name> <file>).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-10}
BUILD=${IDEM_FUZZ_BUILD_DIR:-build-asan}
SEEDS=tests/fuzz/corpus
mapfile -t NAMES < <(cd tests/fuzz && ls fuzz_*.cpp | sed 's/^fuzz_//; s/\.cpp$//')
# The service target needs PostgreSQL: a throwaway cluster, started by the build's idemctl.
IDEMCTL=${IDEMCTL:-$BUILD/app/idemctl/idemctl}

cluster=$(mktemp -d /tmp/idem-fuzz-XXXXXX)
stop_cluster() { "$IDEMCTL" cluster stop --dir "$cluster" >/dev/null 2>&1 || true; rm -rf "$cluster"; }
trap stop_cluster EXIT
"$IDEMCTL" cluster start --dir "$cluster" >/dev/null
export IDEM_FUZZ_CONNINFO="host=$cluster/sock port=5432 user=idem dbname=postgres"

mkdir -p "$BUILD/fuzz-artifacts" "$BUILD/fuzz-logs"
failed=()
printf '%-16s %10s %10s %9s %8s  %s\n' target seconds execs exec/s new found
for n in "${NAMES[@]}"; do
  work="$BUILD/fuzz-corpus/$n"  # new inputs go here; the seeds in the repo stay small
  mkdir -p "$work"
  log="$BUILD/fuzz-logs/$n.log"
  rm -f "$BUILD/fuzz-artifacts/$n-"*
  # Tokens that lead the mutator into the grammar: JSON's for every target, plus its own.
  dict="$BUILD/fuzz-logs/$n.dict"
  cat tests/fuzz/dict/json.dict >"$dict"
  [ -f "tests/fuzz/dict/$n.dict" ] && cat "tests/fuzz/dict/$n.dict" >>"$dict"
  status=0
  "$BUILD/tests/fuzz/fuzz_$n" -dict="$dict" -max_total_time="$SECONDS_EACH" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$BUILD/fuzz-artifacts/$n-" "$work" "$SEEDS/$n" >"$log" 2>&1 || status=$?
  stat_of() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
  found="nothing"
  if [ "$status" -ne 0 ]; then
    found="$(grep -m1 -E 'ERROR: (AddressSanitizer|libFuzzer|UndefinedBehaviorSanitizer|LeakSanitizer)|runtime error:|fuzz invariant broken' "$log" || echo "exit $status")"
    failed+=("$n")
  fi
  printf '%-16s %10s %10s %9s %8s  %s\n' "$n" "$SECONDS_EACH" "$(stat_of number_of_executed_units)" \
    "$(stat_of average_exec_per_sec)" "$(stat_of new_units_added)" "$found"
done

if [ ${#failed[@]} -gt 0 ]; then
  for n in "${failed[@]}"; do
    echo
    echo "== fuzz_$n: $(ls "$BUILD/fuzz-artifacts/$n-"* 2>/dev/null | tr '\n' ' ')(log: $BUILD/fuzz-logs/$n.log)"
    grep -A 12 -m1 -E 'ERROR: |runtime error:|fuzz invariant broken' "$BUILD/fuzz-logs/$n.log" || tail -n 20 "$BUILD/fuzz-logs/$n.log"
  done
  exit 1
fi
