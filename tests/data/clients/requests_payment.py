#!/usr/bin/python3
"""A payment as an ordinary Python service sends it: requests (Debian's python3-requests) with
urllib3's Retry mounted on the session, POST allowed, one Idempotency-Key for every attempt.

The read timeout is shorter than the charge takes, so the first attempt times out and the
client retries the same request with the same key: through `idemctl proxy` that retry is told
409 (the charge is still running) and, after the Retry-After it obeys, gets the stored answer.
Prints one JSON object: the attempts urllib3 retried (error or status) and the final answer.
Usage: requests_payment.py URL KEY BODY READ_TIMEOUT_S [HEADER:VALUE ...]
"""
import json
import sys

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

ATTEMPTS = []


class RecordingRetry(Retry):
    """urllib3's own retry, noting why each attempt was retried."""

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        ATTEMPTS.append({"status": response.status if response is not None else None,
                         "error": type(error).__name__ if error is not None else None,
                         "retry_after": response.headers.get("Retry-After") if response is not None else None})
        return super().increment(method, url, response, error, _pool, _stacktrace)


def main():
    url, key, body, read_timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    headers = {"Content-Type": "application/json", "Idempotency-Key": key}
    for extra in sys.argv[5:]:
        name, value = extra.split(":", 1)
        headers[name] = value
    retry = RecordingRetry(total=10, connect=3, read=3, status_forcelist=[409, 502, 503],
                           allowed_methods=frozenset(["POST"]), respect_retry_after_header=True,
                           backoff_factor=0.2, raise_on_status=False)
    session = requests.Session()
    session.mount("http://", HTTPAdapter(max_retries=retry))
    r = session.post(url, data=body, headers=headers, timeout=(5, read_timeout))
    print(json.dumps({"attempts": ATTEMPTS,
                      "final": {"status": r.status_code, "body": r.text,
                                "replayed": r.headers.get("Idempotent-Replayed", ""),
                                "key": r.headers.get("Idempotency-Key", "")}}))


if __name__ == "__main__":
    main()
