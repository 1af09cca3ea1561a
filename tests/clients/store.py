#!/usr/bin/python3
"""Splits `idemctl measure --format json` into tests/data/clients/<library>.json, one per
library, with the library's version and what the driver configured (drive.mjs, drive.py)."""
import datetime
import json
import re
import sys

measure_path, data_dir, node_dir, ops = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def npm_version(name):
    with open(f"{node_dir}/node_modules/{name}/package.json") as f:
        return json.load(f)["version"]


def py_version(module):
    if module == "stripe":
        import stripe.version
        return stripe.version.VERSION
    return __import__(module).__version__


LIBS = {
    # library: (User-Agent pattern, package, version getter, settings the driver made)
    "stripe-node": (r"NodeBindings", "npm stripe", lambda: npm_version("stripe"),
                    "defaults (maxNetworkRetries 2); timeout 1 s; rawRequest POST"),
    "aws-js-v3": (r"^aws-sdk-js/.* api/dynamodb#", "npm @aws-sdk/client-dynamodb", lambda: npm_version("@aws-sdk/client-dynamodb"),
                  "defaults (standard retry mode); endpoint override; requestTimeout 1 s"),
    "aws-js-v3-default": (r"^aws-sdk-js/.* api/sqs#", "npm @aws-sdk/client-sqs", lambda: npm_version("@aws-sdk/client-sqs"),
                      "defaults (standard retry mode); endpoint override; requestTimeout 1 s"),
    "got": (r"^got ", "npm got", lambda: npm_version("got"),
            "defaults (retry.limit 2) plus POST in retry.methods; timeout.request 1 s (also its maxRetryAfter)",
            {"retry_after_cap": "1s"}),
    "axios-retry": (r"^axios/", "npm axios-retry", lambda: npm_version("axios-retry") + " (axios " +
                    npm_version("axios") + ")",
                    "retryDelay exponentialDelay, default retries 3; retryCondition network error or 5xx "
                    "(POST allowed); timeout 1 s (axios-retry also ends the operation there)",
                    {"deadline": "1s"}),
    "urllib3": (r"^python-urllib3/", "Debian python3-urllib3", lambda: py_version("urllib3"),
                "Retry(total=3, backoff_factor=0.2, allowed_methods=None, status_forcelist=500/502/503/504); "
                "timeout 1 s", {"base": "200ms", "retry_on": ["timeout", "connection_error", "5xx"]}),
    "aws-botocore": (r"^Botocore/", "Debian python3-botocore", lambda: py_version("botocore"),
                     "retries mode standard (1.29's default is legacy); read/connect timeout 1 s"),
    "stripe-python": (r"PythonBindings", "Debian python3-stripe", lambda: py_version("stripe"),
                      "max_network_retries 2 (5.0.0 defaults to 0); timeout 1 s"),
}

with open(measure_path) as f:
    clients = json.load(f)["clients"]
today = datetime.date.today().isoformat()
# What the driver set beyond the preset's defaults, in the simulator's policy shape: the
# comparison (tests/sim/tst_sim_measured.cpp) applies it over the preset.
TIMEOUT = {"timeout": "1s"}

for lib, (pattern, package, version, settings, *extra) in LIBS.items():
    found = [c for c in clients if re.search(pattern, c["user_agent"])]
    if not found:
        print(f"{lib}: no attempts recorded (did its driver run?)", file=sys.stderr)
        continue
    doc = {"library": lib, "package": package, "version": version(), "measured_on": today,
           "operations_per_fault": ops, "settings": settings,
           "policy_overrides": {**TIMEOUT, **(extra[0] if extra else {})}, "measurement": found[0]}
    with open(f"{data_dir}/{lib}.json", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{lib}: {doc['version']}")
