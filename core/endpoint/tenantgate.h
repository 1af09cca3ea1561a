#pragma once
// A tenant header is the gateway's word only when it comes from the gateway: with
// --trusted-peers, a request carrying the tenant header from any other peer is refused (403,
// nothing executed or forwarded) before the service or the proxy sees it.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/policy/policy.h"
#include "core/server/handler.h"

namespace idem::endpoint {

/// A set of address ranges ("10.0.0.0/8", "127.0.0.1", "::1/128"); "any" trusts every peer.
class TrustedPeers {
 public:
  /// nullopt and `error` set when an entry is not an address or CIDR range.
  static std::optional<TrustedPeers> parse(const std::vector<std::string>& entries, std::string& error);
  [[nodiscard]] bool contains(const std::string& address) const;
  [[nodiscard]] bool empty() const { return m_ranges.empty() && !m_any; }

 private:
  struct Range {
    std::vector<unsigned char> bytes;  // 4 or 16
    int prefix = 0;
  };
  std::vector<Range> m_ranges;
  bool m_any = false;
};

/// True for 127.0.0.0/8, ::1 and "localhost": a listener only this machine reaches.
[[nodiscard]] bool isLoopbackHost(const std::string& host);

class TenantGate : public server::Handler {
 public:
  TenantGate(server::Handler& inner, const policy::Policy& policy, TrustedPeers peers);
  [[nodiscard]] server::Handled handle(const server::Request& request) override;
  /// The refusal is answered on the loop; anything else goes to the inner handler's start().
  bool start(server::Request& request, const server::Dispatch& where, server::Done& done) override;
  void stopping() override { m_inner.stopping(); }
  [[nodiscard]] server::Metrics& metrics() override { return m_inner.metrics(); }
  void finish() override { m_inner.finish(); }
  [[nodiscard]] std::string metricsText() const override { return m_inner.metricsText(); }

 private:
  /// The 403 for a tenant header from an untrusted peer; nullopt when the request may go on.
  [[nodiscard]] std::optional<server::Handled> refusal(const server::Request& request) const;

  server::Handler& m_inner;
  const policy::Policy& m_policy;
  TrustedPeers m_peers;
};

}  // namespace idem::endpoint
