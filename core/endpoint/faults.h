#pragma once
// Fault injection for the test endpoint (docs/design.md §5), honoured only when the server was started
// with --allow-fault-injection:
//   Sim-Delay-Ms: N      execution takes N ms (0..60000) while the key is processing
//   Sim-Fail: before     fails before execution starts: the claim is released, nothing stored
//   Sim-Fail: after      execution started, then 500: stored and replayed; the ledger row
//                        says status "failed" (the charge may or may not have happened)
// Without the flag a request carrying either header is answered 400 (nothing stored), so a
// forgotten flag is noticed instead of silently testing nothing.
#include <chrono>
#include <optional>
#include <string>

#include "core/http/headers.h"

namespace idem::endpoint {

inline constexpr const char* kSimDelayHeader = "Sim-Delay-Ms";
inline constexpr const char* kSimFailHeader = "Sim-Fail";
inline constexpr long long kMaxSimDelayMs = 60'000;

struct Faults {
  std::chrono::milliseconds delay{0};
  bool failBefore = false;
  bool failAfter = false;
};

struct FaultParse {
  Faults faults;
  std::optional<std::string> error;  // set: answer 400 with this detail
};

[[nodiscard]] FaultParse parseFaults(const http::Headers& headers, bool allowed);

}  // namespace idem::endpoint
