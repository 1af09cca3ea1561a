#!/bin/bash
# Measures real retry libraries against `idemctl serve --allow-fault-injection` and stores each
# library's schedule as tests/data/clients/<library>.json (docs/simulator.md: run by hand;
# CI only compares the presets with the stored files). Loopback only; every step is time-bounded.
# Usage: tests/clients/run.sh IDEMCTL [OPS]        (IDEMCTL: path to the built idemctl)
set -euo pipefail
IDEMCTL=$(realpath "${1:?usage: run.sh IDEMCTL [OPS]}")
OPS=${2:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA="$HERE/../data/clients"
export IDEM_CLIENTS_DIR=${IDEM_CLIENTS_DIR:-/tmp/idem-clients}
WORK=$(mktemp -d /tmp/idem-measure-XXXXXX)
chmod 755 "$WORK"  # the postgres user runs the throwaway cluster inside it
# Narrow a refresh with PROFILES, NODE_LIBS or PY_LIBS in the environment (store.py rewrites
# only the files of libraries that ran).
PROFILES=${PROFILES:-"500 503-retry-after-2 409 reset hang"}
NODE_LIBS=${NODE_LIBS-"stripe-node aws-js-v3 aws-js-v3-default got axios-retry"}
PY_LIBS=${PY_LIBS-"urllib3 aws-botocore stripe-python"}

# 1. The libraries: npm packages in IDEM_CLIENTS_DIR, Debian's Python packages.
mkdir -p "$IDEM_CLIENTS_DIR"
( cd "$IDEM_CLIENTS_DIR" && [ -f package.json ] || npm init -y >/dev/null )
( cd "$IDEM_CLIENTS_DIR" && timeout 300 npm install --no-audit --no-fund stripe @aws-sdk/client-dynamodb \
    @aws-sdk/client-sqs @smithy/node-http-handler got axios axios-retry >/dev/null )
DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq python3-urllib3 python3-botocore python3-stripe >/dev/null

# 2. A throwaway store and the endpoint with fault injection, on loopback.
"$IDEMCTL" cluster start --dir "$WORK/pg" >/dev/null
DB="host=$WORK/pg/sock port=5432 user=idem dbname=postgres"
cleanup() { [ -n "${SERVE:-}" ] && kill "$SERVE" 2>/dev/null; "$IDEMCTL" cluster stop --dir "$WORK/pg" >/dev/null 2>&1 || true; }
trap cleanup EXIT
"$IDEMCTL" migrate --demo --db "$DB" >/dev/null  # serve writes the demo ledger
"$IDEMCTL" serve --db "$DB" --allow-fault-injection --listen 127.0.0.1:0 >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVE=$!
for _ in $(seq 50); do grep -q listening "$WORK/serve.out" 2>/dev/null && break; sleep 0.1; done
BASE=$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/serve.out" | head -1)

# 3. One library at a time (fewer processes competing for the CPU keep the timings clean), its
#    profiles side by side; the operations of one profile run one after another.
run_lib() {  # runner driver lib
  local pids=() p
  for p in $PROFILES; do
    timeout 600 "$1" "$2" "$3" "$p" "$OPS" "$BASE" 2>>"$WORK/drivers.err" & pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || true; done
}
for lib in $NODE_LIBS; do run_lib node "$HERE/drive.mjs" "$lib"; done
for lib in $PY_LIBS; do run_lib /usr/bin/python3 "$HERE/drive.py" "$lib"; done
sleep 1  # the endpoint writes attempts off its event loop

# 4. One file per library: its measured schedule, version and the settings the driver made.
"$IDEMCTL" measure --db "$DB" --format json >"$WORK/measure.json"
/usr/bin/python3 "$HERE/store.py" "$WORK/measure.json" "$DATA" "$IDEM_CLIENTS_DIR" "$OPS"
echo "stored in $DATA (work files: $WORK)"
