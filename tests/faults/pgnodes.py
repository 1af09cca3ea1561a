"""The campaign's PostgreSQL: two private clusters (`idemctl cluster`), one primary and one hot
standby made with `pg_basebackup -R`, each behind loopback TCP relays (relay.py): one per endpoint,
and one its standby streams through (with a latency, for a standby in another zone or region).

Killing a node means what a dead machine means: every process of that server gets SIGKILL at
once (postmaster stopped first so it cannot fork a replacement), by the ids in its
postmaster.pid and /proc — nothing else on the machine is touched."""
import os
import shutil
import signal
import subprocess
import time

PG_BIN = None


def pg_bin():
    global PG_BIN
    if PG_BIN is None:
        versions = [v for v in os.listdir("/usr/lib/postgresql") if os.path.exists(f"/usr/lib/postgresql/{v}/bin/initdb")]
        PG_BIN = f"/usr/lib/postgresql/{max(versions, key=int)}/bin"
    return PG_BIN


def as_server_user(argv):
    """PostgreSQL's own tools run as the server's user: postgres when we are root."""
    return ["/usr/sbin/runuser", "-u", "postgres", "--"] + argv if os.geteuid() == 0 else argv


def run(argv, check=True, timeout=120):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stdout[-2000:]}")
    return proc


class Node:
    def __init__(self, idemctl, root, port):
        self.idemctl = idemctl
        self.root = root
        self.port = port
        self.relays = []  # the relay processes in front of this node, one per endpoint
        self.replication_relay = None  # what a standby of this node streams through

    @property
    def data(self):
        return self.root + "/data"

    @property
    def sock(self):
        return self.root + "/sock"

    def all_relays(self):
        return [r for r in self.relays + [self.replication_relay] if r]

    def start(self):
        run([self.idemctl, "cluster", "start", "--dir", self.root, "--port", str(self.port)])
        for relay in self.all_relays():
            relay.heal()

    def refuse(self):
        """A host whose PostgreSQL is down refuses connections (RST), it does not accept them."""
        for relay in self.all_relays():
            relay.reset()

    def migrate(self):
        run([self.idemctl, "migrate", "--demo", "--db", f"host={self.sock} port={self.port} user=idem dbname=postgres"])

    def stop(self, mode):
        run(as_server_user([pg_bin() + "/pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop"]), check=False)
        self.refuse()

    def running(self):
        return run(as_server_user([pg_bin() + "/pg_ctl", "-D", self.data, "status"]), check=False).returncode == 0

    def kill(self):
        """SIGKILL to the postmaster and every child it has, as a machine losing power would."""
        self.refuse()
        try:
            with open(self.data + "/postmaster.pid") as f:
                pid = int(f.readline())
        except (OSError, ValueError):
            return
        try:
            os.kill(pid, signal.SIGSTOP)
        except ProcessLookupError:
            return
        for child in children_of(pid):
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.kill(pid, signal.SIGKILL)
        deadline = time.time() + 10
        while time.time() < deadline and os.path.exists(f"/proc/{pid}"):
            time.sleep(0.05)

    def promote(self):
        run(as_server_user([pg_bin() + "/pg_ctl", "-D", self.data, "-w", "-t", "60", "promote"]))

    def rebuild_as_standby_of(self, primary):
        """A fresh hot standby of `primary`: base backup (streaming its WAL), then start."""
        self.kill()
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root, mode=0o700)
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        # Through the primary's replication relay: -R writes that address into primary_conninfo.
        run(as_server_user([pg_bin() + "/pg_basebackup", "-D", self.data, "-R", "-X", "stream", "-c", "fast",
                            "-h", "127.0.0.1", "-p", str(primary.replication_relay.port), "-U", "idem"]))
        self.start()

    def psql(self, sql):
        """Rows of a query, as lists of text (tab-separated psql output)."""
        out = run([pg_bin() + "/psql", "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1",
                   "-h", self.sock, "-p", str(self.port), "-U", "idem", "-d", "postgres", "-c", sql]).stdout
        return [line.split("\t") for line in out.splitlines() if line]

    def in_recovery(self):
        return self.psql("SELECT pg_is_in_recovery()")[0][0] == "t"

    def wait_streaming(self, standby_count=1, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            rows = self.psql("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")
            if int(rows[0][0]) >= standby_count:
                return
            time.sleep(0.2)
        raise RuntimeError(f"no standby streaming from {self.root} after {timeout} s")


def children_of(pid):
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                kids.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return kids
