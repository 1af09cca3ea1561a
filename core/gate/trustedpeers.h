#pragma once
// Which peers are the gateway: with --trusted-peers, a request carrying the tenant header from
// any other peer is refused (403, nothing executed or forwarded) by the gate (gate.h), and the
// proxy keeps forwarding headers (X-Forwarded-*) only from these peers.
#include <optional>
#include <string>
#include <vector>


namespace idem::gate {

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

}  // namespace idem::gate
