#!/usr/bin/env python3
"""A sample payments service for `idemctl proxy`: an ordinary Flask app that knows nothing of
Idem. It "charges" on POST /v1/<kind> and records every execution, so tests (and a user trying
the README's walkthrough) can count from the service's own side how often a charge ran.

    python3 charge_app.py [--port 5000] [--ledger FILE]

Prints "charge_app listening on http://127.0.0.1:PORT (ledger FILE)" once it accepts connections.
Each execution appends "<tenant> <Idempotency-Key> <kind>" to the ledger file, written before the
answer, so the count survives the process being killed. Without --ledger each start gets a new
file in the temp folder: GET /executions counts this run's charges, not an earlier walkthrough's.

Test knobs, per request: X-Test-Sleep-Ms (wait before answering, after recording the charge),
X-Test-Status (answer with this status instead of 201) and X-Test-Gzip (a gzip-encoded answer,
whatever the request's Accept-Encoding).
"""
import argparse
import gzip
import itertools
import json
import os
import sys
import tempfile
import threading
import time

from flask import Flask, jsonify, request
from werkzeug.serving import WSGIRequestHandler, make_server

app = Flask(__name__)
_lock = threading.Lock()
_ids = itertools.count(1)
LEDGER = None  # set in main()


def _executions():
    try:
        with open(LEDGER, encoding="utf-8") as f:
            return [line.rstrip("\n").split(" ") for line in f if line.strip()]
    except FileNotFoundError:
        return []


@app.post("/v1/<kind>")
def charge(kind):
    body = request.get_json(silent=True) or {}
    key = request.headers.get("Idempotency-Key", "-")
    tenant = request.headers.get("X-Tenant-Id", "-")
    with _lock:
        charge_id = "ch_%d_%d" % (os.getpid(), next(_ids))
        with open(LEDGER, "a", encoding="utf-8") as f:
            f.write("%s %s %s\n" % (tenant, key, kind))
            f.flush()
    sleep_ms = int(request.headers.get("X-Test-Sleep-Ms", "0"))
    if sleep_ms:
        time.sleep(sleep_ms / 1000.0)
    status = int(request.headers.get("X-Test-Status", "201"))
    answer = jsonify(id=charge_id, object=kind, amount=body.get("amount"), currency=body.get("currency"),
                     tenant=tenant, idempotency_key=key)
    answer.status_code = status
    answer.headers["Location"] = "/v1/%s/%s" % (kind, charge_id)
    answer.headers["Set-Cookie"] = "session=%s" % charge_id  # never replayed by Idem
    if request.headers.get("X-Test-Gzip"):  # a service that compresses whatever the client accepts
        answer.set_data(gzip.compress(answer.get_data()))
        answer.headers["Content-Encoding"] = "gzip"
    return answer


@app.post("/v1/orders/<order_id>/capture")
def capture(order_id):
    """A route with an id in its path, as most REST APIs have (a policy route template covers it)."""
    key = request.headers.get("Idempotency-Key", "-")
    tenant = request.headers.get("X-Tenant-Id", "-")
    with _lock:
        with open(LEDGER, "a", encoding="utf-8") as f:
            f.write("%s %s capture-%s\n" % (tenant, key, order_id))
            f.flush()
    answer = jsonify(object="capture", order=order_id, tenant=tenant, idempotency_key=key)
    answer.status_code = 201
    return answer


@app.get("/executions")
def executions():
    """How many charges ran: in total and per "<tenant> <key>"."""
    rows = _executions()
    by_key = {}
    for row in rows:
        name = " ".join(row[:2])
        by_key[name] = by_key.get(name, 0) + 1
    return jsonify(total=len(rows), by_key=by_key)


@app.route("/headers", methods=["GET", "POST"])
@app.post("/v1/headers")
def headers():
    """The request's headers as the service received them."""
    return jsonify({k: v for k, v in request.headers.items()})


def main():
    global LEDGER
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--ledger", help="the file that records executions (kept across starts)")
    args = parser.parse_args()
    if args.ledger:
        LEDGER = args.ledger
    else:
        fd, LEDGER = tempfile.mkstemp(prefix="charge_app_ledger-", suffix=".txt")
        os.close(fd)
    # HTTP/1.1 so the proxy can keep connections alive; one thread per connection.
    WSGIRequestHandler.protocol_version = "HTTP/1.1"
    server = make_server(args.host, args.port, app, threaded=True, request_handler=WSGIRequestHandler)
    print("charge_app listening on http://%s:%d (ledger %s)" % (args.host, server.server_port, LEDGER), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
