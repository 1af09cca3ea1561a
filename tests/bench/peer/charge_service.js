#!/usr/bin/env node
// The proxy benchmark's service (tests/bench/proxy.sh): an ordinary Express app that "charges" on
// POST /v1/charges. Started plain it is the upstream that `idemctl proxy` stands in front of (and
// that the benchmark also calls straight); started with --redis it is the peer: the same app with
// node-idempotency (@node-idempotency/core and its Redis storage adapter) in the request path,
// the way its framework plugins wire it: onRequest before the handler (a stored answer is
// returned, a key in progress is 409, another payload 422), onResponse before the answer is sent,
// so a client that got an answer knows it was recorded (what Idem does too).
//
//   node charge_service.js --port 0 [--redis redis://127.0.0.1:6379]
// Prints "charge_service listening on http://127.0.0.1:PORT". X-Test-Sleep-Ms: N makes a charge
// take N ms (docs/conformance.md runs `idemctl conform` against the peer with it).
"use strict";
const express = require("express");

function arg(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

const app = express();
app.disable("x-powered-by");
app.disable("etag");
app.use(express.json());
let charges = 0;

async function withIdempotency(redisUrl) {
  const { Idempotency } = require("@node-idempotency/core");
  const { IdempotencyError, IdempotencyErrorCodes } = require("@node-idempotency/core/dist/error");
  const { RedisStorageAdapter } = require("@node-idempotency/storage-adapter-redis");
  const storage = new RedisStorageAdapter({ url: redisUrl });
  await storage.connect();
  const idem = new Idempotency(storage, { enforceIdempotency: true });
  const statusOf = {
    [IdempotencyErrorCodes.REQUEST_IN_PROGRESS]: 409,
    [IdempotencyErrorCodes.IDEMPOTENCY_FINGERPRINT_MISSMATCH]: 422,
  };
  app.post("/v1/charges", async (req, res, next) => {
    const params = { headers: req.headers, path: req.path, method: req.method, body: req.body };
    try {
      const stored = await idem.onRequest(params);
      if (stored) {
        res.status(stored.additional.status).set("Idempotent-Replayed", "true").json(stored.body);
        return;
      }
    } catch (e) {
      if (!(e instanceof IdempotencyError)) return next(e);
      res.status(statusOf[e.code] || 400).json({ error: e.code, message: e.message });
      return;
    }
    const send = res.json.bind(res);
    res.json = (body) => {
      idem.onResponse(params, { body, additional: { status: res.statusCode } }).then(() => send(body), next);
      return res;
    };
    next();
  });
}

function charge(req, res) {
  charges += 1;
  const id = `ch_${charges}`;
  const body = req.body || {};
  const answer = () => {
    res.status(201).set("Location", `/v1/charges/${id}`);
    res.json({ id, object: "charge", amount: body.amount, currency: body.currency });
  };
  // X-Test-Sleep-Ms: a slow charge, so `idemctl conform` can send a retry while it runs.
  const sleepMs = Number(req.get("X-Test-Sleep-Ms") || 0);
  if (sleepMs > 0) setTimeout(answer, sleepMs);
  else answer();
}

app.get("/executions", (req, res) => res.json({ total: charges }));

(async () => {
  const redis = arg("redis", "");
  if (redis) await withIdempotency(redis);
  app.post("/v1/charges", charge);  // after the idempotency step, which runs first
  const server = app.listen(Number(arg("port", "0")), "127.0.0.1", () => {
    console.log(`charge_service listening on http://127.0.0.1:${server.address().port}`);
  });
  server.keepAliveTimeout = 65000;
})();
