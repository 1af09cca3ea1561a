#pragma once
// What the enforcer's two halves share (enforcer.cpp decides a request, enforcer_complete.cpp
// stores its outcome): private to core/enforce.
#include <chrono>
#include <exception>
#include <string>
#include <string_view>

#include "core/http/headers.h"
#include "core/policy/policy.h"
#include "core/store/pg.h"

namespace idem::enforce::detail {

using Clock = std::chrono::steady_clock;

inline double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

inline bool allowedOnReplay(const policy::Tier& tier, std::string_view name) {
  // The body's encoding belongs to the stored bytes: without it a replay cannot be read.
  if (http::equalsIgnoreCase(name, "Content-Encoding")) return true;
  const auto& allow = tier.replayHeaders.empty() ? policy::defaultReplayHeaders() : tier.replayHeaders;
  for (const auto& a : allow)
    if (http::equalsIgnoreCase(a, name)) return true;
  return false;
}

inline std::string describe(const std::exception& e) {
  if (const auto* q = dynamic_cast<const pg::QueryError*>(&e)) return "SQLSTATE " + q->sqlstate() + ": " + q->what();
  return e.what();
}

}  // namespace idem::enforce::detail
