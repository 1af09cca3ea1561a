#pragma once
// An enforcement stack over a real database for tests: pool, key store, trace writer, enforcer.
#include <memory>
#include <string>

#include "core/enforce/enforcer.h"
#include "core/policy/policy.h"
#include "core/store/keystore.h"
#include "core/store/pool.h"
#include "core/trace/tracewriter.h"

namespace idem::test {

/// The policy the enforcement tests run with: one tier per behaviour under test.
extern const char* const kTestPolicy;

struct Harness {
  explicit Harness(const std::string& conninfo, const std::string& policyText = kTestPolicy, int poolSize = 8);
  ~Harness();

  policy::Policy policy;
  store::Pool pool;
  store::KeyStore store;
  trace::TraceWriter trace;
  enforce::Enforcer enforcer;

  /// A POST with an optional key (sent bare) and the caller's tenant (none when empty).
  static enforce::Request post(const std::string& path, const std::string& key, const std::string& body,
                               const std::string& tenant = "acct_1");
  /// begin(); on Execute, completes with `status` and a body naming the generation.
  enforce::Response roundTrip(const enforce::Request& request, int status = 201, int* executions = nullptr);
};

/// The value of a header in a response, or "" when absent.
std::string header(const enforce::Response& r, const std::string& name);

}  // namespace idem::test
