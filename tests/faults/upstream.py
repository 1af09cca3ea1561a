#!/usr/bin/env python3
"""The payments service the campaign's proxies stand in front of (`--front proxy`): an unchanged
service that knows nothing of Idem. Every POST /v1/payments it takes is an execution — a charge —
and is appended to its executions file (one JSON line: key, payment id, time) before it answers,
so the campaign counts charges from the service's own side, as a payment provider's ledger would.
It is never faulted: what the campaign breaks is the proxies and their store.

    upstream.py PORT EXECUTIONS_FILE    (prints "upstream ready PORT" once it listens)"""
import json
import random
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Ledger:
    def __init__(self, path):
        self.file = open(path, "a", buffering=1)  # line-buffered: a line is written whole
        self.lock = threading.Lock()

    def charge(self, key, body):
        payment = {"id": "pay_" + uuid.uuid4().hex[:20], "object": "payment",
                   "amount": body.get("amount"), "currency": body.get("currency")}
        with self.lock:
            self.file.write(json.dumps({"key": key, "id": payment["id"], "at": time.time()}) + "\n")
            self.file.flush()
        return payment


class Payments(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the proxy pools its upstream connections
    ledger = None

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path != "/v1/payments":
            return self.answer(404, {"error": "no such route"})
        try:
            request = json.loads(body)
        except ValueError:
            return self.answer(400, {"error": "body is not JSON"})
        key = (self.headers.get("Idempotency-Key") or "").strip('"')
        time.sleep(random.uniform(0.001, 0.005))  # the provider's own work
        self.answer(201, self.ledger.charge(key, request))

    def answer(self, status, document):
        payload = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass  # the executions file is the record; a proxy killed mid-answer is not news

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the charge was made and recorded: the proxy that asked died before the answer


class Server(ThreadingHTTPServer):
    request_queue_size = 1024  # a pool storm opens a hundred upstream connections at once
    daemon_threads = True


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    Payments.ledger = Ledger(path)
    server = Server(("127.0.0.1", port), Payments)
    print(f"upstream ready {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
