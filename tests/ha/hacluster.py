#!/usr/bin/env python3
"""The reference HA store (docs/ha.md): three PostgreSQL nodes managed by Patroni, with an etcd
quorum of three members, all on loopback ports of this machine and under one folder.

    hacluster.py start  [--dir D] [--base-port P] [--replication sync|async|strict]
    hacluster.py status [--dir D]
    hacluster.py stop   [--dir D]

Everything is Debian's: `patroni` (3.0) and `etcd-server` (3.4), PostgreSQL from the system. The
promotion is always Patroni's; this script only starts, reads and stops processes.

Ports from the base (default 25400): etcd members base+1..3 (clients) and base+11..13 (peers),
Patroni's REST API base+21..23, PostgreSQL base+31..33."""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.dont_write_bytecode = True

NODES = 3
SCOPE = "idem"
DEFAULT_DIR = "/tmp/idem-ha"
DEFAULT_BASE = 25400


def pg_bin():
    versions = [v for v in os.listdir("/usr/lib/postgresql") if os.path.exists(f"/usr/lib/postgresql/{v}/bin/initdb")]
    return f"/usr/lib/postgresql/{max(versions, key=int)}/bin"


class Layout:
    """Where each part of the cluster lives: ports and folders, from a base port and a folder."""

    def __init__(self, root, base):
        self.root = os.path.abspath(root)
        self.base = base

    def etcd_client(self, i):
        return self.base + 1 + i

    def etcd_peer(self, i):
        return self.base + 11 + i

    def rest(self, i):
        return self.base + 21 + i

    def pg(self, i):
        return self.base + 31 + i

    def name(self, i):
        return f"node{i + 1}"

    def node_dir(self, i):
        return f"{self.root}/{self.name(i)}"

    def etcd_dir(self, i):
        return f"{self.root}/etcd{i + 1}"

    def etcd_hosts(self):
        return ",".join(f"127.0.0.1:{self.etcd_client(i)}" for i in range(NODES))

    def conninfo(self, dbname="postgres", attrs="read-write", user="postgres"):
        """libpq multi-host: the client finds the node that takes writes (or a standby for reads)."""
        hosts = ",".join("127.0.0.1" for _ in range(NODES))
        ports = ",".join(str(self.pg(i)) for i in range(NODES))
        return (f"host={hosts} port={ports} dbname={dbname} user={user} "
                f"target_session_attrs={attrs} connect_timeout=2")

    def save(self):
        with open(f"{self.root}/layout.json", "w") as f:
            json.dump({"base": self.base}, f)

    @staticmethod
    def load(root):
        with open(f"{os.path.abspath(root)}/layout.json") as f:
            return Layout(root, json.load(f)["base"])


def patroni_config(layout, i, replication, dcs_api="etcd"):
    """Patroni's YAML for one node, written as JSON (a YAML subset Patroni reads as is)."""
    # The timing: a leader that stops renewing its key is replaced after ttl; loop_wait + 2 *
    # retry_timeout must stay within ttl (Patroni's rule). Shorter than the defaults (30/10/10)
    # so a test sees a failover within seconds; docs/ha.md says what production sets.
    dcs = {
        "ttl": 20, "loop_wait": 2, "retry_timeout": 8,
        "maximum_lag_on_failover": 1048576,
        "synchronous_mode": replication in ("sync", "strict"),
        "synchronous_mode_strict": replication == "strict",
        "postgresql": {
            "use_pg_rewind": True,
            "parameters": {
                "wal_level": "replica", "hot_standby": "on", "wal_log_hints": "on",
                "max_wal_senders": 10, "max_replication_slots": 10, "max_connections": 200,
                "wal_keep_size": "256MB", "synchronous_commit": "on",
            },
        },
    }
    d = layout.node_dir(i)
    return {
        "scope": SCOPE,
        "namespace": "/service/",
        "name": layout.name(i),
        "log": {"dir": d, "level": "INFO"},
        "restapi": {"listen": f"127.0.0.1:{layout.rest(i)}", "connect_address": f"127.0.0.1:{layout.rest(i)}"},
        # etcd's v2 API by default, not etcd3: Debian 12's Patroni 3.0.2 renews an expired leader
        # key in etcd3 with an unconditional put, so a leader thawed after its TTL takes the key
        # back from the node just promoted, which then demotes and rewinds away what it
        # acknowledged (fixed upstream in 3.0.3, patroni/patroni#2689; seen here by the
        # campaign's leader_freeze). The v2 client renews with compare-and-swap on its own name
        # and demotes when that fails. `--dcs etcd3` keeps the flawed path for measuring it.
        dcs_api: {"hosts": layout.etcd_hosts()},
        "bootstrap": {
            "dcs": dcs,
            "initdb": [{"encoding": "UTF8"}, "data-checksums"],
            # Loopback only, trust: a test cluster. docs/ha.md shows scram-sha-256 for production.
            "pg_hba": [
                "local all all trust",
                "host replication replicator 127.0.0.1/32 trust",
                "host all all 127.0.0.1/32 trust",
            ],
        },
        "postgresql": {
            "listen": f"127.0.0.1:{layout.pg(i)}",
            "connect_address": f"127.0.0.1:{layout.pg(i)}",
            "data_dir": f"{d}/data",
            "bin_dir": pg_bin(),
            "pgpass": f"{d}/pgpass",
            "authentication": {
                "replication": {"username": "replicator", "password": "replicator"},
                "superuser": {"username": "postgres", "password": "postgres"},
            },
            "parameters": {"unix_socket_directories": d},
        },
        "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False, "nosync": False},
    }


def spawn(argv, log_path, cwd, as_server=False):
    """A child in a session of its own; `as_server`: as the postgres user when we are root (the
    child itself, not a runuser parent, so its pid is the one the faults signal)."""
    log = open(log_path, "ab")
    who = {"user": "postgres", "group": "postgres", "extra_groups": []} if as_server and os.geteuid() == 0 else {}
    env = dict(os.environ, HOME=cwd) if who else None
    return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True, env=env,
                            **who)


def write_pid(path, pid):
    with open(path, "w") as f:
        f.write(str(pid))


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def alive(pid):
    if not pid:
        return False
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def start_etcd(layout, i, existing=False):
    """One member; `existing`: it rejoins the cluster it was part of (its data folder is kept)."""
    d = layout.etcd_dir(i)
    os.makedirs(d, exist_ok=True)
    cluster = ",".join(f"etcd{j + 1}=http://127.0.0.1:{layout.etcd_peer(j)}" for j in range(NODES))
    argv = ["etcd", "--name", f"etcd{i + 1}", "--data-dir", f"{d}/data",
            "--listen-client-urls", f"http://127.0.0.1:{layout.etcd_client(i)}",
            "--advertise-client-urls", f"http://127.0.0.1:{layout.etcd_client(i)}",
            "--listen-peer-urls", f"http://127.0.0.1:{layout.etcd_peer(i)}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{layout.etcd_peer(i)}",
            "--initial-cluster", cluster, "--initial-cluster-token", f"idem-ha-{layout.base}",
            "--initial-cluster-state", "existing" if existing else "new",
            # Loopback: short heartbeats so a lost member is noticed quickly.
            "--heartbeat-interval", "100", "--election-timeout", "1000",
            "--enable-v2=true"]  # Patroni's etcd (v2) client; see patroni_config
    p = spawn(argv, f"{d}/etcd.log", d)
    write_pid(f"{d}/etcd.pid", p.pid)
    return p


def start_patroni(layout, i, replication, dcs_api="etcd"):
    d = layout.node_dir(i)
    os.makedirs(d, exist_ok=True)
    config = f"{d}/patroni.yml"
    if not os.path.exists(config):
        with open(config, "w") as f:
            json.dump(patroni_config(layout, i, replication, dcs_api), f, indent=1)
    if os.geteuid() == 0:
        shutil.chown(layout.root, "postgres", "postgres")
        for root, dirs, files in os.walk(d):
            for name in dirs + files:
                shutil.chown(os.path.join(root, name), "postgres", "postgres")
        shutil.chown(d, "postgres", "postgres")
    p = spawn(["patroni", config], f"{d}/patroni.out", d, as_server=True)
    write_pid(f"{d}/patroni.pid", p.pid)
    return p


def rest(layout, i, path, method="GET", body=None, timeout=2):
    """Patroni's REST API on node i: (status, parsed JSON or None)."""
    req = urllib.request.Request(f"http://127.0.0.1:{layout.rest(i)}{path}", method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read().decode()
            return r.status, (json.loads(text) if text.startswith("{") else text)
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, text
    except (OSError, ValueError):
        return None, None


def members(layout):
    """The cluster as Patroni sees it (from whichever node answers), or [] when none does."""
    for i in range(NODES):
        status, body = rest(layout, i, "/cluster")
        if status == 200 and isinstance(body, dict):
            return body.get("members", [])
    return []


def leader(layout):
    for m in members(layout):
        if m.get("role") == "leader" and m.get("state") == "running":
            return m["name"]
    return None


def index_of(layout, name):
    return [layout.name(i) for i in range(NODES)].index(name)


def streaming_standbys(layout, leader_index):
    """Standbys streaming from the leader, from its own pg_stat_replication (Patroni's member list
    can say "running" a loop after a replica went down to rewind)."""
    try:
        out = subprocess.run([pg_bin() + "/psql", "-X", "-At", "-h", "127.0.0.1", "-p", str(layout.pg(leader_index)),
                              "-U", "postgres", "-d", "postgres", "-c",
                              "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=5)
        return int(out.stdout.strip()) if out.returncode == 0 else 0
    except (subprocess.TimeoutExpired, ValueError):
        return 0


def wait_healthy(layout, replication, timeout=180):
    """A leader; every node running on the leader's timeline and streaming from it (asked of the
    leader's PostgreSQL itself); under sync, a synchronous standby."""
    deadline = time.time() + timeout
    last = []
    while time.time() < deadline:
        last = members(layout)
        running = [m for m in last if m.get("state") in ("running", "streaming")]
        roles = [m.get("role") for m in running]
        lead = [m for m in running if m.get("role") == "leader"]
        if len(running) == NODES and lead and (replication == "async" or "sync_standby" in roles) \
                and len({m.get("timeline") for m in running}) == 1 \
                and streaming_standbys(layout, index_of(layout, lead[0]["name"])) == NODES - 1:
            return last
        time.sleep(1)
    raise RuntimeError(f"the cluster did not become healthy in {timeout} s: {json.dumps(last)}")


def start_cluster(layout, replication, dcs_api="etcd"):
    """Starts etcd and Patroni under layout.root and waits for a healthy cluster."""
    if os.path.exists(f"{layout.root}/layout.json"):
        raise SystemExit(f"{layout.root} holds a cluster already: ./run ha stop first (or --dir)")
    os.makedirs(layout.root, exist_ok=True)
    layout.save()
    for i in range(NODES):
        start_etcd(layout, i)
    for i in range(NODES):
        start_patroni(layout, i, replication, dcs_api)
    return wait_healthy(layout, replication)


def start(args):
    layout = Layout(args.dir, args.base_port)
    start_cluster(layout, args.replication, args.dcs)
    print(describe(layout))
    print(f"\nconninfo (writes): {layout.conninfo()}")
    # The console asks for verified TLS on any TCP host unless told otherwise; this loopback test
    # cluster has no certificates (docs/ha.md: production sets sslmode=verify-full).
    print(f"conninfo (console): {layout.conninfo(attrs='prefer-standby')} sslmode=disable")


def describe(layout):
    lines = [f"{'member':8} {'role':13} {'state':10} {'port':6} {'lag':>6}"]
    for m in sorted(members(layout), key=lambda m: m["name"]):
        lag = m.get("lag", "")
        lines.append(f"{m['name']:8} {m.get('role', ''):13} {m.get('state', ''):10} {m.get('port', ''):<6} {lag!s:>6}")
    return "\n".join(lines)


def status(args):
    if not os.path.exists(f"{os.path.abspath(args.dir)}/layout.json"):
        print(f"no cluster in {os.path.abspath(args.dir)} (./run ha start)")
        return 1
    layout = Layout.load(args.dir)
    ms = members(layout)
    if not ms:
        print("no Patroni member answers")
        return 1
    print(describe(layout))
    return 0


def stop_pid(pid, sig=signal.SIGTERM, wait=30):
    if not alive(pid):
        return
    try:
        os.killpg(pid, sig)
    except OSError:
        os.kill(pid, sig)
    deadline = time.time() + wait
    while alive(pid) and time.time() < deadline:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    if alive(pid):
        os.killpg(pid, signal.SIGKILL)


def stop_cluster(layout, keep=False):
    """Stops every process of the cluster (a frozen one is thawed first); removes the folder
    unless `keep`."""
    for i in range(NODES):
        for pid in (read_pid(f"{layout.node_dir(i)}/patroni.pid"), postmaster_pid(layout, i)):
            if alive(pid):
                os.kill(pid, signal.SIGCONT)
    # Patroni stops its PostgreSQL on SIGTERM; one Patroni no longer runs leaves its server behind.
    for i in range(NODES):
        stop_pid(read_pid(f"{layout.node_dir(i)}/patroni.pid"))
    for i in range(NODES):
        pm = postmaster_pid(layout, i)
        if alive(pm):
            os.kill(pm, signal.SIGQUIT)
    for i in range(NODES):
        stop_pid(read_pid(f"{layout.etcd_dir(i)}/etcd.pid"))
    if not keep:
        shutil.rmtree(layout.root, ignore_errors=True)


def stop(args):
    root = os.path.abspath(args.dir)
    if not os.path.exists(f"{root}/layout.json"):
        print(f"no cluster in {root}")
        return 0
    stop_cluster(Layout.load(root), args.keep)
    print(f"stopped the cluster in {root}")
    return 0


def postmaster_pid(layout, i):
    try:
        with open(f"{layout.node_dir(i)}/data/postmaster.pid") as f:
            return int(f.readline())
    except (OSError, ValueError):
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=("start", "status", "stop"))
    p.add_argument("--dir", default=DEFAULT_DIR)
    p.add_argument("--base-port", type=int, default=DEFAULT_BASE)
    p.add_argument("--replication", choices=("sync", "async", "strict"), default="sync",
                   help="sync: Patroni's synchronous_mode; strict: also synchronous_mode_strict; async: neither")
    p.add_argument("--dcs", choices=("etcd", "etcd3"), default="etcd",
                   help="Patroni's etcd API (default etcd, v2: see patroni_config for why not etcd3)")
    p.add_argument("--keep", action="store_true", help="stop: keep the folder (logs, data)")
    args = p.parse_args()
    if args.command == "start":
        start(args)
        return 0
    return status(args) if args.command == "status" else stop(args)


if __name__ == "__main__":
    sys.exit(main())
