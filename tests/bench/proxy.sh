#!/usr/bin/env bash
# Proxy benchmark (README, "idemctl proxy"): one load generator (wrk), the same settings, side by
# side in one run against
#   straight      the upstream itself (tests/bench/peer/charge_service.js, plain Express), no idempotency;
#   proxy         `idemctl proxy` in front of that upstream: new keys, and replays of a done key
#                 (answered from memory, the default, and with --replay-cache off: from the store);
#   peer          the same Express app with node-idempotency (@node-idempotency/core + its Redis
#                 adapter) in the request path, on a private redis-server with appendfsync always
#                 (every write fsynced, as durable as PostgreSQL with fsync on): new keys, replays.
# Then prints a table with the ratios the issue's targets name. Each row also gives the server
# processes' CPU time per request (both proxies, both Express apps, redis-server, this run's
# PostgreSQL): on a 2-core host where the load generator and every server share the CPUs,
# throughput at 16 connections is CPU per request, and this says whose.
#
#   tests/bench/proxy.sh                       # 10 s per run, 16 connections, 1 wrk thread
#   DURATION=20s CONNECTIONS=32 tests/bench/proxy.sh
#   BENCH_DIR=/dev/shm tests/bench/proxy.sh    # both stores on tmpfs: a flush costs nothing, so
#                                              # what is left is each side's own work
# The new-key rows also run with one connection: a closed loop's p50 is one request's time, so
# "added p50" there is what the proxy adds to a request, not queueing at saturation.
# Then, against nginx (Debian's, proxy_pass with upstream keep-alive, worker_processes auto) in
# front of the same upstream, alternating rounds (ROUNDS, default 3; NGINX_DURATION per run,
# default 5s): a route no tier covers through each, and a replay of a done key through Idem vs the
# same POST passed through nginx, with idemctl's CPU time and context switches per request (all
# its threads, from /proc). IDEMCTL_BEFORE=path/to/another/idemctl adds that build's rows too
# (e.g. a worktree checkout of an earlier commit built into its own folder).
# Needs wrk, node + npm (the peer's packages are installed into tests/bench/peer on first use),
# redis-server (Debian package redis-server) and the PostgreSQL server binaries. Everything runs
# on loopback in a temporary folder and is removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/bench/lib.sh
source tests/bench/lib.sh
IDEMCTL=${IDEMCTL:-build/app/idemctl/idemctl}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
POOL=${POOL:-16}
PEER=tests/bench/peer

bench_setup proxy.sh wrk node npm redis-server psql
[ -d "$PEER/node_modules" ] || (cd "$PEER" && npm ci --no-audit --no-fund >/dev/null)

# PostgreSQL (fsync on) for Idem.
"$IDEMCTL" cluster start --dir "$WORK/pg" >/dev/null
DB="$("$IDEMCTL" cluster conninfo --dir "$WORK/pg")"
"$IDEMCTL" migrate --db "$DB" >/dev/null

# Redis for the peer: private, loopback, append-only file fsynced on every write.
REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$WORK" --save '' --appendonly yes \
  --appendfsync always --daemonize no >"$WORK/redis.out" 2>&1 &
PIDS+=($!)
wait_for "$WORK/redis.out" "Ready to accept connections" redis-server
[ "$(redis-cli -p "$REDIS_PORT" config get appendfsync | tail -1)" = always ] ||
  { echo "proxy.sh: redis-server is not fsyncing every write" >&2; exit 1; }

node "$PEER/charge_service.js" --port 0 >"$WORK/upstream.out" 2>"$WORK/upstream.out.err" &
PIDS+=($!)
wait_for "$WORK/upstream.out" "listening on" "the upstream"
node "$PEER/charge_service.js" --port 0 --redis "redis://127.0.0.1:$REDIS_PORT" >"$WORK/peer.out" 2>"$WORK/peer.out.err" &
PIDS+=($!)
wait_for "$WORK/peer.out" "listening on" "the peer"
UPSTREAM=$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/upstream.out" | head -1)
PEER_URL=$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/peer.out" | head -1)

cat >"$WORK/policy.json" <<'JSON'
{ "docs_url": "https://docs.example/idempotency", "single_tenant": true,
  "tiers": [ { "name": "charges", "routes": ["POST /v1/charges"], "ttl": "24h", "lease": "30s",
               "fingerprint": { "mode": "json" } } ] }
JSON
start_proxy() {  # name [flags...]
  local name=$1
  shift
  "${PROXY_BIN:-$IDEMCTL}" proxy --db "$DB" --policy "$WORK/policy.json" --upstream "$UPSTREAM" --listen 127.0.0.1:0 \
    --pool "$POOL" --access-log off "$@" >"$WORK/$name.out" 2>"$WORK/$name.out.err" &
  PIDS+=($!)
  eval "PID_$name=$!"
  wait_for "$WORK/$name.out" "listening on" "idemctl proxy"
  eval "URL_$name=$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/$name.out" | head -1)"
}
start_proxy proxy
start_proxy proxynocache --replay-cache off
# The same proxy writing new keys from handler threads that wait on each statement (the path
# before issue 30 item 4): the loop's gain, side by side.
start_proxy proxythreads --store-writes threads
# shellcheck disable=SC2154  # set by eval in start_proxy
PROXY=$URL_proxy
# shellcheck disable=SC2154
PROXY_NOCACHE=$URL_proxynocache
# shellcheck disable=SC2154
PROXY_THREADS=$URL_proxythreads

BODY='{"amount":1000,"currency":"usd","customer":"cus_bench"}'
# New keys: every request a key never sent before, all with the same body.
new_keys_lua "$WORK/new.lua" "$BODY"
# Replays: one key whose first request ran before the run.
cat >"$WORK/replay.lua" <<LUA
wrk.method = "POST"
wrk.path = "/v1/charges"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Idempotency-Key"] = "bench-replay-1"
LUA
for url in "$PROXY" "$PROXY_NOCACHE" "$PEER_URL"; do
  curl -sf -o /dev/null -X POST "$url/v1/charges" -H 'Content-Type: application/json' \
    -H 'Idempotency-Key: bench-replay-1' -d "$BODY"
done

# CPU time (clock ticks) of every server process of this run: the proxies, the Express apps,
# redis-server and this run's PostgreSQL (its postmaster and every backend). Not wrk's.
PGPID=$(head -1 "$WORK/pg/data/postmaster.pid")
cpu_ticks() {  # prints the ticks of idemctl, postgres, node and redis-server, in that order
  local pid comm ticks
  declare -A by=([idemctl]=0 [postgres]=0 [node]=0 [redis-server]=0)
  for pid in "${PIDS[@]}" "$PGPID" $(pgrep -P "$PGPID"); do
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
    ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) || continue
    [ -n "${by[$comm]+set}" ] && by[$comm]=$((by[$comm] + ticks))
  done
  echo "${by[idemctl]} ${by[postgres]} ${by[node]} ${by[redis-server]}"
}
HZ=$(getconf CLK_TCK)

# Every server gets a warm-up run first, not counted: a run that starts on a cold process
# measures its start (connections opened, code paged in), not its steady state.
warm() {  # url script
  wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s "$WORK/$2.lua" "$1" -- "warmup-$RANDOM" >/dev/null
}
warm "$UPSTREAM" new
warm "$PROXY" new
warm "$PROXY_NOCACHE" new
warm "$PROXY_THREADS" new
warm "$PEER_URL" new

run() {  # name url script label [connections]
  local before after requests cpu parts
  read -ra before <<<"$(cpu_ticks)"
  wrk -t"$THREADS" -c"${5:-$CONNECTIONS}" -d"$DURATION" --latency -s "$WORK/$3.lua" "$2" -- "$1" >"$WORK/$1.txt"
  read -ra after <<<"$(cpu_ticks)"
  requests=$(awk '/requests in/ {print $1}' "$WORK/$1.txt")
  # ms of CPU per request: total, then idemctl / PostgreSQL / node / redis
  read -r cpu parts <<<"$(awk -v n="$requests" -v hz="$HZ" -v d="$((after[0] - before[0])) $((after[1] - before[1])) $((after[2] - before[2])) $((after[3] - before[3]))" 'BEGIN {
    split(d, t, " "); total = 0; for (i = 1; i <= 4; i++) { ms[i] = t[i] / hz * 1000 / n; total += ms[i] }
    printf "%.3f %.2f/%.2f/%.2f/%.2f", total, ms[1], ms[2], ms[3], ms[4] }')"
  local rps p50 p99 non2xx
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/$1.txt")
  p50=$(ms "$(awk '$1 == "50%" {print $2}' "$WORK/$1.txt")")
  p99=$(ms "$(awk '$1 == "99%" {print $2}' "$WORK/$1.txt")")
  non2xx=$(awk '/Non-2xx/ {print $5}' "$WORK/$1.txt")
  printf '| %-34s | %10.0f | %7.2f ms | %7.2f ms | %6s ms (%s) |%s\n' "$4" "$rps" "$p50" "$p99" "$cpu" "$parts" "${non2xx:+ $non2xx non-2xx!}"
  eval "RPS_$1=$rps P50_$1=$p50"
}

echo "wrk: $THREADS thread(s), $CONNECTIONS connections (unless the row says 1), $DURATION per run; PostgreSQL fsync on;" \
  "redis appendfsync always; both stores in $(df --output=fstype "$WORK" | tail -1) ($WORK)"
echo
echo "| run | req/s | p50 | p99 | server CPU per request (idemctl/PostgreSQL/node/redis) |"
echo "|---|---|---|---|---|"
run straight "$UPSTREAM" new "straight to the upstream"
run proxynew "$PROXY" new "idemctl proxy, new keys"
run proxynewthreads "$PROXY_THREADS" new "idemctl proxy, new keys, --store-writes threads"
run peernew "$PEER_URL" new "node-idempotency + Redis, new keys"
run proxyreplay "$PROXY" replay "idemctl proxy, replays"
run proxyreplaystore "$PROXY_NOCACHE" replay "idemctl proxy, replays (cache off)"
run peerreplay "$PEER_URL" replay "node-idempotency + Redis, replays"
run straight1 "$UPSTREAM" new "straight, 1 connection" 1
run proxynew1 "$PROXY" new "idemctl proxy, new keys, 1 connection" 1
run proxynewthreads1 "$PROXY_THREADS" new "idemctl proxy, new keys, threads, 1 connection" 1
run peernew1 "$PEER_URL" new "node-idempotency, new keys, 1 connection" 1
echo
# shellcheck disable=SC2154  # set by eval in run()
awk -v pr="$RPS_proxyreplay" -v ps="$RPS_proxyreplaystore" -v er="$RPS_peerreplay" -v pn="$RPS_proxynew" \
  -v en="$RPS_peernew" -v sn="$RPS_straight" -v p50p="$P50_proxynew" -v p50s="$P50_straight" \
  -v p1p="$P50_proxynew1" -v p1s="$P50_straight1" -v p1e="$P50_peernew1" -v pt="$RPS_proxynewthreads" \
  -v p1t="$P50_proxynewthreads1" 'BEGIN {
  printf "replays vs the peer:   %.2fx (target >= 2.5x; cache off: %.2fx)\n", pr / er, ps / er
  printf "new keys vs the peer:  %.2fx (issue 30 target >= 1.5x); from handler threads %.2fx; loop / threads %.2fx\n", pn / en, pt / en, pn / pt
  # Every proxied new key runs the upstream once, on the same cores as everything else, so no
  # proxy design here can pass the upstream alone: the straight row is the ceiling.
  printf "ceiling for any proxy on this host: straight / the peer = %.2fx (a proxy at zero cost)\n", sn / en
  printf "proxy added p50 on new keys: %.2f ms over straight (target < 1 ms); new keys %.2fx of straight\n", p50p - p50s, pn / sn
  printf "added p50 on new keys, 1 connection: proxy %.2f ms (from handler threads %.2f ms), peer %.2f ms over straight\n", p1p - p1s, p1t - p1s, p1e - p1s
}'

# --- Against nginx -------------------------------------------------------------------------
if ! command -v nginx >/dev/null; then
  echo
  echo "nginx is not installed (Debian package nginx-light): the comparison with nginx is skipped"
  exit 0
fi
NGINX_PORT=$(free_port)
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes auto;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  fastcgi_temp_path $WORK/nginx/fastcgi;
  uwsgi_temp_path $WORK/nginx/uwsgi;
  scgi_temp_path $WORK/nginx/scgi;
  upstream app { server ${UPSTREAM#http://}; keepalive 64; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
CONF
nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' &
PIDS+=($!)
NGINX=http://127.0.0.1:$NGINX_PORT
for _ in $(seq 50); do curl -sf -o /dev/null "$NGINX/executions" && break; sleep 0.1; done
SIDES="nginx idem"
if [ -n "${IDEMCTL_BEFORE:-}" ]; then
  PROXY_BIN=$IDEMCTL_BEFORE start_proxy before
  curl -sf -o /dev/null -X POST "$URL_before/v1/charges" -H 'Content-Type: application/json' \
    -H 'Idempotency-Key: bench-replay-1' -d "$BODY"
  SIDES="nginx idem before"
fi
cat >"$WORK/plain.lua" <<LUA
wrk.method = "GET"
wrk.path = "/executions"
LUA

# idemctl's CPU ticks and context switches, all threads: "ticks switches"
proc_counts() {  # pid
  local ticks switches=0 f
  ticks=$(awk '{print $14 + $15}' "/proc/$1/stat")
  for f in /proc/"$1"/task/*/status; do
    switches=$((switches + $(awk '/ctxt_switches/ {n += $2} END {print n}' "$f" 2>/dev/null || echo 0)))
  done
  echo "$ticks $switches"
}
declare -A SUM
nginx_run() {  # side url script kind
  local pid="" before after rps p50 p99 req
  [ "$1" = idem ] && pid=$PID_proxy
  [ "$1" = before ] && pid=$PID_before
  [ -n "$pid" ] && read -ra before <<<"$(proc_counts "$pid")"
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${NGINX_DURATION:-5s}" --latency -s "$WORK/$3.lua" "$2" >"$WORK/n.txt"
  [ -n "$pid" ] && read -ra after <<<"$(proc_counts "$pid")"
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/n.txt")
  req=$(awk '/requests in/ {print $1}' "$WORK/n.txt")
  p50=$(ms "$(awk '$1 == "50%" {print $2}' "$WORK/n.txt")")
  p99=$(ms "$(awk '$1 == "99%" {print $2}' "$WORK/n.txt")")
  local k="$4-$1"
  SUM[$k-rps]=$(awk -v a="${SUM[$k-rps]:-0}" -v b="$rps" 'BEGIN {print a + b}')
  SUM[$k-p50]=$(awk -v a="${SUM[$k-p50]:-0}" -v b="$p50" 'BEGIN {print a + b}')
  SUM[$k-p99]=$(awk -v a="${SUM[$k-p99]:-0}" -v b="$p99" 'BEGIN {print a + b}')
  SUM[$k-req]=$(( ${SUM[$k-req]:-0} + req ))
  if [ -n "$pid" ]; then
    SUM[$k-ticks]=$(( ${SUM[$k-ticks]:-0} + after[0] - before[0] ))
    SUM[$k-switches]=$(( ${SUM[$k-switches]:-0} + after[1] - before[1] ))
  fi
}
for side in $SIDES; do  # warm-up, not counted
  url=$NGINX; [ "$side" = idem ] && url=$PROXY; [ "$side" = before ] && url=${URL_before:-}
  wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s "$WORK/plain.lua" "$url" >/dev/null
done
ROUNDS=${ROUNDS:-3}
for ((round = 1; round <= ROUNDS; round++)); do
  for side in $SIDES; do
    url=$NGINX; [ "$side" = idem ] && url=$PROXY; [ "$side" = before ] && url=${URL_before:-}
    nginx_run "$side" "$url" plain plain
    # nginx passes the keyed POST through (the upstream charges every time); Idem replays it.
    nginx_run "$side" "$url" replay post
  done
done
echo
echo "Against nginx: $ROUNDS alternating rounds of ${NGINX_DURATION:-5s} per side and kind; means over rounds"
echo
echo "| run | req/s | p50 | p99 | idemctl CPU per request | idemctl context switches per request |"
echo "|---|---|---|---|---|---|"
row() {  # kind side label
  local k="$1-$2"
  awk -v r="$ROUNDS" -v rps="${SUM[$k-rps]}" -v p50="${SUM[$k-p50]}" -v p99="${SUM[$k-p99]}" -v n="${SUM[$k-req]}" \
    -v t="${SUM[$k-ticks]:-}" -v s="${SUM[$k-switches]:-}" -v hz="$HZ" -v label="$3" 'BEGIN {
    cpu = t == "" ? "–" : sprintf("%.3f ms", t / hz * 1000 / n); sw = s == "" ? "–" : sprintf("%.1f", s / n)
    printf "| %-44s | %8.0f | %6.2f ms | %6.2f ms | %s | %s |\n", label, rps / r, p50 / r, p99 / r, cpu, sw }'
}
row plain nginx "no-tier route (GET /executions), nginx"
row plain idem "no-tier route, idemctl proxy"
[ -n "${IDEMCTL_BEFORE:-}" ] && row plain before "no-tier route, idemctl proxy (before)"
row post nginx "keyed POST /v1/charges passed through nginx"
row post idem "same POST replayed by idemctl proxy"
[ -n "${IDEMCTL_BEFORE:-}" ] && row post before "same POST replayed by idemctl proxy (before)"
echo
ratio() {  # label kind side-a side-b what
  awk -v a="${SUM[$2-$3-$5]}" -v b="${SUM[$2-$4-$5]}" -v label="$1" 'BEGIN { printf "%s: %.2fx\n", label, a / b }'
}
ratio "no-tier throughput, Idem / nginx (target >= 0.8x)" plain idem nginx rps
ratio "no-tier p99, Idem / nginx (target <= 1.5x)" plain idem nginx p99
ratio "replays through Idem / the POST through nginx (target >= 2x)" post idem nginx rps
if [ -n "${IDEMCTL_BEFORE:-}" ]; then
  ratio "before: no-tier throughput, Idem / nginx" plain before nginx rps
  ratio "before: replays / the POST through nginx" post before nginx rps
fi
