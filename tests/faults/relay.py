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
  SIGHUP   reset: every connection is closed (as a firewall or a rebooted switch would reset
           them), and until SIGUSR2 new ones are closed as soon as they are accepted.
The first line on stdout is "relay ready" once the port listens.
"""
import asyncio
import signal
import sys


class Relay:
    def __init__(self, socket_path, delay_s):
        self.socket_path = socket_path
        self.delay_s = delay_s
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.refusing = False
        self.writers = set()

    def pause(self):
        self.flowing.clear()

    def heal(self):
        self.refusing = False
        self.flowing.set()

    def reset(self):
        self.refusing = True
        self.flowing.set()  # held connections are closed below, not left waiting
        for writer in list(self.writers):
            writer.transport.abort()  # RST, not FIN: the peer sees a broken connection
        self.writers.clear()

    async def pipe(self, reader, writer):
        if self.delay_s > 0:
            return await self.delayed_pipe(reader, writer)
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                await self.flowing.wait()
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def delayed_pipe(self, reader, writer):
        """Each chunk leaves delay_s after it arrived; reading goes on meanwhile (latency, not a
        bandwidth limit)."""
        loop = asyncio.get_running_loop()
        queue = asyncio.Queue()

        async def send():
            try:
                while (item := await queue.get()) is not None:
                    due, data = item
                    await asyncio.sleep(max(0.0, due - loop.time()))
                    writer.write(data)
                    await writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                writer.close()

        sender = asyncio.create_task(send())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((loop.time() + self.delay_s, data))
        except (ConnectionError, OSError):
            pass
        queue.put_nowait(None)
        await sender

    async def serve(self, client_reader, client_writer):
        await self.flowing.wait()
        if self.refusing:
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
    relay = Relay(socket_path, delay_ms / 1000.0)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, relay.pause)
    loop.add_signal_handler(signal.SIGUSR2, relay.heal)
    loop.add_signal_handler(signal.SIGHUP, relay.reset)
    server = await asyncio.start_server(relay.serve, "127.0.0.1", port, backlog=512)
    print("relay ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: relay.py LISTEN_PORT UNIX_SOCKET_PATH [DELAY_MS]")
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], float(sys.argv[3]) if len(sys.argv) == 4 else 0.0))
