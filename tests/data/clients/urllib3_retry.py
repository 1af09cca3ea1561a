#!/usr/bin/python3
"""One POST through urllib3's own retry logic, as a client that obeys the server's hints would.

urllib3 (Debian's python3-urllib3) retries a 409 when told to and sleeps the Retry-After the
server sent. Prints one JSON object: every response urllib3 saw before its retries, and the final one.
Usage: urllib3_retry.py URL KEY BODY [HEADER:VALUE ...]
"""
import email.utils
import json
import sys
import time

import urllib3
from urllib3.util.retry import Retry

SEEN = []


def epoch_of(http_date):
    return email.utils.parsedate_to_datetime(http_date).timestamp() if http_date else None


class RecordingRetry(Retry):
    """Retry as urllib3 does, noting each response it decides on (status and the hints)."""

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        if response is not None:
            SEEN.append({"at": time.time(), "status": response.status,
                         "retry_after": response.headers.get("Retry-After"),
                         "expires": epoch_of(response.headers.get("Idempotency-Expires"))})
        return super().increment(method, url, response, error, _pool, _stacktrace)


def main():
    url, key, body = sys.argv[1:4]
    headers = {"Content-Type": "application/json", "Idempotency-Key": key}
    for extra in sys.argv[4:]:
        name, value = extra.split(":", 1)
        headers[name] = value
    retry = RecordingRetry(total=30, status_forcelist=[409], allowed_methods=frozenset(["POST"]),
                           respect_retry_after_header=True, backoff_factor=0, raise_on_status=False)
    http = urllib3.PoolManager(retries=retry, timeout=urllib3.Timeout(total=30))
    r = http.request("POST", url, body=body.encode(), headers=headers)
    print(json.dumps({"seen": SEEN,
                      "final": {"at": time.time(), "status": r.status, "body": r.data.decode("utf-8", "replace"),
                                "replayed": r.headers.get("Idempotent-Replayed") or ""}}))


if __name__ == "__main__":
    main()
