#!/usr/bin/python3
"""Runs one real Python client library against one fault profile of `idemctl serve
--allow-fault-injection`: OPS operations one after another, each on its own route
/faults/<profile>/op-<lib>-<profile>-<i>/..., so every attempt of each operation is recorded.
Only the target URL and the settings named here are configured; the retry logic is the library's.
Debian's packages (python3-urllib3, python3-botocore, python3-stripe), run with /usr/bin/python3.
Usage: drive.py LIB PROFILE OPS BASE_URL
"""
import sys

TIMEOUT_S = 1.0  # per attempt: what the 'hang' profile measures
lib, profile, ops, base = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]


def url(i):
    return f"{base}/faults/{profile}/op-{lib}-{profile}-{i}"


def drive_urllib3(i):
    import urllib3
    from urllib3.util.retry import Retry
    # Retry(3) defaults, plus: backoff_factor 0.2 (default 0 sleeps nothing), POST allowed
    # (allowed_methods=None) and 5xx retried (status_forcelist; default empty).
    retry = Retry(total=3, backoff_factor=0.2, allowed_methods=None, status_forcelist=(500, 502, 503, 504),
                  raise_on_status=False)
    http = urllib3.PoolManager(retries=retry, timeout=urllib3.Timeout(total=TIMEOUT_S))
    http.request("POST", f"{url(i)}/v1/payments", body=b"{}",
                 headers={"Content-Type": "application/json", "Idempotency-Key": f"urllib3-{profile}-{i}"})


def drive_botocore(i):
    import botocore.session
    from botocore.config import Config
    session = botocore.session.get_session()
    # Standard retry mode (the aws-standard preset's; botocore 1.29's default is "legacy").
    client = session.create_client("dynamodb", region_name="us-east-1", endpoint_url=url(i),
                                   aws_access_key_id="AKIDMEASURE", aws_secret_access_key="measure",
                                   config=Config(retries={"mode": "standard"}, read_timeout=TIMEOUT_S,
                                                 connect_timeout=TIMEOUT_S))
    client.list_tables()


def drive_stripe_python(i):
    import stripe
    stripe.api_key = "sk_test_measure"
    stripe.api_base = url(i)
    stripe.max_network_retries = 2  # current releases' default; 5.0.0 defaults to 0
    stripe.default_http_client = stripe.http_client.RequestsClient(timeout=TIMEOUT_S) \
        if hasattr(stripe.http_client, "RequestsClient") else None
    stripe.Customer.create()


DRIVERS = {"urllib3": drive_urllib3, "aws-botocore": drive_botocore, "stripe-python": drive_stripe_python}

if lib not in DRIVERS:
    sys.exit(f"unknown library {lib}; one of {', '.join(DRIVERS)}")
for i in range(ops):
    try:
        DRIVERS[lib](i)
    except Exception:  # every operation fails by design: the fault never clears
        pass
