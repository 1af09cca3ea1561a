#!/usr/bin/env python3
"""A charge service that keeps the Idempotency-Key contract except for the flaws it is started
with: the conformance kit's own test (tst_detectsflaws.cpp) runs `idemctl conform` against it
with one flaw at a time and checks that the scenario for that flaw fails and no other does. A kit
that cannot fail proves nothing.

    python3 flawed_service.py [--port 0] [--ttl SECONDS] [--prefix /api] [--key-header NAME]
        [--tls CERT KEY] [--close] [--flaw NAME]...

Prints "flawed_service listening on http://127.0.0.1:PORT" once it accepts connections.
POST /v1/charges executes (201 {"id": "ch_N", ...} + Location); X-Delay-Ms: N makes it take N ms.
GET /executions answers {"total": N}. With --prefix, every path is under it (/api/v1/charges); --key-header
names the header keys come in (default Idempotency-Key). --tls serves https with that certificate;
--close ends each connection after its answer (HTTP/1.0), and refuses a request without a key
before reading its body, as many small servers do (the unread body makes the close a reset). Keys are strict RFC 9651 sf-strings of 1-255 characters,
scoped per X-Tenant-Id, bound to the body; a key used again after --ttl executes again.

Flaws (each one breaks one rule):
  ignore-keys      no idempotency at all: every request executes
  replay-status    a replay answers 200 instead of the first answer's status
  replay-location  a replay leaves out the Location header
  no-fingerprint   the same key with another body replays the first answer
  key-optional     a request without a key executes
  lenient-keys     any Idempotency-Key value is a key (empty, unterminated, long, repeated)
  plain-errors     refusals are text/plain instead of problem+json
  no-lock          a retry while the first request runs executes too
  global-keys      keys are shared by every tenant
  never-expire     keys are kept past --ttl
"""
import argparse
import ssl
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FLAWS = set()
TTL = 3600.0
PREFIX = ""
KEY_HEADER = "Idempotency-Key"
CLOSE = False
_lock = threading.Lock()
_records = {}  # (tenant, key) -> {"body", "state", "status", "answer", "location", "at"}
_executions = 0


def parse_sf_string(value):
    """The key inside a strict sf-string, or None."""
    if len(value) < 2 or value[0] != '"' or value[-1] != '"':
        return None
    out, i, inner = [], 0, value[1:-1]
    while i < len(inner):
        c = inner[i]
        if c == "\\":
            if i + 1 >= len(inner) or inner[i + 1] not in '"\\':
                return None
            out.append(inner[i + 1])
            i += 2
            continue
        if c == '"' or not (0x20 <= ord(c) <= 0x7E):
            return None
        out.append(c)
        i += 1
    return "".join(out)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="application/json", headers=()):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def refuse(self, status, slug, title):
        if "plain-errors" in FLAWS:
            self.answer(status, title + "\n", "text/plain")
        else:
            problem = {"type": "https://flawed.test/idempotency#" + slug, "title": title, "status": status}
            self.answer(status, json.dumps(problem), "application/problem+json")

    def route(self):
        """The path under --prefix; None when it is not under it."""
        return self.path[len(PREFIX):] if self.path.startswith(PREFIX) else None

    def do_GET(self):
        if self.route() == "/executions":
            self.answer(200, json.dumps({"total": _executions}))
        else:
            self.refuse(404, "not-found", "Not found")

    def execute(self, body):
        global _executions
        delay = int(self.headers.get("X-Delay-Ms", "0"))
        if delay:
            time.sleep(delay / 1000.0)
        with _lock:
            _executions += 1
            charge = "ch_%d" % _executions
        payload = json.loads(body or "{}")
        answer = json.dumps({"id": charge, "object": "charge", "amount": payload.get("amount")})
        return 201, answer, "/v1/charges/" + charge

    def do_POST(self):
        if self.route() != "/v1/charges":
            return self.refuse(404, "not-found", "Not found")
        if CLOSE and not self.headers.get_all(KEY_HEADER) and "key-optional" not in FLAWS:
            return self.refuse(400, "key-missing", "Idempotency-Key is missing")
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        if "ignore-keys" in FLAWS:
            status, answer, location = self.execute(body)
            return self.answer(status, answer, headers=[("Location", location)])
        fields = self.headers.get_all(KEY_HEADER) or []
        if not fields:
            if "key-optional" in FLAWS:
                status, answer, location = self.execute(body)
                return self.answer(status, answer, headers=[("Location", location)])
            return self.refuse(400, "key-missing", "Idempotency-Key is missing")
        key = fields[0] if "lenient-keys" in FLAWS else parse_sf_string(fields[0])
        if len(fields) > 1 and "lenient-keys" not in FLAWS:
            key = None
        if key is None or (("lenient-keys" not in FLAWS) and not 1 <= len(key) <= 255):
            return self.refuse(400, "key-malformed", "Idempotency-Key is malformed")
        tenant = "" if "global-keys" in FLAWS else self.headers.get("X-Tenant-Id", "")
        scope = (tenant, key)
        with _lock:
            record = _records.get(scope)
            expired = record and record["state"] == "done" and "never-expire" not in FLAWS and \
                time.monotonic() - record["at"] > TTL
            if record and not expired:
                if record["body"] != body and "no-fingerprint" not in FLAWS:
                    return self.refuse(422, "payload-mismatch", "Idempotency-Key reused with another payload")
                if record["state"] == "running" and "no-lock" not in FLAWS:
                    return self.refuse(409, "in-progress", "A request with this Idempotency-Key is in progress")
                if record["state"] == "done":
                    status = 200 if "replay-status" in FLAWS else record["status"]
                    headers = [("Idempotent-Replayed", "true")]
                    if "replay-location" not in FLAWS:
                        headers.append(("Location", record["location"]))
                    return self.answer(status, record["answer"], headers=headers)
            record = {"body": body, "state": "running", "at": time.monotonic()}
            _records[scope] = record
        status, answer, location = self.execute(body)
        with _lock:
            record.update(state="done", status=status, answer=answer, location=location, at=time.monotonic())
        self.answer(status, answer, headers=[("Location", location)])


def main():
    global TTL, PREFIX, KEY_HEADER, CLOSE
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ttl", type=float, default=3600.0)
    parser.add_argument("--prefix", default="")
    parser.add_argument("--key-header", default="Idempotency-Key")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    parser.add_argument("--close", action="store_true")
    parser.add_argument("--flaw", action="append", default=[])
    args = parser.parse_args()
    unknown = set(args.flaw) - {"ignore-keys", "replay-status", "replay-location", "no-fingerprint", "key-optional",
                                "lenient-keys", "plain-errors", "no-lock", "global-keys", "never-expire"}
    if unknown:
        parser.error("unknown flaw: " + ", ".join(sorted(unknown)))
    FLAWS.update(args.flaw)
    TTL = args.ttl
    PREFIX = args.prefix
    KEY_HEADER = args.key_header
    if args.close:
        CLOSE = True
        Handler.protocol_version = "HTTP/1.0"
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    scheme = "http"
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*args.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    # The test harness reads the port after "http://127.0.0.1:"; https adds its scheme before it.
    print("flawed_service listening on %s (http://127.0.0.1:%d)" % (scheme, server.server_port), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
