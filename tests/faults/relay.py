#!/usr/bin/env python3
"""A TCP relay on loopback between `idemctl serve` and one PostgreSQL (its Unix socket): the
network path the fault campaign cuts.

    relay.py LISTEN_PORT UNIX_SOCKET_PATH [DELAY_MS]

DELAY_MS adds that much latency each way (bytes are held, not throttled): a standby in another
zone or region, whose replication then lags the primary by about that much.

Signals (sent by the campaign to this process's id):
  SIGUSR1  pause: bytes stop moving both ways and new connections wait, as when packets are
           lost on a cut link; nothing is closed, so TCP would carry on once the link heals.
  SIGUSR2  heal: everything held moves again; new connections go through.
  SIGHUP   reset: every connection is reset (as a firewall or a rebooted switch would) and
           the port stops listening until SIGUSR2, so new connections are refused — what a
           client sees of a host whose PostgreSQL is down. (Not accepted and then closed: that
           is a TCP proxy in front of a dead server, and libpq then gives up on a multi-host
           conninfo instead of trying the next host; see tests/faults/README.md.)
The first line on stdout is "relay ready" once the port listens.
"""
import asyncio
import signal
import sys


class Relay:
    def __init__(self, port, socket_path, delay_s):
        self.port = port
        self.socket_path = socket_path
        self.delay_s = delay_s
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.writers = set()
        self.server = None

    async def listen(self):
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", self.port, backlog=512)

    def pause(self):
        self.flowing.clear()

    def heal(self):
        self.flowing.set()
        if self.server is None:
            asyncio.ensure_future(self.listen())

    def reset(self):
        if self.server is not None:
            self.server.close()
            self.server = None
        self.flowing.set()  # held connections are closed below, not left waiting
        for writer in list(self.writers):
            writer.transport.abort()  # RST, not FIN: the peer sees a broken connection
        self.writers.clear()

    async def pipe(self, reader, writer):
        """Moves bytes one way. A chunk waits while the link is cut, and leaves delay_s after it
        arrived; reading goes on meanwhile (latency, not a bandwidth limit)."""
        loop = asyncio.get_running_loop()
        queue = asyncio.Queue()

        async def send():
            try:
                while (item := await queue.get()) is not None:
                    due, data = item
                    if due > loop.time():
                        await asyncio.sleep(due - loop.time())
                    writer.write(data)
                    await writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                writer.close()

        sender = asyncio.create_task(send())
        try:
            while data := await reader.read(65536):
                await self.flowing.wait()
                queue.put_nowait((loop.time() + self.delay_s, data))
        except (ConnectionError, OSError):
            pass
        queue.put_nowait(None)
        await sender

    async def serve(self, client_reader, client_writer):
        await self.flowing.wait()
        if self.server is None:
            client_writer.transport.abort()
            return
        try:
            server_reader, server_writer = await asyncio.open_unix_connection(self.socket_path)
        except OSError:
            client_writer.transport.abort()  # PostgreSQL is down: the client sees a reset
            return
        self.writers.update((client_writer, server_writer))
        try:
            await asyncio.gather(self.pipe(client_reader, server_writer), self.pipe(server_reader, client_writer))
        finally:
            self.writers.discard(client_writer)
            self.writers.discard(server_writer)


async def main(port, socket_path, delay_ms):
    relay = Relay(port, socket_path, delay_ms / 1000.0)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, relay.pause)
    loop.add_signal_handler(signal.SIGUSR2, relay.heal)
    loop.add_signal_handler(signal.SIGHUP, relay.reset)
    await relay.listen()
    print("relay ready", flush=True)
    await asyncio.Event().wait()  # until terminated


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: relay.py LISTEN_PORT UNIX_SOCKET_PATH [DELAY_MS]")
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], float(sys.argv[3]) if len(sys.argv) == 4 else 0.0))
