#!/usr/bin/env bash
# What the hot table's indexes cost a new key (issue 30 item 2), through the library's own
# statements and batching: `idemctl bench --new-key-costs` on databases of one private cluster that
# differ only in their schema, alternating round by round (which variant goes first rotating too),
# so the host's drift falls on every variant. Variants (VARIANTS to choose, in this order):
#   current  the schema as migrated: the completion touches state, resp_status, resource_ref and
#            lease_until, which keys_processing, keys_done_status and keys_resource_ref index, so
#            it is never HOT: the new row version takes an entry in every index of the table;
#   hot      the three indexes that block HOT dropped and fillfactor 40 (a claim's row more than
#            doubles at its completion, which must fit on the same page): the console loses its
#            in-flight list, stuck count, status sort and resource search at scale;
#   narrow   hot, and the console's four browse indexes dropped too (created_at, key prefix,
#            tier, endpoint): the floor of what a key row can cost on this table;
#   side     hot, with what the three dropped indexes served kept in two side tables, written in
#            the statements that change a key (statement triggers over the transition tables:
#            the keys in flight, inserted at the claim and deleted at the completion; each done
#            key's status and resource, inserted at the completion, with the console's indexes).
# Per variant: the library's keys/s, PostgreSQL CPU and WAL bytes per key (from the bench's JSON),
# the share of completions that were HOT (pg_stat_user_tables), and each against `current`; the
# bench's own pgbench minimal INSERT + UPDATE beside each run is the noise anchor (library / pgbench).
#
#   tests/bench/hot_completion.sh                      # 3 rounds of 5 s at 8 clients
#   ROUNDS=5 SECONDS_PER_RUN=8 CLIENTS=64 tests/bench/hot_completion.sh
# Needs the PostgreSQL server binaries and python3. Runs in a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
IDEMCTL=${IDEMCTL:-build/app/idemctl/idemctl}
ROUNDS=${ROUNDS:-3}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
CLIENTS=${CLIENTS:-8}
read -r -a VARIANTS <<<"${VARIANTS:-current hot narrow side}"
# shellcheck source=tests/bench/lib.sh
source tests/bench/lib.sh

bench_setup hot_completion.sh psql python3
"$IDEMCTL" cluster start --dir "$WORK/pg" >/dev/null
ADMIN="$("$IDEMCTL" cluster conninfo --dir "$WORK/pg")"

blocking_hot="DROP INDEX idem.keys_processing; DROP INDEX idem.keys_done_status; DROP INDEX idem.keys_resource_ref;
ALTER TABLE idem.keys SET (fillfactor = 40);"
browse="DROP INDEX idem.keys_created_at; DROP INDEX idem.keys_idem_key_pattern;
DROP INDEX idem.keys_tier_expires_at; DROP INDEX idem.keys_endpoint_expires_at;"
side_tables="CREATE TABLE idem.keys_in_flight (tenant text, endpoint text, idem_key text, service text,
  PRIMARY KEY (tenant, endpoint, idem_key, service));
CREATE TABLE idem.key_outcomes (tenant text, endpoint text, idem_key text, service text, resp_status int,
  resource_ref text, PRIMARY KEY (tenant, endpoint, idem_key, service));
CREATE INDEX ON idem.key_outcomes ((coalesce(resp_status, 0)), tenant, endpoint, idem_key, service);
CREATE INDEX ON idem.key_outcomes (resource_ref) WHERE resource_ref IS NOT NULL;
CREATE FUNCTION idem.side_claimed() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
  INSERT INTO idem.keys_in_flight SELECT tenant, endpoint, idem_key, service FROM n WHERE state = 'processing'
    ON CONFLICT DO NOTHING;
  RETURN NULL; END \$\$;
CREATE FUNCTION idem.side_changed() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
  DELETE FROM idem.keys_in_flight f USING n WHERE n.state <> 'processing' AND f.tenant = n.tenant
    AND f.endpoint = n.endpoint AND f.idem_key = n.idem_key AND f.service = n.service;
  INSERT INTO idem.key_outcomes SELECT tenant, endpoint, idem_key, service, resp_status, resource_ref FROM n
    WHERE state = 'done' ON CONFLICT (tenant, endpoint, idem_key, service)
    DO UPDATE SET resp_status = excluded.resp_status, resource_ref = excluded.resource_ref;
  RETURN NULL; END \$\$;
CREATE TRIGGER keys_side_claimed AFTER INSERT ON idem.keys REFERENCING NEW TABLE AS n
  FOR EACH STATEMENT EXECUTE FUNCTION idem.side_claimed();
CREATE TRIGGER keys_side_changed AFTER UPDATE ON idem.keys REFERENCING NEW TABLE AS n
  FOR EACH STATEMENT EXECUTE FUNCTION idem.side_changed();"
db_of() { echo "$ADMIN dbname=hot_$1"; }
for v in "${VARIANTS[@]}"; do
  psql "$ADMIN" -qc "CREATE DATABASE hot_$v" >/dev/null
  "$IDEMCTL" migrate --db "$(db_of "$v")" >/dev/null
  case $v in
    current) ;;
    hot) psql "$(db_of "$v")" -v ON_ERROR_STOP=1 -qc "$blocking_hot" >/dev/null ;;
    narrow) psql "$(db_of "$v")" -v ON_ERROR_STOP=1 -qc "$blocking_hot $browse" >/dev/null ;;
    side) psql "$(db_of "$v")" -v ON_ERROR_STOP=1 -qc "$blocking_hot $side_tables" >/dev/null ;;
    *) echo "hot_completion.sh: unknown variant $v (current, hot, narrow, side)" >&2; exit 2 ;;
  esac
done

hot_share() {  # completions that stayed on their page, of all updates of idem.keys so far
  psql "$(db_of "$1")" -Atc "SELECT n_tup_hot_upd || ' ' || n_tup_upd FROM pg_stat_user_tables
                             WHERE schemaname = 'idem' AND relname = 'keys'"
}

echo "hot_completion.sh: ${#VARIANTS[@]} schemas, $ROUNDS rounds of ${SECONDS_PER_RUN} s at $CLIENTS clients" \
  "(pgbench's minimal INSERT + UPDATE beside each)"
: >"$WORK/runs"
for ((round = 1; round <= ROUNDS; round++)); do
  n=${#VARIANTS[@]}
  for ((i = 0; i < n; i++)); do
    v=${VARIANTS[$(((i + round - 1) % n))]}
    "$IDEMCTL" bench --db "$(db_of "$v")" --new-key-costs --clients "$CLIENTS" --rounds 1 \
      --seconds "$SECONDS_PER_RUN" --format json >"$WORK/run.json" 2>"$WORK/run.err" ||
      { cat "$WORK/run.err" >&2; exit 1; }
    python3 - "$v" "$round" "$(hot_share "$v")" "$WORK/run.json" >>"$WORK/runs" <<'PY'
import json, sys
variant, rnd, hot, path = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4]
run = json.load(open(path))["runs"][0]
lib, pg = run["library"], run["pgbench_minimal_prepared"]
rate = lib["keys"] / lib["seconds"]
print(json.dumps({"variant": variant, "round": int(rnd), "rate": rate,
                  "anchor": rate / (pg["keys"] / pg["seconds"]),
                  "cpu_ms": 1000 * lib["server_cpu_s"] / lib["keys"] if lib["server_cpu_s"] >= 0 else None,
                  "wal": lib["wal_bytes"] / lib["keys"], "hot": int(hot[0]), "upd": int(hot[1])}))
PY
    tail -1 "$WORK/runs" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("round %(round)d  %(variant)-8s %(rate)8.0f keys/s  %(anchor).2fx pgbench  WAL %(wal)6.0f B/key" % r)'
  done
done

python3 - "$WORK/runs" "${VARIANTS[@]}" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
variants = sys.argv[2:]
by = {v: [r for r in runs if r["variant"] == v] for v in variants}
def med(v, k):
    xs = [r[k] for r in by[v] if r[k] is not None]
    return statistics.median(xs) if xs else float("nan")
base = variants[0]
print("\n%-8s %10s %12s %14s %12s %10s   (medians of the rounds; ratios against %s)" %
      ("schema", "keys/s", "vs pgbench", "PG CPU ms/key", "WAL B/key", "HOT", base))
for v in variants:
    last = by[v][-1]
    hot = 100.0 * last["hot"] / last["upd"] if last["upd"] else 0.0
    print("%-8s %10.0f %12.2f %14.3f %12.0f %9.0f%%" % (v, med(v, "rate"), med(v, "anchor"), med(v, "cpu_ms"), med(v, "wal"), hot))
for v in variants[1:]:
    ratio = lambda k: statistics.median([a[k] / b[k] for a, b in zip(by[v], by[base]) if a[k] and b[k]])
    print("%s / %s: keys/s %.2fx, against pgbench %.2fx, PG CPU per key %.2fx, WAL per key %.2fx" %
          (v, base, ratio("rate"), ratio("anchor"), ratio("cpu_ms"), ratio("wal")))
PY
