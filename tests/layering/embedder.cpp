// What an embedder writes: its own HTTP stack in front of idem_core's enforcer. Linked with
// idem_core only; tst_layering's nm check proves the binary carries no simulator, endpoint,
// demo, cluster or tiers code. Usage: idem-embedder-example <conninfo> <policy.json> <path>
#include <cstdio>
#include <exception>

#include "core/enforce/enforcer.h"
#include "core/policy/policy.h"
#include "core/store/keystore.h"
#include "core/store/pool.h"
#include "core/trace/tracewriter.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <conninfo> <policy.json> <path>\n", argv[0]);
    return 2;
  }
  try {
    const idem::policy::Policy policy = idem::policy::loadPolicyFile(argv[2]);
    idem::store::Pool pool(argv[1], 2);
    idem::store::KeyStore store(pool);
    idem::trace::TraceWriter trace(pool);
    idem::enforce::Enforcer enforcer(policy, 1, store, trace);
    idem::enforce::Request request;
    request.method = "POST";
    request.path = argv[3];
    request.headers.emplace_back("Idempotency-Key", "embedder-example-1");
    idem::enforce::Decision decision = enforcer.begin(request);
    if (decision.kind == idem::enforce::Decision::Kind::Execute) {
      const idem::enforce::Response sent = enforcer.complete(*decision.ticket, {201, {}, "{}"});
      std::printf("executed %d\n", sent.status);
    } else {
      std::printf("respond %d\n", decision.response.status);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
