#include "core/gate/trustedpeers.h"

#include <boost/asio/ip/address.hpp>


namespace idem::gate {
namespace {

std::optional<std::vector<unsigned char>> addressBytes(const std::string& text) {
  boost::system::error_code ec;
  auto a = boost::asio::ip::make_address(text, ec);
  if (ec) return std::nullopt;
  // An IPv4 peer on a dual-stack socket arrives as ::ffff:a.b.c.d: compare it as IPv4.
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    a = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, a.to_v6());
  if (a.is_v4()) {
    const auto b = a.to_v4().to_bytes();
    return std::vector<unsigned char>(b.begin(), b.end());
  }
  const auto b = a.to_v6().to_bytes();
  return std::vector<unsigned char>(b.begin(), b.end());
}

}  // namespace

std::optional<TrustedPeers> TrustedPeers::parse(const std::vector<std::string>& entries, std::string& error) {
  TrustedPeers out;
  for (const auto& entry : entries) {
    if (entry == "any") {
      out.m_any = true;
      continue;
    }
    const auto slash = entry.find('/');
    auto bytes = addressBytes(entry.substr(0, slash));
    int prefix = bytes ? static_cast<int>(bytes->size() * 8) : 0;
    bool ok = bytes.has_value();
    if (ok && slash != std::string::npos) {
      const std::string bits = entry.substr(slash + 1);
      ok = !bits.empty() && bits.size() <= 3 && bits.find_first_not_of("0123456789") == std::string::npos &&
           std::stoi(bits) <= prefix;
      if (ok) prefix = std::stoi(bits);
    }
    if (!ok) {
      error = "\"" + entry + "\" is not an address or CIDR range (e.g. 10.0.0.0/8, 192.0.2.7, ::1/128, or any)";
      return std::nullopt;
    }
    out.m_ranges.push_back({std::move(*bytes), prefix});
  }
  return out;
}

bool TrustedPeers::contains(const std::string& address) const {
  if (m_any) return true;
  const auto bytes = addressBytes(address);
  if (!bytes) return false;
  for (const auto& r : m_ranges) {
    if (r.bytes.size() != bytes->size()) continue;
    bool match = true;
    for (int bit = 0; bit < r.prefix && match; ++bit) {
      const unsigned char mask = static_cast<unsigned char>(0x80u >> (bit % 8));
      match = (r.bytes[bit / 8] & mask) == ((*bytes)[bit / 8] & mask);
    }
    if (match) return true;
  }
  return false;
}

bool isLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const auto a = boost::asio::ip::make_address(host, ec);
  return !ec && a.is_loopback();
}

}  // namespace idem::gate
