"""The five fault kinds. Each injects its fault, waits, and puts things back as an operator (or
the orchestration) would; each returns a short description for the report."""
import threading
import time

from sdkclient import Operation, run_operation


class Rig:
    """What the faults act on: the two nodes (primary first), their relays, the endpoints."""

    def __init__(self, nodes, endpoints, record_ops, tenant, storm_size, rng):
        self.primary, self.standby = nodes
        self.endpoints = endpoints
        self.record_ops = record_ops  # callback: operations run by a storm join the checks
        self.tenant = tenant
        self.storm_size = storm_size
        self.rng = rng  # the schedule's own generator: --seed repeats it (clients draw from another)
        self.pg_restarts = 0
        self.partitions = 0


def kill9(rig, rng=None):
    rng = rng or rig.rng
    victim = rng.choice(rig.endpoints)
    with victim.lock:
        victim.kill9()
        down = rng.uniform(0.2, 2.0)
        time.sleep(down)
        victim.start()
    return f"{victim.name} killed, restarted after {down:.1f} s"


def pg_restart(rig):
    mode = ("fast", "immediate")[rig.pg_restarts % 2] if rig.pg_restarts < 2 else rig.rng.choice(("fast", "immediate"))
    rig.pg_restarts += 1
    rig.primary.stop(mode)
    down = rig.rng.uniform(0.5, 3.0)
    time.sleep(down)
    rig.primary.start()
    return f"primary stopped -m {mode}, started after {down:.1f} s"


def partition(rig):
    how = ("pause", "reset")[rig.partitions % 2] if rig.partitions < 2 else rig.rng.choice(("pause", "reset"))
    rig.partitions += 1
    # One endpoint's path (its clients time out and retry on the other), or every path.
    relays = rig.primary.relays
    which = rig.rng.randrange(len(relays) + 1)
    cut_off = relays if which == len(relays) else [relays[which]]
    for relay in cut_off:
        relay.pause() if how == "pause" else relay.reset()
    cut = rig.rng.uniform(2.0, 6.0)
    time.sleep(cut)
    for relay in cut_off:
        relay.heal()
    whose = "every endpoint" if len(cut_off) > 1 else rig.endpoints[which].name
    return f"path from {whose} to the primary cut ({how}) for {cut:.1f} s"


def failover(rig):
    """The primary dies; the standby is promoted; the dead one comes back as the new standby."""
    old, new = rig.primary, rig.standby
    t0 = time.time()
    old.kill()
    new.promote()
    promoted = time.time() - t0
    old.rebuild_as_standby_of(new)
    new.wait_streaming()
    rig.primary, rig.standby = new, old
    return f"primary killed, standby promoted in {promoted:.1f} s, old primary rebuilt as standby in {time.time() - t0:.1f} s"


def pool_storm(rig):
    """storm_size payments at once at one endpoint: far more than its store pool."""
    target = rig.rng.choice(rig.endpoints)
    ops = [Operation(rig.tenant) for _ in range(rig.storm_size)]
    start = threading.Barrier(len(ops))

    def one(op):
        start.wait()
        run_operation(op, lambda: target.address)

    threads = [threading.Thread(target=one, args=(op,), daemon=True) for op in ops]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rig.record_ops(ops)
    return f"{len(ops)} concurrent payments at {target.name} (pool {target.pool})"


KINDS = {"kill9": kill9, "pg_restart": pg_restart, "failover": failover, "partition": partition,
         "pool_storm": pool_storm}
