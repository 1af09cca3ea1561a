// Presets: each default below carries where it was read, and the presets of libraries that run
// here were held to a measurement of the real library (tests/data/clients/<name>.json, compared
// by tests/sim/tst_sim_measured.cpp). Values are the library's own defaults; where a library
// needs one choice made to retry a POST at all, the comment says so.
//
// Budgets: an AWS retry quota or gRPC throttling bucket belongs to one client object. The
// simulation engine keeps one budget for the whole population, so these presets assume that
// every simulated operation goes through one shared client (core/sim/schedule.h,
// retriesUnderSharedBudget, shows what one client per operation would allow instead).
#include "core/sim/presets.h"

#include <algorithm>

namespace idem::sim {

namespace {

constexpr Usec ms(std::int64_t v) { return v * kUsecPerMs; }
constexpr Usec s(std::int64_t v) { return v * kUsecPerSecond; }

// Stripe's shared shape: equal jitter over an exponential curve, never below 0.5 s, 409 and
// 5xx and network errors retried (both SDKs' _shouldRetry / _should_retry).
Policy stripeCommon() {
  Policy p;
  p.maxAttempts = 3;  // maxNetworkRetries / max_network_retries 2
  p.timeout = s(80);  // stripe-node DEFAULT_TIMEOUT 80000 ms; stripe-python RequestsClient 80 s
  p.deadline = std::nullopt;
  p.backoff = Backoff::Exponential;
  p.multiplier = 2;
  p.cap = s(5);
  p.jitter = Jitter::Equal;  // sleep *= 0.5 * (1 + random()): uniform in [b/2, b]
  p.minDelay = ms(500);      // "never sleep less than the base sleep seconds"
  p.retryOn = kTimeout | kConnectionError | kConflict409 | kStatus5xx;
  return p;
}

Policy stripeNode() {
  Policy p = stripeCommon();
  p.preset = "stripe-node";
  // stripe-node 23.2.0 cjs/RequestSender.js:241-246: min(0.5 * 2^(numRetries-1), 5) with
  // numRetries 0 before the first retry (line 424 passes requestRetries before incrementing):
  // the n-th sleep is 0.25 * 2^(n-1), jittered, floored at 0.5 s. Measured: both sleeps 0.5 s.
  p.base = ms(250);
  // _shouldRetry (lines 192-230) never reads Retry-After: measured 503 + Retry-After 2 s slept 0.5 s.
  p.retryAfter = RetryAfterMode::Ignore;
  p.retryAfterCap = std::nullopt;
  // Not modelled: a closed connection (ECONNRESET) is retried once even with maxNetworkRetries 0
  // (lines 200-204).
  return p;
}

Policy stripePython() {
  Policy p = stripeCommon();
  p.preset = "stripe-python";
  // stripe/http_client.py (5.0.0: lines 236-260): min(INITIAL_DELAY * 2^(n-1), MAX_DELAY), then
  // equal jitter, then max(INITIAL_DELAY, sleep); INITIAL_DELAY 0.5 s. MAX_DELAY is 2 s in 5.0.0
  // and 5 s in current releases: no difference within 2 retries (curve 0.5 s, 1 s).
  p.base = ms(500);
  // Retry-After honoured as a floor when <= MAX_RETRY_AFTER 60 s (lines 250-253), larger ignored.
  // Measured: 503 + Retry-After 2 s slept 2.0 s.
  p.retryAfter = RetryAfterMode::Max;
  p.retryAfterCap = s(60);
  p.overCap = OverCap::Ignore;
  return p;
}

// AWS retry quota shape (botocore retries/quota.py, @smithy/core retry constants).
Budget awsQuota(double retryCost, double timeoutCost) {
  Budget b;
  b.type = Budget::Type::TokenBucket;
  b.style = Budget::Style::Aws;
  b.maxTokens = 500;  // INITIAL_RETRY_TOKENS / INITIAL_CAPACITY
  b.retryCost = retryCost;
  b.timeoutCost = timeoutCost;
  b.successCredit = 1;  // NO_RETRY_INCREMENT
  return b;
}

Policy awsJsV3() {
  Policy p;
  p.preset = "aws-js-v3";
  // @aws-sdk/client-dynamodb 3.1178.0 dist-cjs/index.js:3584: resolveRetryConfig with
  // defaultMaxAttempts 4 and defaultBaseDelay 25 ms for DynamoDB (other service clients:
  // DEFAULT_MAX_ATTEMPTS 3, @smithy/core retry index.js:477, and Retry.delay() 50 ms).
  // Measured: 4 attempts on 500, 503 and resets; first sleeps' medians 14-20 ms (U(0, 25 ms)).
  p.maxAttempts = 4;
  // No per-attempt timeout by default (NodeHttpHandler requestTimeout 0); the socket's 300 s.
  p.timeout = s(300);
  p.deadline = std::nullopt;
  // @smithy/core 3.41.1 retry index.js:433-437 (Retry.v2026): random() * min(base *
  // 2^retryCount, 20 s), retryCount 0 before the first retry: full jitter, base 25 ms for
  // DynamoDB (50 ms, Retry.delay() line 414, for the others; 100 ms, DEFAULT_RETRY_DELAY_BASE
  // line 115, before "v2026").
  p.backoff = Backoff::Exponential;
  p.jitter = Jitter::Full;
  p.base = ms(25);
  p.multiplier = 2;
  p.cap = s(20);
  // TRANSIENT errors: timeouts, connection errors, 500/502/503/504; 409 is not retried (measured).
  p.retryOn = kTimeout | kConnectionError | kStatus5xx;
  // index.js:520-522: max(backoff, min(Retry-After, backoff + 5 s)). Modelled as a floor
  // clamped at 5 s. Measured: 503 + Retry-After 2 s slept 2.0 s.
  p.retryAfter = RetryAfterMode::Max;
  p.retryAfterCap = s(5);
  p.overCap = OverCap::Clamp;
  // Quota: 500 tokens, each retry costs Retry.cost() 14 (throttling errors 5, not modelled),
  // timeouts alike (index.js:420-425, 566).
  p.budget = awsQuota(14, 14);
  return p;
}

// Every other service client of the same SDK: the SDK's own defaults, 3 attempts and a 50 ms
// base (DEFAULT_MAX_ATTEMPTS, @smithy/core retry index.js:477; Retry.delay() line 414).
// Measured on @aws-sdk/client-sqs 3.1178.0: 3 attempts on 500, 503 and resets; first sleeps'
// medians 20 ms, second 44 ms (U(0, 50 ms), U(0, 100 ms)); Retry-After 2 s slept 2.0 s.
Policy awsJsV3Default() {
  Policy p = awsJsV3();
  p.preset = "aws-js-v3-default";
  p.maxAttempts = 3;
  p.base = ms(50);
  return p;
}

Policy awsBotocore() {
  Policy p;
  p.preset = "aws-botocore";
  // botocore 1.29.27 retries/standard.py:38 DEFAULT_MAX_ATTEMPTS 3 (standard mode; 1.29's
  // default mode is "legacy", set retries={"mode": "standard"}).
  p.maxAttempts = 3;
  p.timeout = s(60);  // read_timeout and connect_timeout default 60 s
  p.deadline = std::nullopt;
  // standard.py:253-267 ExponentialBackoff: min(rand(0, 1) * 2^attempt, 20 s): full jitter,
  // base 1 s, multiplier 2, MAX_BACKOFF 20 s.
  p.backoff = Backoff::Exponential;
  p.jitter = Jitter::Full;
  p.base = s(1);
  p.multiplier = 2;
  p.cap = s(20);
  // TransientRetryableChecker: connection errors, timeouts, HTTP 500/502/503/504; not 409.
  p.retryOn = kTimeout | kConnectionError | kStatus5xx;
  // Standard mode does not read Retry-After (measured: 503 + Retry-After 2 s slept 0.5 s median).
  p.retryAfter = RetryAfterMode::Ignore;
  p.retryAfterCap = std::nullopt;
  // quota.py:9 INITIAL_CAPACITY 500; standard.py:480-481 _RETRY_COST 5, _NO_RETRY_INCREMENT 1;
  // a timeout costs TIMEOUT_RETRY_COST 10.
  p.budget = awsQuota(5, 10);
  return p;
}

Policy grpc() {
  Policy p;
  p.preset = "grpc";
  // gRPC has no retry policy until the service config gives one; these are the values of the
  // example in gRFC A6 "gRPC Retry Design": maxAttempts 4 (clients cap it at 5),
  // initialBackoff 0.1 s, maxBackoff 1 s, backoffMultiplier 2.
  p.maxAttempts = 4;
  p.backoff = Backoff::Exponential;
  p.base = ms(100);
  p.multiplier = 2;
  p.cap = s(1);
  // A6: the n-th retry happens after random(0, min(initialBackoff*multiplier^(n-1), maxBackoff)).
  p.jitter = Jitter::Full;
  // gRPC has no per-attempt timeout; the call deadline spans all attempts and is unset by default.
  p.timeout = std::nullopt;
  p.deadline = std::nullopt;
  // retryableStatusCodes ["UNAVAILABLE"]: HTTP 503 and connections that fail. DEADLINE_EXCEEDED
  // is not retried.
  p.retryOn = kConnectionError | kStatus503;
  // Server pushback (grpc-retry-pushback-ms) sets the next delay exactly, without a cap.
  p.retryAfter = RetryAfterMode::Replace;
  p.retryAfterCap = std::nullopt;
  // A6 example retryThrottling: maxTokens 10, tokenRatio 0.1.
  p.budget.type = Budget::Type::TokenBucket;
  p.budget.style = Budget::Style::Grpc;
  p.budget.maxTokens = 10;
  p.budget.ratio = 0.1;
  return p;
}

Policy urllib3() {
  Policy p;
  p.preset = "urllib3";
  // urllib3 util/retry.py: Retry.DEFAULT = Retry(3): 3 retries, 4 attempts.
  p.maxAttempts = 4;
  // backoff_factor = 0 by default: no sleep at all. With a factor f (set "base" to f) urllib3
  // 1.26.12 get_backoff_time sleeps 0 before the first retry, then f * 2^(n-1), at most
  // DEFAULT_BACKOFF_MAX 120 s (retry.py:243); no jitter. Measured with f = 0.2 s: 0, 0.4, 0.8 s.
  p.backoff = Backoff::Exponential;
  p.base = 0;
  p.multiplier = 2;
  p.cap = s(120);
  p.firstRetryImmediate = true;
  p.jitter = Jitter::None;
  // urllib3 has no timeout by default (Timeout.DEFAULT_TIMEOUT: the socket's, i.e. none).
  p.timeout = std::nullopt;
  p.deadline = std::nullopt;
  // Retries connection errors, read errors and, with respect_retry_after_header (default), 503
  // with Retry-After (RETRY_AFTER_STATUS_CODES 413/429/503, retry.py:235); status_forcelist is
  // empty, so 500 is not retried. Read errors and statuses are retried only for allowed_methods,
  // which excludes POST by default: this preset assumes allowed_methods=None (retry POST).
  p.retryOn = kConnectionError | kTimeout | kStatus503;
  // sleep_for_retry: sleeps exactly Retry-After (measured: 2.0 s for 2 s). 1.26 has no maximum;
  // 2.x clamps at retry_after_max 21600 s.
  p.retryAfter = RetryAfterMode::Replace;
  p.retryAfterCap = std::nullopt;
  p.overCap = OverCap::Clamp;
  return p;
}

Policy got() {
  Policy p;
  p.preset = "got";
  // got 14.6.6 retry.limit 2: 3 attempts.
  p.maxAttempts = 3;
  // No timeout by default (timeout: {}).
  p.timeout = std::nullopt;
  p.deadline = std::nullopt;
  // dist/source/core/calculate-retry-delay.js:26-27: min(2^(attemptCount-1) * 1000, backoffLimit
  // = Infinity) + random() * noise (100 ms): exponential 1 s x2, no cap, plus 0-100 ms added,
  // which the simulator has no shape for (jitter none; within the 10 % tolerance).
  p.backoff = Backoff::Exponential;
  p.base = s(1);
  p.multiplier = 2;
  p.cap = std::nullopt;
  p.jitter = Jitter::None;
  // statusCodes 408 413 429 500 502 503 504 521 522 524 (not 409), errorCodes ETIMEDOUT
  // ECONNRESET ...; retry.methods excludes POST by default: this preset assumes POST added.
  p.retryOn = kTimeout | kConnectionError | kStatus5xx;
  // Lines 14-21: Retry-After replaces the delay; above maxRetryAfter (default timeout.request)
  // the operation ends. Measured with timeout.request 1 s: 503 + Retry-After 2 s, no retry.
  p.retryAfter = RetryAfterMode::Replace;
  p.retryAfterCap = std::nullopt;  // = timeout.request; none by default
  p.overCap = OverCap::GiveUp;
  return p;
}

Policy axiosRetry() {
  Policy p;
  p.preset = "axios-retry";
  // axios-retry 4.5.0 dist/cjs/index.js:103 retries 3: 4 attempts.
  p.maxAttempts = 4;
  // axios has no timeout by default. With one, axios-retry (shouldResetTimeout false,
  // index.js:163-167) gives up when the elapsed time plus the next delay passes it: a deadline
  // over the whole operation. Set "timeout" and "deadline" both to axios' timeout.
  p.timeout = std::nullopt;
  p.deadline = std::nullopt;
  // exponentialDelay (index.js:83-88): max(2^retryNumber * 100 ms, Retry-After) + 0-20 %, the
  // first retry's retryNumber 1: 200, 400, 800 ms. Base 220 ms is the middle of the +0-20 % band.
  p.backoff = Backoff::Exponential;
  p.base = ms(220);
  p.multiplier = 2;
  p.cap = std::nullopt;
  p.jitter = Jitter::None;
  // isNetworkOrIdempotentRequestError (the default) never retries POST; this preset assumes
  // retryCondition isNetworkError || isRetryableError: connection errors and 5xx. A timeout
  // (ECONNABORTED) is not retried by either (measured).
  p.retryOn = kConnectionError | kStatus5xx;
  p.retryAfter = RetryAfterMode::Max;
  p.retryAfterCap = std::nullopt;
  return p;
}

Policy polly() {
  Policy p;
  p.preset = "polly";
  // Polly v8 RetryStrategyOptions: MaxRetryAttempts = 3, Delay = 2 s, BackoffType = Constant,
  // UseJitter = false, MaxDelay = null.
  p.maxAttempts = 4;
  p.backoff = Backoff::Constant;
  p.base = s(2);
  p.multiplier = 2;
  p.cap = std::nullopt;
  p.jitter = Jitter::None;
  // Polly's TimeoutStrategyOptions.Timeout default is 30 s (a timeout strategy inside the retry).
  p.timeout = s(30);
  p.deadline = std::nullopt;
  // ShouldHandle handles every exception except OperationCanceledException by default; for HTTP
  // this preset assumes the usual predicate: HttpRequestException (connection), the timeout
  // strategy's TimeoutRejectedException, and 5xx results.
  p.retryOn = kConnectionError | kTimeout | kStatus5xx;
  // Retry-After is used only with a custom DelayGenerator.
  p.retryAfter = RetryAfterMode::Ignore;
  p.retryAfterCap = std::nullopt;
  return p;
}

constexpr std::string_view kNotRunDotnet = "not run here (.NET is not installable on this machine): source reading";
constexpr std::string_view kNotRunGrpc =
    "not run here (gRPC core speaks HTTP/2 to a gRPC server; the endpoint is HTTP/1.1): source reading";

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all{
      {"stripe-node", "Stripe SDK for Node.js", "stripe-node cjs/RequestSender.js:192-248, stripe.core.js:102-104",
       "stripe-node 23.2.0 (npm stripe)", stripeNode()},
      {"stripe-python", "Stripe SDK for Python", "stripe-python stripe/http_client.py:92-94, 236-260",
       "stripe-python 5.0.0 (Debian python3-stripe)", stripePython()},
      {"aws-js-v3", "AWS SDK for JavaScript v3, standard mode (DynamoDB client)",
       "@smithy/core 3.41.1 dist-cjs/submodules/retry/index.js:115-121, 412-437, 477, 510-541; "
       "@aws-sdk/client-dynamodb dist-cjs/index.js:3584",
       "@aws-sdk/client-dynamodb 3.1178.0 (npm)", awsJsV3()},
      {"aws-js-v3-default", "AWS SDK for JavaScript v3, standard mode (every client but DynamoDB; measured on SQS)",
       "@smithy/core 3.41.1 dist-cjs/submodules/retry/index.js:414, 477",
       "@aws-sdk/client-sqs 3.1178.0 (npm)", awsJsV3Default()},
      {"aws-botocore", "AWS SDK for Python (botocore), standard mode",
       "botocore retries/standard.py:38, 253-267, 480-481; retries/quota.py:9",
       "botocore 1.29.27 (Debian python3-botocore)", awsBotocore()},
      {"urllib3", "urllib3 Retry (backoff_factor as base, POST allowed)",
       "urllib3 util/retry.py (1.26.12: lines 235, 243, get_backoff_time, sleep_for_retry)",
       "urllib3 1.26.12 (Debian python3-urllib3)", urllib3()},
      {"got", "got (POST allowed)", "got dist/source/core/calculate-retry-delay.js:1-28", "got 14.6.6 (npm)", got()},
      {"axios-retry", "axios-retry, exponentialDelay (POST allowed)",
       "axios-retry dist/cjs/index.js:83-88, 103, 163-167", "axios-retry 4.5.0 with axios 1.21.1 (npm)", axiosRetry()},
      {"grpc", "gRPC retry policy (gRFC A6 example) with retry throttling", "grpc/proposal A6-client-retries.md",
       kNotRunGrpc, grpc()},
      {"polly", "Polly v8 retry strategy defaults", "Polly RetryStrategyOptions, TimeoutStrategyOptions", kNotRunDotnet,
       polly()},
  };
  return all;
}

const std::vector<PresetAlias>& presetAliases() {
  static const std::vector<PresetAlias> all{{"stripe", "stripe-python"}, {"aws-standard", "aws-botocore"}};
  return all;
}

const Preset* findPreset(std::string_view name) {
  const auto& aliases = presetAliases();
  if (auto a = std::find_if(aliases.begin(), aliases.end(), [&](const PresetAlias& x) { return x.alias == name; });
      a != aliases.end())
    name = a->name;
  const auto& all = presets();
  auto it = std::find_if(all.begin(), all.end(), [&](const Preset& p) { return p.name == name; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace idem::sim
