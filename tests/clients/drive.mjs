// Runs one real JavaScript client library against one fault profile of `idemctl serve
// --allow-fault-injection`: OPS operations, one after another, each on its own route
// /faults/<profile>/op-<lib>-<i>/..., so the server records every attempt of each operation.
// Only the target URL and the settings the README names are configured; the retry logic is the
// library's own. Usage: node drive.mjs LIB PROFILE OPS BASE_URL   (BASE_URL like http://127.0.0.1:PORT)
import { createRequire } from 'node:module';

const require = createRequire(process.env.IDEM_CLIENTS_DIR + '/package.json');
const [lib, profile, opsText, base] = process.argv.slice(2);
const ops = Number(opsText);
const kTimeoutMs = 1000;  // per attempt: what the 'hang' profile measures
const url = (i) => `${base}/faults/${profile}/op-${lib}-${profile}-${i}`;

const drivers = {
  // stripe-node: defaults (maxNetworkRetries 2); rawRequest sends through the same RequestSender.
  async 'stripe-node'(i) {
    const Stripe = require('stripe');
    const u = new URL(base);
    const stripe = new Stripe('sk_test_measure', { host: u.hostname, port: u.port, protocol: 'http', timeout: kTimeoutMs });
    await stripe.rawRequest('POST', `/faults/${profile}/op-${lib}-${profile}-${i}/v1/customers`, {});
  },
  // AWS SDK for JavaScript v3: defaults (standard mode, 3 attempts); the endpoint points at the route.
  async 'aws-js-v3'(i) {
    const { DynamoDBClient, ListTablesCommand } = require('@aws-sdk/client-dynamodb');
    const { NodeHttpHandler } = require('@smithy/node-http-handler');
    const client = new DynamoDBClient({
      endpoint: url(i), region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDMEASURE', secretAccessKey: 'measure' },
      // throwOnRequestTimeout: without it a timed-out request only logs a warning and waits on.
      requestHandler: new NodeHttpHandler({ requestTimeout: kTimeoutMs, connectionTimeout: kTimeoutMs, throwOnRequestTimeout: true }),
    });
    await client.send(new ListTablesCommand({}));
  },
  // The same SDK on another service: SQS (defaults; its retry settings are the SDK's, not
  // DynamoDB's), so the preset can say which of them it stands for.
  async 'aws-js-v3-default'(i) {
    const { SQSClient, ListQueuesCommand } = require('@aws-sdk/client-sqs');
    const { NodeHttpHandler } = require('@smithy/node-http-handler');
    const client = new SQSClient({
      endpoint: url(i), region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDMEASURE', secretAccessKey: 'measure' },
      requestHandler: new NodeHttpHandler({ requestTimeout: kTimeoutMs, connectionTimeout: kTimeoutMs, throwOnRequestTimeout: true }),
    });
    await client.send(new ListQueuesCommand({}));
  },
  // got: defaults (limit 2) with POST added to retry.methods; the key set by the caller.
  async got(i) {
    const got = (await import(require.resolve('got'))).default;
    await got.post(`${url(i)}/v1/payments`, {
      json: { amount: 1 }, headers: { 'Idempotency-Key': `got-${profile}-${i}` },
      retry: { methods: ['GET', 'PUT', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'POST'] },
      timeout: { request: kTimeoutMs },
    });
  },
  // axios-retry: exponentialDelay, default retries (3); POST allowed by retrying network errors and 5xx.
  async 'axios-retry'(i) {
    const axios = require('axios');
    const axiosRetry = require('axios-retry').default ?? require('axios-retry');
    const client = axios.create({ timeout: kTimeoutMs });
    axiosRetry(client, {
      retryDelay: axiosRetry.exponentialDelay,
      retryCondition: (e) => axiosRetry.isNetworkError(e) || axiosRetry.isRetryableError(e),
    });
    await client.post(`${url(i)}/v1/payments`, { amount: 1 }, { headers: { 'Idempotency-Key': `axios-${profile}-${i}` } });
  },
};

const drive = drivers[lib];
if (!drive) {
  console.error(`unknown library ${lib}; one of ${Object.keys(drivers).join(', ')}`);
  process.exit(2);
}
for (let i = 0; i < ops; ++i) {
  try {
    await drive(i);
  } catch (e) {
    // Every operation fails by design: the fault never clears.
  }
}
