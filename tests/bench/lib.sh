# shellcheck shell=bash
# Shell helpers the benchmark scripts share (sourced, from the repository's root).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

wait_for() {  # file pattern name
  for _ in $(seq 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "$(basename "$0"): $3 did not start:" >&2
  cat "$1" "$1.err" >&2 2>/dev/null || true
  exit 1
}

# wrk's latency as milliseconds
ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us$/, "", v); print v / 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v); print v + 0 } else { sub(/s$/, "", v); print v * 1000 } }'; }

# The common start of a benchmark script: every tool it names installed, idemctl built, a
# temporary folder ($WORK, under $BENCH_DIR or /tmp), and on exit every process in $PIDS stopped,
# the private cluster in $WORK/pg stopped and the folder removed.
bench_setup() {  # name tool...
  local name=$1 tool
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$name: $tool is not installed (see the header of this script)" >&2; exit 2; }
  done
  [ -x "$IDEMCTL" ] || { echo "$name: $IDEMCTL not found; build first (./run build) or set IDEMCTL" >&2; exit 2; }
  WORK=$(mktemp -d "${BENCH_DIR:-/tmp}/idem-${name%.sh}-XXXXXX")
  chmod 755 "$WORK"
  PIDS=()
  trap bench_cleanup EXIT
}
bench_cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    if kill "$pid" 2>/dev/null; then wait "$pid" 2>/dev/null || true; fi
  done
  "$IDEMCTL" cluster stop --dir "$WORK/pg" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}

# A wrk script that sends every request under a key never sent before (per run, per wrk thread,
# per request; the run's name is wrk's first script argument) as a POST /v1/charges. With BODY,
# every request carries that body; without, each body names its key, so no two requests are the
# same charge.
new_keys_lua() {  # file [body]
  local body="'{\"amount\":1000,\"currency\":\"usd\",\"customer\":\"cus_bench\",\"order\":\"' .. key .. '\"}'"
  [ $# -ge 2 ] && body="'$2'"
  cat >"$1" <<LUA
local counter, prefix = 0, ""
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
function init(args) prefix = (args[1] or "run") .. "-" .. tostring(tid) .. "-" end
function request()
  counter = counter + 1
  local key = prefix .. counter
  return wrk.format("POST", "/v1/charges", { ["Content-Type"] = "application/json", ["Idempotency-Key"] = key },
                    $body)
end
LUA
}
