"""Real `idemctl serve` or `idemctl proxy` processes, the service behind the proxies and the
relays in front of PostgreSQL, as child processes of the campaign (killed only by their own ids)."""
import os
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_line(path, needle, proc, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with open(path) as f:
                if needle in f.read():
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


class Endpoint:
    """One of the campaign's two front doors: `idemctl serve` (the demo's payments, executed in the
    store's transactions), or `idemctl proxy` in front of upstream.py when `front` is
    ("proxy", upstream URL, store-writes mode)."""

    def __init__(self, idemctl, name, conninfo, policy, workdir, pool, front=("serve",)):
        self.idemctl, self.name, self.conninfo, self.policy = idemctl, name, conninfo, policy
        self.workdir, self.pool, self.front = workdir, pool, front
        self.port = free_port()
        self.proc = None
        self.starts = 0
        self.lock = threading.Lock()  # one fault at a time kills and restarts this endpoint

    @property
    def address(self):
        return ("127.0.0.1", self.port)

    def start(self, timeout=30):
        """Starts serve; retried while it cannot start (e.g. exit 3 while the store is down)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.starts += 1
            out = f"{self.workdir}/{self.name}.{self.starts}.out"
            with open(out, "w") as stdout, open(f"{self.workdir}/{self.name}.err", "a") as stderr:
                self.proc = subprocess.Popen(self.command(), stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
            if wait_for_line(out, "listening on", self.proc, max(1.0, deadline - time.time())):
                return
            if self.proc.poll() is None:
                self.kill9()
            time.sleep(0.5)
        raise RuntimeError(f"endpoint {self.name} did not start within {timeout} s (see {self.workdir})")

    def command(self):
        common = ["--db", self.conninfo, "--policy", self.policy, "--listen", f"127.0.0.1:{self.port}",
                  "--pool", str(self.pool), "--access-log", "off"]
        if self.front[0] == "serve":
            return [self.idemctl, "serve"] + common
        _, upstream, store_writes = self.front
        return [self.idemctl, "proxy", "--upstream", upstream, "--store-writes", store_writes] + common

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill9()


class RelayProcess:
    """relay.py in front of one node's Unix socket; pause/heal/reset by signal."""

    def __init__(self, socket_path, workdir, name, delay_ms=0):
        self.port = free_port()
        log = open(f"{workdir}/{name}.log", "w")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "relay.py"), str(self.port), socket_path,
                                      str(delay_ms)],
                                     stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True)
        if self.proc.stdout.readline().strip() != "relay ready":
            raise RuntimeError(f"relay {name} did not start")

    def signal(self, number):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, number)

    def pause(self):
        self.signal(signal.SIGUSR1)

    def heal(self):
        self.signal(signal.SIGUSR2)

    def reset(self):
        self.signal(signal.SIGHUP)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()


class UpstreamProcess:
    """upstream.py: the payments service behind the proxies, recording each charge it makes."""

    def __init__(self, workdir):
        self.executions = f"{workdir}/upstream-executions.jsonl"
        log = open(f"{workdir}/upstream.log", "w")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "upstream.py"), "0", self.executions],
                                     stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True)
        ready = self.proc.stdout.readline().split()
        if ready[:2] != ["upstream", "ready"]:
            raise RuntimeError("the upstream service did not start")
        self.url = f"http://127.0.0.1:{ready[2]}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()
