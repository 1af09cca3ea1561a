// Presets: each default below carries where it was read. Values describe the library's own
// defaults; where a library needs one choice made to retry a POST at all, the comment says so.
#include "core/sim/presets.h"

#include <algorithm>

namespace idem::sim {

namespace {

constexpr Usec ms(std::int64_t v) { return v * kUsecPerMs; }
constexpr Usec s(std::int64_t v) { return v * kUsecPerSecond; }

Policy stripe() {
  Policy p;
  p.preset = "stripe";
  // stripe-python stripe/__init__.py: max_network_retries = 2 (3 attempts); stripe-node's
  // maxNetworkRetries defaults to 2 as well.
  p.maxAttempts = 3;
  // stripe-python RequestsClient timeout = 80 s; stripe-node DEFAULT_TIMEOUT = 80000 ms.
  p.timeout = s(80);
  p.deadline = std::nullopt;  // no overall deadline in either SDK
  // _http_client.py HTTPClient._sleep_time_seconds: min(INITIAL_DELAY * 2^(n-1), MAX_DELAY)
  // with INITIAL_DELAY = 0.5 s and MAX_DELAY = 5 s (stripe-node: INITIAL_NETWORK_RETRY_DELAY_SEC
  // 0.5, MAX_NETWORK_RETRY_DELAY_SEC 5 in current releases, 2 in old ones).
  p.backoff = Backoff::Exponential;
  p.base = ms(500);
  p.multiplier = 2;
  p.cap = s(5);
  // _add_jitter_time: sleep *= 0.5 * (1 + uniform(0, 1)), i.e. uniform in [b/2, b]: Brooker's
  // "equal jitter"; then "never sleep less than the base": max(INITIAL_DELAY, sleep).
  p.jitter = Jitter::Equal;
  p.minDelay = ms(500);
  // _should_retry: connection errors and timeouts (APIConnectionError.should_retry), 409, >= 500.
  p.retryOn = kTimeout | kConnectionError | kConflict409 | kStatus5xx;
  // stripe-python honours Retry-After as a floor when it is <= MAX_RETRY_AFTER = 60 s and ignores
  // larger values. stripe-node does not read Retry-After (set "retry_after": "ignore" for it).
  p.retryAfter = RetryAfterMode::Max;
  p.retryAfterCap = s(60);
  p.overCap = OverCap::Ignore;
  return p;
}

Policy awsStandard() {
  Policy p;
  p.preset = "aws-standard";
  // AWS SDKs and Tools Reference Guide, "Retry behavior": standard mode makes 3 attempts.
  p.maxAttempts = 3;
  // botocore: read_timeout and connect_timeout default to 60 s.
  p.timeout = s(60);
  p.deadline = std::nullopt;
  // botocore retries/standard.py ExponentialBackoff (mode 2.0): rand(0,1) * min(2^(attempt-1), 20):
  // full jitter, base 1 s, multiplier 2, MAX_BACKOFF 20 s. (AWS SDK for JavaScript v3 uses a
  // 100 ms base: @aws-sdk/middleware-retry DEFAULT_RETRY_DELAY_BASE.)
  p.backoff = Backoff::Exponential;
  p.jitter = Jitter::Full;
  p.base = s(1);
  p.multiplier = 2;
  p.cap = s(20);
  // TransientRetryableChecker: connection errors, timeouts, HTTP 500/502/503/504. 409 is not retried.
  p.retryOn = kTimeout | kConnectionError | kStatus5xx;
  // Standard mode 2.0 does not read Retry-After.
  p.retryAfter = RetryAfterMode::Ignore;
  p.retryAfterCap = std::nullopt;
  // Retry quota (botocore retries/quota.py, @aws-sdk/middleware-retry constants):
  // INITIAL_RETRY_TOKENS 500, RETRY_COST 5, TIMEOUT_RETRY_COST 10, NO_RETRY_INCREMENT 1;
  // a successful operation gives back what its last retry cost.
  p.budget.type = Budget::Type::TokenBucket;
  p.budget.style = Budget::Style::Aws;
  p.budget.maxTokens = 500;
  p.budget.retryCost = 5;
  p.budget.timeoutCost = 10;
  p.budget.successCredit = 1;
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
  // urllib3 2.x util/retry.py: Retry.DEFAULT = Retry(3): 3 retries, 4 attempts.
  p.maxAttempts = 4;
  // backoff_factor = 0 by default: no sleep at all. With a factor f urllib3 sleeps 0 before the
  // first retry, then f * 2^(n-1), at most backoff_max = 120 s (DEFAULT_BACKOFF_MAX);
  // backoff_jitter = 0.0. Override "base" with f to get urllib3's curve.
  p.backoff = Backoff::Exponential;
  p.base = 0;
  p.multiplier = 2;
  p.cap = s(120);
  p.firstRetryImmediate = true;
  p.jitter = Jitter::None;
  // urllib3 has no timeout by default (Timeout.DEFAULT_TIMEOUT: the socket's, i.e. none).
  p.timeout = std::nullopt;
  p.deadline = std::nullopt;
  // Retries connection errors, read errors and, with respect_retry_after_header = True (default),
  // 413/429/503 that carry Retry-After (RETRY_AFTER_STATUS_CODES); status_forcelist is empty, so
  // 500 is not retried. Read errors and statuses are retried only for allowed_methods, which
  // excludes POST by default: this preset assumes allowed_methods=None (retry POST), which the
  // Idempotency-Key makes safe.
  p.retryOn = kConnectionError | kTimeout | kStatus503;
  // sleep_for_retry: sleep exactly Retry-After when present, clamped at retry_after_max =
  // DEFAULT_RETRY_AFTER_MAX = 21600 s (6 h; older releases had no maximum).
  p.retryAfter = RetryAfterMode::Replace;
  p.retryAfterCap = s(21600);
  p.overCap = OverCap::Clamp;
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

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all{
      {"stripe", "Stripe SDK (stripe-python, stripe-node)",
       "stripe-python stripe/_http_client.py and stripe/__init__.py; stripe-node src/RequestSender.ts", stripe()},
      {"aws-standard", "AWS SDK, standard retry mode",
       "AWS SDKs and Tools Reference Guide, Retry behavior; botocore retries/standard.py and quota.py", awsStandard()},
      {"grpc", "gRPC retry policy (gRFC A6 example) with retry throttling", "grpc/proposal A6-client-retries.md",
       grpc()},
      {"urllib3", "urllib3 Retry defaults, Retry-After respected", "urllib3 src/urllib3/util/retry.py (2.x)",
       urllib3()},
      {"polly", "Polly v8 retry strategy defaults", "Polly RetryStrategyOptions, TimeoutStrategyOptions", polly()},
  };
  return all;
}

const Preset* findPreset(std::string_view name) {
  const auto& all = presets();
  auto it = std::find_if(all.begin(), all.end(), [&](const Preset& p) { return p.name == name; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace idem::sim
