#!/usr/bin/env python3
"""The fault campaign on the reference HA store (docs/ha.md): real `idemctl serve` processes
connected through libpq multi-host (`target_session_attrs=read-write`) to three PostgreSQL nodes
under Patroni, SDK-like clients paying through them, and the faults a cluster manager must handle
(hafaults.py) — with every promotion done by Patroni. The verdict is the one tests/faults uses:
duplicates, acknowledged payments lost, unexpected 5xx, unavailability per fault kind.

    hacampaign.py --idemctl PATH [--seconds N] [--replication sync|async|strict] [--faults K,..]

Exit 0 when every check holds and every chosen kind was injected and recovered from. With
--replication async the loss is measured, not a failure (--expect-loss)."""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "faults"))

import hacluster  # noqa: E402
from campaign import TENANT, policy_text, report, write_attempts  # noqa: E402
from checks import StoreLedger, judge, key_rows, proves_blind_spots  # noqa: E402
from endpoints import Endpoint  # noqa: E402
from hafaults import KINDS, HaRig  # noqa: E402
from sdkclient import Fleet  # noqa: E402


class LeaderStore:
    """The checks' view of the store: queries go to whichever node takes writes now."""

    def __init__(self, layout):
        self.conninfo = layout.conninfo(user="idem")

    def psql(self, sql):
        out = subprocess.run([hacluster.pg_bin() + "/psql", "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1",
                              "-d", self.conninfo, "-c", sql], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"psql failed: {out.stderr}")
        return [line.split("\t") for line in out.stdout.splitlines() if line]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--idemctl", required=True)
    p.add_argument("--seconds", type=int, default=120, help="how long faults are injected (default 120)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--replication", choices=("sync", "async", "strict"), default="sync")
    p.add_argument("--clients", type=int, default=6)
    p.add_argument("--pool", type=int, default=8)
    p.add_argument("--faults", default=",".join(KINDS))
    p.add_argument("--base-port", type=int, default=25500)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--expect-loss", action="store_true",
                   help="asynchronous replication: report acknowledged payments lost without failing on them")
    p.add_argument("--dcs", choices=("etcd", "etcd3"), default="etcd",
                   help="Patroni's etcd API: etcd3 measures Debian 12's Patroni 3.0.2 flaw (hacluster.py)")
    p.add_argument("--keep", action="store_true")
    args = p.parse_args()
    args.faults = args.faults.split(",")
    unknown = set(args.faults) - set(KINDS)
    if unknown:
        p.error(f"--faults: unknown kind {', '.join(sorted(unknown))} (kinds: {', '.join(KINDS)})")
    return args


def log(args, msg):
    if args.format == "text":
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def prepare_store(args, layout, idemctl):
    hacluster.start_cluster(layout, args.replication, args.dcs)
    admin = layout.conninfo(user="postgres")
    subprocess.run([hacluster.pg_bin() + "/psql", "-X", "-q", "-d", admin, "-c",
                    "CREATE ROLE idem LOGIN SUPERUSER"], check=True, timeout=60)
    # The demo's tables too: the campaign's endpoints are `serve`, and the checks read its ledger.
    migrate = [idemctl, "migrate", "--db", layout.conninfo(user="idem")]
    if "--demo" in subprocess.run([idemctl, "migrate", "--help"], stdout=subprocess.PIPE, text=True).stdout:
        migrate.append("--demo")
    subprocess.run(migrate, check=True, stdout=subprocess.DEVNULL, timeout=120)


def main():
    args = parse_args()
    # A stopped campaign (ctest's timeout, Ctrl+C) still stops its cluster: the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    workdir = tempfile.mkdtemp(prefix="idem-hafaults-", dir="/tmp")
    os.chmod(workdir, 0o755)
    layout = hacluster.Layout(f"{workdir}/cluster", args.base_port)
    endpoints, ok = [], False
    rng = random.Random(args.seed)
    try:
        log(args, f"work folder {workdir}; Patroni cluster, {args.replication} replication")
        prepare_store(args, layout, args.idemctl)
        policy = f"{workdir}/policy.json"
        with open(policy, "w") as f:
            f.write(policy_text())
        endpoints = [Endpoint(args.idemctl, f"serve-{i + 1}", layout.conninfo(user="idem"), policy, workdir,
                              args.pool) for i in (0, 1)]
        for e in endpoints:
            e.start()
        fleet = Fleet(args.clients, TENANT, endpoints)
        fleet.start()
        rig = HaRig(layout, args.replication, rng)
        t0 = time.time()
        counts, injected = schedule(args, rig, t0)
        seconds = time.time() - t0
        done = fleet.stop()
        log(args, "faults over; every client's last operation finished; checking the store")
        store = LeaderStore(layout)
        result, stretches, findings = judge(done, store, TENANT, StoreLedger(), injected, counts, seconds)
        result["replication"] = args.replication
        result["lost_by_fault"] = lost_by_fault(done, store, injected)
        # How the requests in flight at each failover ended, as the trace recorded them: a retry
        # that took over a key its dead holder had claimed (lease_takeover), a claim released
        # when the store went away mid-request (released), an execution that lost its lease.
        result["trace_outcomes"] = {o: int(n) for o, n in store.psql(
            f"SELECT outcome, count(*) FROM idem.events WHERE tenant = '{TENANT}' GROUP BY outcome ORDER BY outcome")}
        write_attempts(f"{workdir}/attempts.jsonl", done, t0)
        blind = proves_blind_spots(done, store, TENANT, StoreLedger(), findings)
        lost_ok = args.expect_loss or result["lost_acknowledged"] == 0
        ok = not any(f.get("unrecovered") for f in injected) \
            and result["duplicates"] == 0 and lost_ok and result["unexpected_5xx"] == 0 and not blind \
            and all(counts[k] > 0 for k in args.faults) \
            and all(r["never_recovered"] == 0 for r in result["recovery_s"].values())
        report(args, result, done, injected, stretches, findings, ok, t0)
        if args.format == "text":
            print("trace: " + ", ".join(f"{k}: {v}" for k, v in result["trace_outcomes"].items()))
        if args.format == "text" and result["lost_by_fault"]:
            print("acknowledged then lost, by the fault they followed: " +
                  ", ".join(f"{k}: {v}" for k, v in sorted(result["lost_by_fault"].items())))
    finally:
        for e in endpoints:
            e.stop()
        hacluster.stop_cluster(layout, keep=not ok or args.keep)
        if ok and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"work folder kept: {workdir}", file=sys.stderr)
    return 0 if ok else 1


def lost_by_fault(ops, store, injected):
    """Acknowledged payments whose key the store no longer holds, by the fault during or after
    which they were acknowledged (the last one that had started): where asynchronous loss comes
    from. Keyed "kind@start" (seconds into the schedule)."""
    held = key_rows(store, TENANT)
    out = {}
    t0 = injected[0]["start"] - 2.0 if injected else 0.0
    for op in ops:
        if not op.acknowledged or op.key in held:
            continue
        acked = max(a.end for a in op.attempts if a.payment_id == op.acknowledged_id)
        before = [f for f in injected if f["start"] <= acked]
        label = f"{before[-1]['kind']}@{before[-1]['start'] - t0:.0f}s" if before else "before any fault"
        out[label] = out.get(label, 0) + 1
    return out


def schedule(args, rig, t0):
    """Rounds in which every chosen kind comes once, in random order, one at a time (each waits
    for a healthy cluster before it returns), 1–4 s apart, until args.seconds have passed and
    every kind has come at least once."""
    counts = {k: 0 for k in KINDS}
    injected = []
    time.sleep(2)
    while time.time() - t0 < args.seconds or not all(counts[k] for k in args.faults):
        round_ = list(args.faults)
        rig.rng.shuffle(round_)
        for kind in round_:
            if time.time() - t0 >= args.seconds and all(counts[k] for k in args.faults):
                break
            start = time.time()
            try:
                what = KINDS[kind](rig)
            except RuntimeError as e:
                # The cluster did not come back: the verdict still runs on what the clients saw
                # (the campaign fails: the kind is counted as never recovered).
                counts[kind] += 1
                injected.append({"kind": kind, "start": start, "end": time.time(), "what": f"NOT RECOVERED: {e}",
                                 "unrecovered": True})
                print(f"{kind}: NOT RECOVERED: {e}", file=sys.stderr, flush=True)
                return counts, injected
            counts[kind] += 1
            injected.append({"kind": kind, "start": start, "end": time.time(), "what": what})
            log(args, f"{kind}: {what}")
            time.sleep(rig.rng.uniform(1.0, 4.0))
    return counts, injected


if __name__ == "__main__":
    sys.exit(main())
