# Shell helpers the benchmark scripts share (sourced; needs $WORK set by the caller for nothing).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

wait_for() {  # file pattern name
  for _ in $(seq 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "$(basename "$0"): $3 did not start:" >&2
  cat "$1" "$1.err" >&2 2>/dev/null || true
  exit 1
}

# wrk's latency as milliseconds
ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us$/, "", v); print v / 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v); print v + 0 } else { sub(/s$/, "", v); print v * 1000 } }'; }
