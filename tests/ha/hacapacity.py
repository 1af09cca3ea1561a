#!/usr/bin/env python3
"""How far one HA cluster goes (docs/ha.md): the library's new keys/s and replays/s (`idemctl
bench --profile`) on the Patroni cluster's leader against a single PostgreSQL node, alternating
rounds in one run (the machine is shared: only the ratios side by side mean anything).

    hacapacity.py --idemctl PATH [--seconds 5] [--rounds 2] [--clients 8] [--replication sync|async]

Both stores are reached over their Unix sockets, so the difference is the replication: with
`sync`, every commit waits for the synchronous standby's flush."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
import hacluster  # noqa: E402


def bench(idemctl, conninfo, profile, seconds, clients):
    out = subprocess.run([idemctl, "bench", "--db", conninfo, "--profile", profile, "--seconds", str(seconds),
                          "--clients", str(clients)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=600)
    m = re.search(r":\s*([\d.]+)/s", out.stdout)
    if out.returncode != 0 or not m:
        raise RuntimeError(f"idemctl bench failed: {out.stdout[-1500:]}")
    return float(m.group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--idemctl", required=True)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--replication", choices=("sync", "async"), default="sync")
    p.add_argument("--base-port", type=int, default=25700)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="idem-hacapacity-", dir="/tmp")
    os.chmod(work, 0o755)
    layout = hacluster.Layout(f"{work}/cluster", args.base_port)
    single = f"{work}/single"
    try:
        hacluster.start_cluster(layout, args.replication)
        lead = hacluster.index_of(layout, hacluster.leader(layout))
        subprocess.run([hacluster.pg_bin() + "/psql", "-X", "-q", "-d", layout.conninfo(user="postgres"), "-c",
                        "CREATE ROLE idem LOGIN SUPERUSER"], check=True)
        stores = {
            "single node": f"host={single}/sock port={args.base_port + 90} user=idem dbname=postgres",
            f"Patroni, {args.replication}": f"host={layout.node_dir(lead)} port={layout.pg(lead)} user=idem dbname=postgres",
        }
        subprocess.run([args.idemctl, "cluster", "start", "--dir", single, "--port", str(args.base_port + 90)],
                       check=True, stdout=subprocess.DEVNULL)
        results = {(name, profile): [] for name in stores for profile in ("new", "replay")}
        for r in range(args.rounds):
            for profile in ("new", "replay"):
                for name, conninfo in (stores.items() if r % 2 == 0 else reversed(list(stores.items()))):
                    rate = bench(args.idemctl, conninfo, profile, args.seconds, args.clients)
                    results[(name, profile)].append(rate)
                    print(f"round {r + 1}: {profile:6} on {name:14} {rate:9.0f}/s", flush=True)
        names = list(stores)
        print(f"\n{args.clients} clients, {args.seconds} s per measurement, best of {args.rounds}:")
        for profile in ("new", "replay"):
            base, ha = max(results[(names[0], profile)]), max(results[(names[1], profile)])
            print(f"  {profile:6}  single node {base:9.0f}/s   {names[1]} {ha:9.0f}/s   ratio {ha / base:.2f}x")
        # Storage per key, on the single node after its runs: the key row with its indexes, and
        # the trace (one event per execution or replay, with its indexes). The bench's bodies are
        # small; a stored response adds its own size to the key row.
        sizes = subprocess.run([hacluster.pg_bin() + "/psql", "-X", "-At", "-F", " ", "-d", stores["single node"], "-c",
                                "SELECT (SELECT count(*) FROM idem.keys), pg_total_relation_size('idem.keys'), "
                                "(SELECT count(*) FROM idem.events), pg_total_relation_size('idem.events')"],
                               stdout=subprocess.PIPE, text=True, check=True).stdout.split()
        keys, keys_bytes, events, events_bytes = (int(v) for v in sizes)
        print(f"  storage: {keys_bytes / max(keys, 1):.0f} B per key row with its indexes ({keys} keys), "
              f"{events_bytes / max(events, 1):.0f} B per trace event ({events} events)")
        return 0
    finally:
        subprocess.run([args.idemctl, "cluster", "stop", "--dir", single], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        hacluster.stop_cluster(layout)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
