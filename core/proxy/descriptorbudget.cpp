#include "core/proxy/descriptorbudget.h"

#include <sys/resource.h>

#include "core/proxy/upstream.h"

namespace idem::proxy {
namespace {
constexpr std::size_t kReserve = 64;  // listeners, trace writer, logs, resolver, the store's own checks
}

DescriptorBudget planDescriptors(const DescriptorNeeds& needs, std::optional<std::size_t> limit) {
  DescriptorBudget b;
  if (!limit) {
    rlimit r{};
    if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return b;
    limit = static_cast<std::size_t>(r.rlim_cur);
  }
  b.limit = *limit;
  const std::size_t upstream = needs.upstreamConnections * kDescriptorsPerUpstreamConnection;
  const std::size_t fixed = kReserve + needs.storeConnections + needs.loopStoreConnections + upstream;
  if (b.limit < fixed + needs.minClientConnections) {
    b.refusal = "the process may open " + std::to_string(b.limit) + " descriptors (ulimit -n, systemd LimitNOFILE=), " +
                "but --upstream-connections " + std::to_string(needs.upstreamConnections) + " needs " +
                std::to_string(upstream) + ", --pool " + std::to_string(needs.storeConnections) + " needs " +
                std::to_string(needs.storeConnections) + ", " +
                (needs.loopStoreConnections > 0 ? "the store writes from the event loop (--store-writes loop) need up to " +
                                                      std::to_string(needs.loopStoreConnections) + ", "
                                                : std::string()) +
                std::to_string(kReserve) + " are reserved and at least " +
                std::to_string(needs.minClientConnections) + " client connections need one each (" +
                std::to_string(fixed + needs.minClientConnections) +
                " in all): raise the limit or lower --upstream-connections or --pool";
    return b;
  }
  b.clientConnections = b.limit - fixed;
  return b;
}

}  // namespace idem::proxy
