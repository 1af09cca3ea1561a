#pragma once
// One key's claim and completion as the write-path suites send them (tst_writebatches,
// tst_asyncwrites): tenant acct_1, POST /v1/payments, tier payments, a day's TTL and a 30 s
// lease; the completion stores the key's own 201 answer naming pay_<key>.
#include <string>

#include "core/store/keystore.h"

namespace idem::test {

inline const std::string kPaymentsEndpoint = "POST /v1/payments";

inline store::ClaimRequest paymentClaim(const std::string& key, const std::string& fingerprint = "fp-1") {
  using namespace std::chrono_literals;
  store::ClaimRequest q;
  q.scope = {"acct_1", kPaymentsEndpoint, key};
  q.fingerprint = fingerprint;
  q.tier = "payments";
  q.ttl = 24h;
  q.lease = 30s;
  q.archiveRetention = 24h * 400;
  q.requestId = "req_" + key + "_" + fingerprint;
  return q;
}

inline store::CompleteRequest paymentCompletion(const std::string& key, const std::string& token) {
  store::CompleteRequest c;
  c.scope = {"acct_1", kPaymentsEndpoint, key};
  c.leaseToken = token;
  c.response.status = 201;
  c.response.headers = {{"Content-Type", "application/json"}};
  c.response.body = R"({"id":"pay_)" + key + R"("})";
  c.resourceRef = "pay_" + key;
  c.requestId = "req_" + key;
  return c;
}

}  // namespace idem::test
