#!/usr/bin/env python3
"""The fault campaign (issue 17): real `idemctl serve` processes — or `idemctl proxy` processes in
front of a payments service that knows nothing of Idem (`--front proxy`) — on real PostgreSQL (a
primary with a streaming hot standby), SDK-like clients paying through them, and the faults a
payments store meets — endpoint kill -9, PostgreSQL stopped fast and immediately, a connection
storm, the path to PostgreSQL cut, a failover — then the verdict from the database, from the
service's own charges and from the clients.

    campaign.py --idemctl PATH [--seconds N] [--format text|json] [--replication sync|async]
                [--front serve|proxy] [--store-writes loop|threads] [--lease DURATION]
                [--on-takeover execute|outcome_unknown]

Exit 0 when every check holds, every fault kind was injected and a payment succeeded after each
fault (no endpoint restarted but the killed one), 1 otherwise. How and why:
tests/faults/README.md."""
import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

from checks import StoreLedger, UpstreamLedger, judge, proves_blind_spots
from endpoints import Endpoint, RelayProcess, UpstreamProcess
from injectors import KINDS, Rig
from pgnodes import Node
from sdkclient import Fleet

TENANT = "acct_faults"
_POLICY = """{
  "docs_url": "http://127.0.0.1/idempotency",
  "tenant_header": "Account-Id",
  "tiers": [{
    "name": "payments", "routes": ["POST /v1/payments"], "key_required": true,
    // A short lease: a key held by a killed endpoint is taken over within seconds.
    "ttl": "1h", "lease": "LEASE", ON_TAKEOVER"on_expired": "execute", "on_conflict": "409",
    "cache": "after-start", "fingerprint": { "mode": "json" }
  }]
}
"""


def policy_text(lease="3s", on_takeover=None):
    """The campaign's policy: its lease, and the tier's on_takeover when one is named (else the
    front's own)."""
    return _POLICY.replace("LEASE", lease).replace(
        "ON_TAKEOVER", f'"on_takeover": "{on_takeover}", ' if on_takeover else "")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--idemctl", required=True)
    p.add_argument("--seconds", type=int, default=120, help="how long faults are injected (default 120)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--replication", choices=("sync", "async"), default="sync",
                   help="sync: synchronous_standby_names='*' (commits wait for the standby); async: they do not")
    p.add_argument("--standby-delay-ms", type=float, default=0,
                   help="latency each way between the primary and its standby (default 0: same host)")
    p.add_argument("--clients", type=int, default=6, help="steady clients (default 6)")
    p.add_argument("--storm", type=int, default=120, help="payments fired at once by a pool storm (default 120)")
    p.add_argument("--pool", type=int, default=8, help="each endpoint's store pool (default 8)")
    p.add_argument("--faults", default=",".join(KINDS),
                   help="the kinds to inject, comma-separated (default all; e.g. failover to measure replication)")
    p.add_argument("--random-kill-every", type=float, default=20.0,
                   help="mean seconds between endpoint kills at random moments, over the schedule (0: none)")
    p.add_argument("--front", choices=("serve", "proxy"), default="serve",
                   help="serve: the demo's payments, executed in the store's transactions; proxy: idemctl proxy in "
                        "front of a payments service that knows nothing of Idem (tests/faults/upstream.py)")
    p.add_argument("--store-writes", choices=("loop", "threads"), default="loop",
                   help="with --front proxy: how new keys reach the store (idemctl proxy --store-writes)")
    p.add_argument("--lease", default="3s",
                   help="the tier's lease (default 3s): how soon a key held by a dead endpoint is taken over")
    p.add_argument("--on-takeover", choices=("execute", "outcome_unknown"), default=None,
                   help="the tier's on_takeover (default: the front's own: serve executes, the proxy answers "
                        "outcome unknown)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--keep", action="store_true", help="keep the work folder (logs, clusters)")
    args = p.parse_args()
    args.faults = args.faults.split(",")
    unknown = set(args.faults) - set(KINDS)
    if unknown or not args.faults:
        p.error(f"--faults: unknown kind {', '.join(sorted(unknown))} (kinds: {', '.join(KINDS)})")
    return args


def log(args, msg):
    if args.format == "text":
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def build_store(args, workdir):
    a = Node(args.idemctl, f"{workdir}/a", 5432)
    b = Node(args.idemctl, f"{workdir}/b", 5433)
    a.start()
    a.migrate()
    if args.replication == "sync":
        a.psql("ALTER SYSTEM SET synchronous_standby_names = '*'")
        a.psql("SELECT pg_reload_conf()")
    for node, name in ((a, "a"), (b, "b")):
        node.replication_relay = RelayProcess(f"{node.sock}/.s.PGSQL.{node.port}", workdir, f"relay-repl-{name}",
                                              args.standby_delay_ms)
    b.rebuild_as_standby_of(a)
    a.wait_streaming()
    # Each endpoint reaches each node through a relay of its own: a cut can isolate one endpoint.
    for node, name in ((a, "a"), (b, "b")):
        node.relays = [RelayProcess(f"{node.sock}/.s.PGSQL.{node.port}", workdir, f"relay-{i}{name}") for i in (1, 2)]
    return a, b


def main():
    args = parse_args()
    workdir = tempfile.mkdtemp(prefix="idem-faults-", dir="/tmp")
    os.chmod(workdir, 0o755)  # the postgres user (server runs as it under root) must reach a/ and b/
    nodes, endpoints, upstream, ok = (), [], None, False
    try:
        log(args, f"work folder {workdir}; {args.replication} replication, standby {args.standby_delay_ms:g} ms away; "
                  f"front: {args.front}" + (f" (store writes from the {args.store_writes})" if args.front == "proxy" else ""))
        nodes = build_store(args, workdir)
        a, b = nodes
        policy = f"{workdir}/policy.json"
        with open(policy, "w") as f:
            f.write(policy_text(args.lease, args.on_takeover))
        front, ledger = ("serve",), StoreLedger()
        if args.front == "proxy":
            upstream = UpstreamProcess(workdir)
            front, ledger = ("proxy", upstream.url, args.store_writes), UpstreamLedger(
                upstream.executions, resends_after_takeover=args.on_takeover == "execute")
        # The multi-host conninfo an operator gives a service in front of a primary and a standby:
        # libpq tries each in turn and keeps the one that takes writes.
        endpoints = [Endpoint(args.idemctl, f"{args.front}-{i + 1}",
                              f"host=127.0.0.1,127.0.0.1 port={a.relays[i].port},{b.relays[i].port} user=idem "
                              "dbname=postgres target_session_attrs=read-write connect_timeout=2",
                              policy, workdir, args.pool, front) for i in (0, 1)]
        for e in endpoints:
            e.start()

        fleet = Fleet(args.clients, TENANT, endpoints)
        fleet.start()
        rig = Rig(list(nodes), endpoints, fleet.record, TENANT, args.storm, random.Random(args.seed))
        t0 = time.time()
        counts, injected = run_schedule(args, rig, t0)
        seconds = time.time() - t0
        done = fleet.stop()
        log(args, "faults over; every client's last operation finished; checking the store")
        result, stretches, findings = judge(done, rig.primary, TENANT, ledger, injected, counts, seconds)
        write_attempts(f"{workdir}/attempts.jsonl", done, t0)
        blind = proves_blind_spots(done, rig.primary, TENANT, ledger, findings)
        ok = result["duplicates"] == 0 and result["lost_acknowledged"] == 0 and result["unexpected_5xx"] == 0 \
            and all(counts[kind] > 0 for kind in args.faults) and not blind \
            and all(r["never_recovered"] == 0 for r in result["recovery_s"].values())
        report(args, result, done, injected, stretches, findings, ok, t0)
    finally:
        for e in endpoints:
            e.stop()
        if upstream:
            upstream.stop()
        for node in nodes:
            for relay in node.relays + [node.replication_relay]:
                if relay:
                    relay.stop()
            node.stop("fast")
        if (ok and not args.keep) and os.path.isdir(workdir):
            shutil.rmtree(workdir, ignore_errors=True)
        elif os.path.isdir(workdir):
            print(f"work folder kept: {workdir}", file=sys.stderr)
    return 0 if ok else 1


def run_schedule(args, rig, t0):
    """Rounds in which every chosen kind comes once, in random order, 1–4 s apart, until
    args.seconds have passed and every kind has come at least once; and, over them, endpoint
    kills at random moments (on average every --random-kill-every seconds), which may fall in
    the middle of another fault."""
    counts = {kind: 0 for kind in KINDS}  # every kind is a field of the output, injected or not
    injected = []
    lock = threading.Lock()
    over = threading.Event()

    def covered():
        return all(counts[kind] > 0 for kind in args.faults)

    def note(kind, start, what):
        with lock:
            counts[kind] += 1
            injected.append({"kind": kind, "start": start, "end": time.time(), "what": what})
        log(args, f"{kind}: {what}")

    def random_kills():
        rng = random.Random(None if args.seed is None else args.seed + 1)
        while not over.wait(rng.expovariate(1.0 / args.random_kill_every)):
            start = time.time()
            note("kill9", start, KINDS["kill9"](rig, rng) + " (at random)")

    killer = None
    if "kill9" in args.faults and args.random_kill_every > 0:
        killer = threading.Thread(target=random_kills, daemon=True)
        killer.start()
    try:
        scheduled_rounds(args, rig, t0, covered, note)
    finally:
        over.set()
        if killer:
            killer.join()
    injected.sort(key=lambda f: f["start"])
    return counts, injected


def scheduled_rounds(args, rig, t0, covered, note):
    time.sleep(2)
    while time.time() - t0 < args.seconds or not covered():
        round_ = list(args.faults)
        rig.rng.shuffle(round_)
        for kind in round_:
            if time.time() - t0 >= args.seconds and covered():
                break
            start = time.time()
            note(kind, start, KINDS[kind](rig))
            time.sleep(rig.rng.uniform(1.0, 4.0))


def write_attempts(path, ops, t0):
    """Every attempt, one JSON line each (seconds from the first fault's schedule start)."""
    with open(path, "w") as f:
        for op in ops:
            for a in op.attempts:
                f.write(json.dumps({"key": op.key, "start": round(a.start - t0, 3), "end": round(a.end - t0, 3),
                                    "endpoint": a.endpoint[1], "status": a.status, "error": a.error,
                                    "replayed": a.replayed}) + "\n")


def report(args, result, ops, injected, stretches, findings, ok, t0):
    if args.format == "json":
        print(json.dumps(result))
        for line in findings:  # stdout stays one JSON document; what went wrong goes to stderr
            print(line, file=sys.stderr)
        return
    acknowledged = sum(1 for op in ops if op.acknowledged)
    print(f"\n{result['operations']} payments ({acknowledged} acknowledged), {result['attempts']} attempts "
          f"in {result['seconds']} s; faults {result['faults']}")
    print("  at (s)  fault       longest stretch without a 2xx beginning before the next fault (or 10 s after its end)")
    for f, gap in zip(injected, stretches):
        shown = f"{gap:5.1f} s" if gap is not None else "  none "
        print(f"  {f['start'] - t0:6.1f}  {f['kind']:<10}  {shown}   {f['what']}")
    print("  per kind: " + "; ".join(f"{kind} x{r['count']} p50 {r['p50_s']} s, max {r['max_s']} s"
                                     for kind, r in sorted(result["recovery_s"].items())))
    statuses = {}
    for op in ops:
        for a in op.attempts:
            statuses[a.status or a.error] = statuses.get(a.status or a.error, 0) + 1
    print("answers: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items(), key=lambda kv: -kv[1])))
    for name in ("duplicates", "reexecuted_after_takeover", "outcome_unknown", "lost_acknowledged", "unexpected_5xx",
                 "max_unavailable_s"):
        if name in result:
            print(f"{name:>25}: {result[name]}")
    for line in findings:
        print("  " + line)
    print("PASS" if ok else "FAIL")


if __name__ == "__main__":
    sys.exit(main())
