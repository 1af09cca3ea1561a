"""The faults a cluster manager must handle, on the reference HA store (hacluster.py). Each injects
its fault on whichever node leads at that moment, waits until Patroni has a healthy cluster again
(the promotion, when one happens, is Patroni's), and returns a short description for the report.

Nothing here promotes, rewinds or rebuilds a node: a fault is a process killed, stopped or frozen,
and putting things back is restarting or thawing what the fault took away — what an operator's
supervisor (systemd's Restart=) would do."""
import os
import signal
import time

import hacluster
from pgnodes import children_of  # tests/faults: hacampaign.py puts it on the path


class HaRig:
    """What the faults act on: the cluster's layout, its replication mode, the schedule's RNG."""

    def __init__(self, layout, replication, rng):
        self.layout = layout
        self.replication = replication
        self.rng = rng

    def leader_index(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            name = hacluster.leader(self.layout)
            if name:
                return hacluster.index_of(self.layout, name)
            time.sleep(0.2)
        raise RuntimeError(f"no leader after {timeout} s")

    def wait_new_leader(self, old, timeout=90):
        """Seconds until a node other than `old` leads (Patroni promoted it)."""
        t0 = time.time()
        while time.time() - t0 < timeout:
            name = hacluster.leader(self.layout)
            if name and name != self.layout.name(old):
                return time.time() - t0
            time.sleep(0.2)
        raise RuntimeError(f"Patroni promoted no node within {timeout} s of losing {self.layout.name(old)}")

    def healthy(self, timeout=180):
        hacluster.wait_healthy(self.layout, self.replication, timeout)

    def patroni_pid(self, i):
        return hacluster.read_pid(f"{self.layout.node_dir(i)}/patroni.pid")

    def postgres_pids(self, i):
        pm = hacluster.postmaster_pid(self.layout, i)
        return ([pm] + children_of(pm)) if hacluster.alive(pm) else []

    def restart_patroni(self, i):
        hacluster.start_patroni(self.layout, i, self.replication)


def signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def leader_kill9(rig):
    """The leader's postmaster and every backend killed at once. Patroni, still holding the
    leader key, restarts it (crash recovery) or, if it cannot within its TTL, another node leads."""
    i = rig.leader_index()
    pids = rig.postgres_pids(i)
    signal_all(pids[:1], signal.SIGSTOP)  # the postmaster cannot fork a replacement meanwhile
    signal_all(pids[1:], signal.SIGKILL)
    signal_all(pids[:1], signal.SIGKILL)
    t0 = time.time()
    # Patroni's view of the member lags a loop behind: wait for the new postmaster (or a new
    # leader) before asking whether the cluster is healthy again.
    while time.time() - t0 < 90:
        pm = hacluster.postmaster_pid(rig.layout, i)
        now = hacluster.leader(rig.layout)
        if (pm != pids[0] and hacluster.alive(pm)) or (now and now != rig.layout.name(i)):
            break
        time.sleep(0.1)
    rig.healthy()
    now = hacluster.leader(rig.layout)
    how = "restarted in place" if now == rig.layout.name(i) else f"{now} promoted"
    return f"{rig.layout.name(i)}'s postmaster killed -9; {how}, healthy after {time.time() - t0:.1f} s"


def patroni_stop(rig):
    """The leader's Patroni stopped (a service stop, a package upgrade): it shuts its PostgreSQL
    down and gives up the leader key; Patroni elsewhere promotes the synchronous standby."""
    i = rig.leader_index()
    hacluster.stop_pid(rig.patroni_pid(i))
    promoted = rig.wait_new_leader(i)
    time.sleep(rig.rng.uniform(0.5, 2.0))
    rig.restart_patroni(i)
    rig.healthy()
    return f"{rig.layout.name(i)}'s Patroni stopped; another node led after {promoted:.1f} s; it rejoined as a replica"


def leader_freeze(rig):
    """The whole leader frozen (SIGSTOP: a VM paused, a stalled disk) past its TTL, then thawed:
    the others promote; the thawed node finds it lost the key and rejoins as a replica."""
    i = rig.leader_index()
    pids = [rig.patroni_pid(i)] + rig.postgres_pids(i)
    signal_all(pids, signal.SIGSTOP)
    try:
        promoted = rig.wait_new_leader(i)
        time.sleep(rig.rng.uniform(0.5, 2.0))
    finally:
        signal_all(pids, signal.SIGCONT)
    rig.healthy()
    return f"{rig.layout.name(i)} frozen; another node led after {promoted:.1f} s; thawed, it rejoined"


def leader_isolated(rig):
    """The leader's Patroni frozen while its PostgreSQL runs on: what a leader cut off from etcd
    looks like to the cluster. It cannot renew the key, so another node is promoted while the old
    primary still takes connections. Synchronous mode is what keeps its writes from being
    acknowledged: its commits wait for a standby that no longer follows it."""
    i = rig.leader_index()
    pid = rig.patroni_pid(i)
    signal_all([pid], signal.SIGSTOP)
    try:
        promoted = rig.wait_new_leader(i)
        time.sleep(rig.rng.uniform(1.0, 3.0))  # two primaries: the old one still accepts sessions
    finally:
        signal_all([pid], signal.SIGCONT)
    rig.healthy()
    return (f"{rig.layout.name(i)}'s Patroni frozen, its PostgreSQL running; another node led after "
            f"{promoted:.1f} s; thawed, it demoted itself")


def etcd_loss(rig):
    """One etcd member killed -9 (quorum holds with two of three), restarted after a while."""
    j = rig.rng.randrange(hacluster.NODES)
    d = rig.layout.etcd_dir(j)
    pid = hacluster.read_pid(f"{d}/etcd.pid")
    signal_all([pid], signal.SIGKILL)
    down = rig.rng.uniform(2.0, 6.0)
    time.sleep(down)
    hacluster.start_etcd(rig.layout, j, existing=True)
    rig.healthy()
    return f"etcd member {j + 1} killed -9, restarted after {down:.1f} s"


def switchover(rig):
    """A planned switchover under load (patronictl switchover, through Patroni's REST API)."""
    i = rig.leader_index()
    status, body = hacluster.rest(rig.layout, i, "/switchover", "POST", {"leader": rig.layout.name(i)}, timeout=60)
    if status != 200:
        raise RuntimeError(f"switchover refused: {status} {body}")
    rig.healthy()
    return f"switchover from {rig.layout.name(i)} to {hacluster.leader(rig.layout)}"


KINDS = {"leader_kill9": leader_kill9, "patroni_stop": patroni_stop, "leader_freeze": leader_freeze,
         "leader_isolated": leader_isolated, "etcd_loss": etcd_loss, "switchover": switchover}
