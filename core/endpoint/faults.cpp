#include "core/endpoint/faults.h"

#include <charconv>

namespace idem::endpoint {

FaultParse parseFaults(const http::Headers& headers, bool allowed) {
  FaultParse out;
  const auto delay = http::findHeader(headers, kSimDelayHeader);
  const auto fail = http::findHeader(headers, kSimFailHeader);
  if (!delay && !fail) return out;
  if (!allowed) {
    out.error = std::string("Fault injection headers (") + kSimDelayHeader + ", " + kSimFailHeader +
                ") are disabled on this server; start it with `idemctl serve --allow-fault-injection` to use them, "
                "or drop the headers. Nothing was executed or stored.";
    return out;
  }
  if (delay) {
    long long ms = -1;
    auto [ptr, ec] = std::from_chars(delay->data(), delay->data() + delay->size(), ms);
    if (ec != std::errc{} || ptr != delay->data() + delay->size() || ms < 0 || ms > kMaxSimDelayMs) {
      out.error = std::string(kSimDelayHeader) + " must be a whole number of milliseconds from 0 to " +
                  std::to_string(kMaxSimDelayMs) + ".";
      return out;
    }
    out.faults.delay = std::chrono::milliseconds(ms);
  }
  if (fail) {
    if (*fail == "before") {
      out.faults.failBefore = true;
    } else if (*fail == "after") {
      out.faults.failAfter = true;
    } else {
      out.error = std::string(kSimFailHeader) + " must be \"before\" or \"after\".";
    }
  }
  return out;
}

}  // namespace idem::endpoint
