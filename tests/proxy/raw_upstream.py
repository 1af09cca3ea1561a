#!/usr/bin/env python3
"""An upstream built on Python's http.server, for the proxy tests that need what a Flask app
will not do: ignore a GET's body (http.server never reads it, so its bytes are parsed as the next
request on a kept-alive connection), answer close-delimited and cut the answer short, answer
HEAD with the GET's Content-Length, refuse with 401/429 before any work, be slow for many
requests at once, and answer with a body of any size (POST /v1/big, X-Test-Bytes).

    python3 raw_upstream.py --ledger FILE

Prints "raw_upstream listening on http://127.0.0.1:PORT" once it accepts connections. Every
execution (a POST that is not a refusal) appends "<Idempotency-Key> <path>" to the ledger before
any answer byte, so tests count from the service's side what ran.
"""
import argparse
import http.server
import sys
import threading
import time

LEDGER = None
_lock = threading.Lock()


def record(key, path):
    with _lock, open(LEDGER, "a", encoding="utf-8") as f:
        f.write(f"{key or '-'} {path}\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a production server would

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        # Never reads a body: what a GET carried is the next request on this connection.
        if self.path == "/doc":
            return self.answer(200, b"x" * 1234)
        if self.path == "/slow":
            time.sleep(float(self.headers.get("X-Test-Sleep-Ms") or 2000) / 1000.0)
        self.answer(200, b'{"peek":true}')

    def do_HEAD(self):
        self.do_GET()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        key = self.headers.get("Idempotency-Key")
        if self.path == "/v1/auth":
            return self.answer(401, b'{"error":"unauthenticated"}', [("WWW-Authenticate", "Bearer")])
        if self.path == "/v1/limited":
            return self.answer(429, b'{"error":"slow down"}', [("Retry-After", "1")])
        record(key, self.path)
        if self.path == "/v1/cut":
            # Close-delimited (no Content-Length), then FIN mid-body.
            self.wfile.write(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
                             b'{"id":"ch_cut","amou')
            self.wfile.flush()
            self.close_connection = True
            return
        if self.path == "/v1/slow":
            time.sleep(float(self.headers.get("X-Test-Sleep-Ms") or 2000) / 1000.0)
        if self.path == "/v1/big":
            # A large answer (X-Test-Bytes long) that names its key, so a replay of another
            # key's answer cannot pass for this one's.
            size = int(self.headers.get("X-Test-Bytes") or 0)
            head = f'{{"key":"{key}","pad":"'.encode()
            pad = (b"0123456789abcdef" * (size // 16 + 1))[: max(0, size - len(head) - 2)]
            return self.answer(201, head + pad + b'"}')
        self.answer(201, b'{"id":"ch_1","body":' + (body or b"null") + b"}")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


def main():
    global LEDGER
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ledger", required=True)
    args = parser.parse_args()
    LEDGER = args.ledger
    open(LEDGER, "a").close()
    server = Server(("127.0.0.1", args.port), Handler)
    print(f"raw_upstream listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
