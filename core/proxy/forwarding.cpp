#include "core/proxy/forwarding.h"

#include "core/http/connectionheader.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace idem::proxy {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool hopByHop(std::string_view name, const std::vector<std::string>& listed) {
  static constexpr std::string_view kFixed[] = {
      "connection", "keep-alive", "te", "transfer-encoding", "upgrade", "content-length", "host", "expect", "trailer"};
  const std::string n = lower(name);
  if (n.starts_with("proxy-")) return true;  // Proxy-Connection, Proxy-Authorization, ...
  return std::find(std::begin(kFixed), std::end(kFixed), n) != std::end(kFixed) ||
         std::find(listed.begin(), listed.end(), n) != listed.end();
}

// RFC 7239 node: an IPv6 address is bracketed and the whole value quoted.
std::string forwardedNode(const std::string& address) {
  if (address.find(':') == std::string::npos) return address;
  return "\"[" + address + "]\"";
}

// Headers in which a client speaks about earlier hops (de-facto X-Forwarded-*, X-Real-IP, RFC 7239).
bool forwardingHeader(std::string_view name) {
  const std::string n = lower(name);
  return n == "forwarded" || n == "x-real-ip" || n.starts_with("x-forwarded-");
}

}  // namespace

http::Headers endToEnd(const http::Headers& headers) {
  const auto listed = http::connectionOptions(headers);
  http::Headers out;
  out.reserve(headers.size());
  for (const auto& h : headers)
    if (!hopByHop(h.first, listed)) out.push_back(h);
  return out;
}

http::Headers towardsUpstream(const http::Headers& fromClient, const ForwardedFor& who) {
  http::Headers out;
  std::string forwardedFor;
  bool hasProto = false;
  bool hasHost = false;
  std::string forwarded;
  for (auto& [name, value] : endToEnd(fromClient)) {
    // The proxy names the request itself; a client's own Request-Id would be ambiguous in logs.
    if (http::equalsIgnoreCase(name, "Request-Id")) continue;
    if (who.key && http::equalsIgnoreCase(name, "Idempotency-Key")) continue;
    // An enforced answer is stored for every retry, whose client may accept other encodings than
    // this one's: the service is asked for the identity body.
    if (who.key && http::equalsIgnoreCase(name, "Accept-Encoding")) continue;
    if (!who.trustedHop && forwardingHeader(name)) continue;  // a client's claim, not the proxy's word
    if (http::equalsIgnoreCase(name, "X-Forwarded-For")) {
      forwardedFor += (forwardedFor.empty() ? "" : ", ") + value;
      continue;
    }
    if (http::equalsIgnoreCase(name, "Forwarded")) {
      forwarded += (forwarded.empty() ? "" : ", ") + value;
      continue;
    }
    hasProto = hasProto || http::equalsIgnoreCase(name, "X-Forwarded-Proto");
    hasHost = hasHost || http::equalsIgnoreCase(name, "X-Forwarded-Host");
    out.emplace_back(name, value);
  }
  const auto host = http::findHeader(fromClient, "Host");
  // Each proxy appends the peer it heard from; what came before is the earlier hops' word.
  out.emplace_back("X-Forwarded-For", forwardedFor.empty() ? who.remote : forwardedFor + ", " + who.remote);
  if (!hasProto) out.emplace_back("X-Forwarded-Proto", "http");
  if (!hasHost && host) out.emplace_back("X-Forwarded-Host", std::string(*host));
  std::string element = "for=" + forwardedNode(who.remote) + ";proto=http";
  if (host && !host->empty() && host->find_first_of("\";,\\") == std::string_view::npos)
    element += ";host=\"" + std::string(*host) + "\"";
  out.emplace_back("Forwarded", forwarded.empty() ? element : forwarded + ", " + element);
  out.emplace_back("Request-Id", who.requestId);
  if (who.key) out.emplace_back("Idempotency-Key", *who.key);
  return out;
}

}  // namespace idem::proxy
