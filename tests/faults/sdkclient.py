"""A payments client that retries as the real SDKs do (Stripe's, AWS's): one Idempotency-Key per
operation, sent unchanged on every retry; exponential backoff with full jitter; a server's
Retry-After is honoured (never retried sooner); a 409 (in progress), a 503, a timeout and a
broken connection are retried; any other answer ends the operation, and so does an "outcome
unknown" problem, whatever its status: it is the key's stored answer, which no retry changes (the
caller must look the payment up before paying again). It stops retrying a key at its deadline (and
never past the Idempotency-Expires the server last gave), as the README asks.

Every attempt is recorded, so the campaign can judge the store by what each client saw."""
import email.utils
import http.client
import json
import random
import threading
import time
import uuid

RETRYABLE = {409, 429, 502, 503, 504}


class Attempt:
    __slots__ = ("start", "end", "endpoint", "status", "error", "payment_id", "replayed", "problem")

    def __init__(self, start, endpoint):
        self.start, self.end, self.endpoint = start, None, endpoint
        self.status, self.error, self.payment_id, self.replayed = None, None, None, False
        self.problem = None  # a problem+json answer's type, the part after its "#"


class Operation:
    """One payment as the caller sees it: acknowledged (a 2xx with a payment id) or not."""

    def __init__(self, tenant):
        self.tenant = tenant
        self.key = "faults-" + uuid.uuid4().hex
        self.body = json.dumps({"amount": random.randint(100, 99999), "currency": "usd",
                                "customer": "cus_" + uuid.uuid4().hex[:8]})
        self.attempts = []
        self.acknowledged_id = None
        self.ids_seen = set()  # every payment id any answer for this key carried
        self.final_status = None

    @property
    def acknowledged(self):
        return self.acknowledged_id is not None


def backoff(attempt, base=0.1, cap=2.0):
    return random.uniform(0, min(cap, base * 2 ** attempt))


def retry_after(headers):
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())


def expires_at(headers):
    value = headers.get("Idempotency-Expires")
    return email.utils.parsedate_to_datetime(value).timestamp() if value else None


def attempt_once(op, endpoint, timeout):
    """One HTTP exchange; returns the Attempt and the response headers (empty on an error)."""
    host, port = endpoint
    att = Attempt(time.time(), endpoint)
    headers = {}
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("POST", "/v1/payments", body=op.body, headers={
            "Content-Type": "application/json", "Idempotency-Key": op.key, "Account-Id": op.tenant})
        resp = conn.getresponse()
        payload = resp.read()
        att.status = resp.status
        headers = {k: v for k, v in resp.getheaders()}
        att.replayed = headers.get("Idempotent-Replayed") == "true"
        if 200 <= resp.status < 300:
            att.payment_id = json.loads(payload).get("id")
        elif "problem+json" in headers.get("Content-Type", ""):
            att.problem = json.loads(payload).get("type", "").rpartition("#")[2]
    except (OSError, http.client.HTTPException) as e:
        att.error = type(e).__name__
    finally:
        conn.close()
        att.end = time.time()
    return att, headers


def run_operation(op, pick_endpoint, deadline_s=40.0, timeout=4.0):
    """Retries op until it is answered for good or its deadline passes."""
    give_up = time.time() + deadline_s
    n = 0
    while True:
        att, headers = attempt_once(op, pick_endpoint(), timeout)
        op.attempts.append(att)
        if att.payment_id:
            op.ids_seen.add(att.payment_id)
        final = att.status not in RETRYABLE or att.problem == "upstream-outcome-unknown"
        if att.status is not None and final:
            op.final_status = att.status
            if 200 <= att.status < 300 and att.payment_id:
                op.acknowledged_id = att.payment_id
            return op
        wait = backoff(n)
        hinted = retry_after(headers)
        if hinted is not None:
            wait = max(wait, hinted)
        expires = expires_at(headers)
        if expires is not None:
            give_up = min(give_up, expires)
        n += 1
        if time.time() + wait >= give_up:
            op.final_status = att.status
            return op
        time.sleep(wait)


class Fleet:
    """`count` clients paying in a loop, each operation through a random endpoint, until stop();
    every operation (and any added by record()) is kept for the verdict."""

    def __init__(self, count, tenant, endpoints):
        self.tenant, self.endpoints = tenant, endpoints
        self._ops, self._lock, self._stop = [], threading.Lock(), threading.Event()
        self._threads = [threading.Thread(target=self._client, daemon=True) for _ in range(count)]

    def record(self, batch):
        with self._lock:
            self._ops.extend(batch)

    def _client(self):
        while not self._stop.is_set():
            op = Operation(self.tenant)
            self.record([op])
            run_operation(op, lambda: random.choice(self.endpoints).address)

    def start(self):
        for t in self._threads:
            t.start()

    def stop(self):
        """Waits for every client's last operation to finish; returns every operation."""
        self._stop.set()
        for t in self._threads:
            t.join(timeout=60)
        with self._lock:
            return list(self._ops)
