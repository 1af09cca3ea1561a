// The config's causes of duplicates a key cannot catch: cross-key detection in the store, an
// intermediary that retries on its own, hedged requests (core/sim/README.md, "Causes").
#include <string>

#include "core/sim/config_reader.h"

namespace idem::sim::config_detail {

namespace {

constexpr Named<CrossKey::Mode> kCrossKeyModes[] = {{"off", CrossKey::Mode::Off},
                                                    {"observe", CrossKey::Mode::Observe},
                                                    {"hold", CrossKey::Mode::Hold},
                                                    {"reject", CrossKey::Mode::Reject}};

/// An intermediary's retry rules before any field is read: Envoy's router backoff (25 ms base,
/// at most 10 × base, full jitter), no Retry-After, no budget, retries on a failed connection
/// and 503 (Istio's retriable status code).
Policy meshDefaults() {
  Policy p;
  p.maxAttempts = 3;
  p.timeout = std::nullopt;
  p.deadline = std::nullopt;
  p.backoff = Backoff::Exponential;
  p.jitter = Jitter::Full;
  p.base = 25 * kUsecPerMs;
  p.multiplier = 2;
  p.cap = 250 * kUsecPerMs;
  p.retryOn = kConnectionError | kStatus503;
  p.retryAfter = RetryAfterMode::Ignore;
  return p;
}

struct MeshPreset {
  std::string_view name;
  int retries;
  unsigned retryOn;
};

// istio: a VirtualService without `retries` (2 retries on connect-failure, refused-stream,
// unavailable, cancelled and retriable-status-codes = 503). envoy-retriable-4xx: Envoy's
// default num_retries 1 with retry_on "5xx,retriable-4xx,connect-failure" — retriable-4xx is
// exactly 409, Idem's own "in progress" answer.
constexpr MeshPreset kMeshPresets[] = {
    {"istio", 2, kConnectionError | kStatus503},
    {"envoy-retriable-4xx", 1, kConnectionError | kStatus5xx | kConflict409},
};

}  // namespace

CrossKey parseCrossKey(const json& value, const std::string& path) {
  Reader r(value, path);
  CrossKey c;
  r.choice("mode", kCrossKeyModes, c.mode);
  r.duration("window", c.window, true);
  r.finish();
  return c;
}

Intermediary parseIntermediary(const json& value) {
  Intermediary m;
  if (value.is_null()) return m;
  Reader r(value, "intermediary");
  m.enabled = true;
  m.retry = meshDefaults();
  if (r.has("preset")) {
    const json& name = r.at("preset");
    const MeshPreset* found = nullptr;
    for (const auto& pr : kMeshPresets)
      if (name.is_string() && name.get<std::string>() == pr.name) found = &pr;
    if (!found) throw ConfigError(r.field("preset"), "must be one of istio | envoy-retriable-4xx");
    m.preset = found->name;
    m.retry.maxAttempts = 1 + found->retries;
    m.retry.retryOn = found->retryOn;
  }
  if (r.has("max_retries")) {
    int retries = 0;
    r.integer("max_retries", retries, 0, 10);
    m.retry.maxAttempts = 1 + retries;
  }
  if (r.has("retry_on")) m.retry.retryOn = parseRetryOn(r);
  if ((m.retry.retryOn & kTimeout) != 0)
    throw ConfigError(r.field("retry_on"), "an intermediary has no per-try timeout here: leave out \"timeout\"");
  r.choice("backoff", kBackoffs, m.retry.backoff);
  r.choice("jitter", kJitters, m.retry.jitter);
  r.duration("base", m.retry.base);
  r.number("multiplier", m.retry.multiplier, 1, 1000, "a number from 1 to 1000");
  r.optionalDuration("cap", m.retry.cap, false);
  r.choice("retry_after", kRetryAfterModes, m.retry.retryAfter);
  parseBudget(r, m.retry.budget);
  r.finish();
  return m;
}

Hedging parseHedging(const json& value) {
  Hedging h;
  if (value.is_null()) return h;
  Reader r(value, "hedging");
  h.enabled = true;
  r.duration("delay", h.delay, true);
  r.integer("max_copies", h.maxCopies, 2, 5);  // gRPC caps hedged attempts at 5
  if (r.has("non_fatal")) h.nonFatal = parseRetryOn(r, "non_fatal");
  if ((h.nonFatal & kTimeout) != 0)
    throw ConfigError(r.field("non_fatal"), "a timeout ends the attempt: leave out \"timeout\"");
  r.finish();
  return h;
}

nlohmann::ordered_json crossKeyToJson(const CrossKey& c) {
  return {{"mode", nameOf(kCrossKeyModes, c.mode)}, {"window", formatDuration(c.window)}};
}

nlohmann::ordered_json intermediaryToJson(const Intermediary& i) {
  nlohmann::ordered_json j;
  if (!i.preset.empty()) j["preset"] = i.preset;
  j["max_retries"] = i.retry.maxAttempts - 1;
  j["retry_on"] = outcomeNames(i.retry.retryOn);
  j["backoff"] = nameOf(kBackoffs, i.retry.backoff);
  j["jitter"] = nameOf(kJitters, i.retry.jitter);
  j["base"] = formatDuration(i.retry.base);
  j["multiplier"] = i.retry.multiplier;
  j["cap"] = i.retry.cap ? nlohmann::ordered_json(formatDuration(*i.retry.cap)) : nlohmann::ordered_json(nullptr);
  j["retry_after"] = nameOf(kRetryAfterModes, i.retry.retryAfter);
  j["budget"] = budgetToJson(i.retry.budget);
  return j;
}

nlohmann::ordered_json hedgingToJson(const Hedging& h) {
  return {{"delay", formatDuration(h.delay)}, {"max_copies", h.maxCopies}, {"non_fatal", outcomeNames(h.nonFatal)}};
}

}  // namespace idem::sim::config_detail

namespace idem::sim {
std::string_view crossKeyModeName(CrossKey::Mode m) { return config_detail::nameOf(config_detail::kCrossKeyModes, m); }
}  // namespace idem::sim
