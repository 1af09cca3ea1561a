// JSON -> SimConfig, field by field, with errors that name the field.
#include "core/sim/config_parse.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "core/sim/config_reader.h"
#include "core/sim/presets.h"

namespace idem::sim {

namespace {

using namespace config_detail;

Budget defaultBudget(Budget::Type type, Budget::Style style) {
  Budget b;
  b.type = type;
  b.style = style;
  if (type == Budget::Type::TokenBucket && style == Budget::Style::Aws) b.maxTokens = 500;
  return b;
}

Policy parsePolicy(const json& value) {
  Reader r(value, "policy");
  Policy p;
  if (r.has("preset")) {
    const json& name = r.at("preset");
    const Preset* preset = name.is_string() ? findPreset(name.get<std::string>()) : nullptr;
    if (!preset) {
      std::string names;
      for (const auto& pr : presets()) names += (names.empty() ? "" : " | ") + std::string(pr.name);
      for (const auto& a : presetAliases()) names += " | " + std::string(a.alias) + " (= " + std::string(a.name) + ")";
      throw ConfigError(r.field("preset"), "must be one of " + names);
    }
    p = preset->policy;
    p.preset = name.get<std::string>();  // an old name (alias) stays as written, and loads again
  }
  r.integer("max_attempts", p.maxAttempts, 1, 100);
  r.optionalDuration("timeout", p.timeout, true);
  r.optionalDuration("deadline", p.deadline, true);
  r.choice("backoff", kBackoffs, p.backoff);
  r.choice("jitter", kJitters, p.jitter);
  r.duration("base", p.base);
  r.number("multiplier", p.multiplier, 1, 1000, "a number from 1 to 1000");
  r.optionalDuration("cap", p.cap, false);
  r.duration("min_delay", p.minDelay);
  r.boolean("first_retry_immediate", p.firstRetryImmediate);
  if (r.has("retry_on")) p.retryOn = parseRetryOn(r);
  r.choice("retry_after", kRetryAfterModes, p.retryAfter);
  r.optionalDuration("retry_after_cap", p.retryAfterCap, false);
  r.choice("retry_after_over_cap", kOverCaps, p.overCap);
  parseBudget(r, p.budget);
  r.finish();
  return p;
}

ServerEvent parseEvent(const json& value, const std::string& path) {
  Reader r(value, path);
  ServerEvent e;
  if (!r.has("at")) throw ConfigError(r.field("at"), "is required (when the event starts, e.g. \"20s\")");
  r.duration("at", e.at);
  if (!r.has("duration")) throw ConfigError(r.field("duration"), "is required (e.g. \"5s\")");
  r.duration("duration", e.duration, true);
  r.number("extra_rate_per_s", e.extraRatePerSecond, 0, 1e9, "a number >= 0 (extra operations per second)");
  r.boolean("outage", e.outage);
  if (r.has("outage_fraction")) {
    if (!e.outage) throw ConfigError(r.field("outage_fraction"), "needs \"outage\": true beside it");
    r.number("outage_fraction", e.outageFraction, 0, 1, "a share from 0 to 1");
  }
  if (r.has("outage_status")) {
    const json& s = r.at("outage_status");
    if (s == 503) {
      e.outageConnectionError = false;
    } else if (s == "connection_error") {
      e.outageConnectionError = true;
    } else {
      throw ConfigError(r.field("outage_status"), "must be 503 or \"connection_error\"");
    }
  }
  if (r.has("retry_after")) e.retryAfter = r.durationValue("retry_after", false);
  if (r.has("failure_rate")) {
    double rate = 0;
    r.number("failure_rate", rate, 0, 1, "a probability from 0 to 1");
    e.failureRate = rate;
  }
  if (!e.outage && e.extraRatePerSecond == 0 && !e.failureRate && !e.retryAfter)
    throw ConfigError(path, "does nothing: give extra_rate_per_s, \"outage\": true, failure_rate or retry_after");
  r.finish();
  return e;
}

Server parseServer(const json& value) {
  Reader r(value, "server");
  Server s;
  if (r.has("latency")) {
    Reader l(r.at("latency"), r.field("latency"));
    l.duration("median", s.latencyMedian, true);
    l.duration("p99", s.latencyP99, true);
    if (s.latencyP99 < s.latencyMedian) throw ConfigError(l.field("p99"), "must not be below the median");
    l.finish();
  }
  r.duration("fast_latency", s.fastLatency);
  r.number("failure_rate", s.failureRate, 0, 1, "a probability from 0 to 1");
  if (r.has("failure_status")) {
    const json& st = r.at("failure_status");
    if (st != 500 && st != 503) throw ConfigError(r.field("failure_status"), "must be 500 or 503");
    s.failureStatus = st.get<int>();
  }
  r.number("connection_error_rate", s.connectionErrorRate, 0, 1, "a probability from 0 to 1");
  r.number("lost_response_rate", s.lostResponseRate, 0, 1, "a probability from 0 to 1");
  r.number("capacity_rps", s.capacityRps, 0, 1e9, "a number >= 0 (requests per second; 0 = unlimited)");
  r.duration("retry_after", s.retryAfter);
  r.duration("conflict_retry_after", s.conflictRetryAfter);
  if (r.has("events")) {
    const json& list = r.at("events");
    if (!list.is_array()) throw ConfigError(r.field("events"), "must be a list of events");
    for (std::size_t i = 0; i < list.size(); ++i)
      s.events.push_back(parseEvent(list[i], r.field("events") + "[" + std::to_string(i) + "]"));
  }
  r.finish();
  return s;
}

Store parseStore(const json& value) {
  Reader r(value, "store");
  Store st;
  r.duration("ttl", st.ttl, true);
  r.optionalDuration("lease", st.lease, true);
  r.duration("purge_lag", st.purgeLag);
  r.choice("stored_at", kStoredAts, st.storedAt);
  if (r.has("cross_key")) st.crossKey = parseCrossKey(r.at("cross_key"), r.field("cross_key"));
  r.finish();
  return st;
}

Clients parseClients(const json& value) {
  Reader r(value, "clients");
  Clients c;
  r.integer("operations", c.operations, 1, 100'000'000);
  r.number("arrival_rate_per_s", c.arrivalRatePerSecond, 1e-6, 1e9, "a number > 0 (operations per second)");
  r.integer("client_objects", c.clientObjects, 1, 1'000'000);
  r.number("new_key_on_retry", c.newKeyOnRetry, 0, 1, "a probability from 0 to 1");
  r.number("same_body_share", c.sameBodyShare, 0, 1, "a share from 0 to 1");
  r.finish();
  return c;
}

json durationOrNull(const std::optional<Usec>& d) { return d ? json(formatDuration(*d)) : json(nullptr); }

}  // namespace

namespace config_detail {

void parseBudget(Reader& parent, Budget& b) {
  if (!parent.has("budget")) return;
  if (parent.isNull("budget")) {
    b = Budget{};
    return;
  }
  Reader r(parent.at("budget"), parent.field("budget"));
  if (r.has("type")) {
    const json& t = r.at("type");
    Budget::Type type = Budget::Type::None;
    if (t == "token_bucket") {
      type = Budget::Type::TokenBucket;
    } else if (t == "ratio") {
      type = Budget::Type::Ratio;
    } else if (t == "none") {
      type = Budget::Type::None;
    } else {
      throw ConfigError(r.field("type"), "must be one of token_bucket | ratio | none");
    }
    Budget::Style style = type == b.type ? b.style : Budget::Style::Grpc;
    if (r.has("style")) {
      const json& s = r.at("style");
      if (s == "grpc") {
        style = Budget::Style::Grpc;
      } else if (s == "aws") {
        style = Budget::Style::Aws;
      } else {
        throw ConfigError(r.field("style"), "must be one of grpc | aws");
      }
    }
    // Another type or style starts from that kind's defaults; the same one refines what is there.
    if (type != b.type || style != b.style) b = defaultBudget(type, style);
  } else if (b.type == Budget::Type::None) {
    throw ConfigError(r.field("type"), "is required: token_bucket | ratio | none");
  } else if (r.has("style")) {
    throw ConfigError(r.field("style"), "needs \"type\": \"token_bucket\" beside it");
  }
  if (b.type == Budget::Type::TokenBucket) {
    r.number("max_tokens", b.maxTokens, 1, 1e9, "a number from 1 to 1e9");
    if (b.style == Budget::Style::Grpc) {
      r.number("ratio", b.ratio, 0, 1e9, "a number >= 0 (tokens earned per success)");
    } else {
      r.number("retry_cost", b.retryCost, 0, 1e9, "a number >= 0");
      r.number("timeout_cost", b.timeoutCost, 0, 1e9, "a number >= 0");
      r.number("success_credit", b.successCredit, 0, 1e9, "a number >= 0");
    }
  } else if (b.type == Budget::Type::Ratio) {
    r.number("ratio", b.ratio, 0, 1e9, "a number >= 0 (retries allowed per first attempt)");
    r.duration("window", b.window, true);
    r.number("min_retries_per_s", b.minRetriesPerSecond, 0, 1e9, "a number >= 0");
  }
  r.finish();
}

unsigned parseRetryOn(Reader& r, std::string_view key) {
  const json& list = r.at(key);
  if (!list.is_array())
    throw ConfigError(r.field(key), "must be a list such as [\"timeout\", \"5xx\", \"409\"]");
  unsigned bits = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& v = list[i];
    const auto* it = std::find_if(std::begin(kOutcomes), std::end(kOutcomes),
                                  [&](const auto& n) { return v.is_string() && n.name == v.get<std::string>(); });
    if (it == std::end(kOutcomes))
      throw ConfigError(r.field(key) + "[" + std::to_string(i) + "]", "must be one of " + choices(kOutcomes));
    bits |= it->value;
  }
  return bits;
}

std::vector<std::string> outcomeNames(unsigned bits) {
  std::vector<std::string> out;
  if ((bits & kStatus5xx) == kStatus5xx) {
    out.emplace_back("5xx");
    bits &= ~kStatus5xx;
  }
  for (const auto& n : kOutcomes)
    if ((bits & n.value) == n.value && n.value != kStatus5xx) out.emplace_back(n.name);
  return out;
}


nlohmann::ordered_json budgetToJson(const Budget& b) {
  nlohmann::ordered_json j;
  switch (b.type) {
    case Budget::Type::None:
      j = nullptr;
      break;
    case Budget::Type::TokenBucket:
      if (b.style == Budget::Style::Grpc) {
        j = {{"type", "token_bucket"}, {"style", "grpc"}, {"max_tokens", b.maxTokens}, {"ratio", b.ratio}};
      } else {
        j = {{"type", "token_bucket"},        {"style", "aws"},
                       {"max_tokens", b.maxTokens},     {"retry_cost", b.retryCost},
                       {"timeout_cost", b.timeoutCost}, {"success_credit", b.successCredit}};
      }
      break;
    case Budget::Type::Ratio:
      j = {{"type", "ratio"},
                     {"ratio", b.ratio},
                     {"window", formatDuration(b.window)},
                     {"min_retries_per_s", b.minRetriesPerSecond}};
      break;
  }
  return j;
}

}  // namespace config_detail

std::string_view backoffName(Backoff b) { return nameOf(kBackoffs, b); }
std::string_view jitterName(Jitter j) { return nameOf(kJitters, j); }
std::string_view retryAfterModeName(RetryAfterMode m) { return nameOf(kRetryAfterModes, m); }

SimConfig parseConfig(const json& document) {
  Reader r(document, "");
  SimConfig c;
  r.integer("seed", c.seed, 0, std::numeric_limits<std::int64_t>::max());
  if (r.has("clients")) c.clients = parseClients(r.at("clients"));
  if (r.has("policy")) c.policy = parsePolicy(r.at("policy"));
  if (r.has("server")) c.server = parseServer(r.at("server"));
  if (r.has("store")) c.store = parseStore(r.at("store"));
  if (r.has("intermediary")) c.intermediary = parseIntermediary(r.at("intermediary"));
  if (r.has("hedging")) c.hedging = parseHedging(r.at("hedging"));
  r.finish();
  return c;
}

SimConfig parseConfigText(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number beyond a double
    throw ConfigError("", std::string("the config is not valid JSON: ") + e.what());
  }
  return parseConfig(doc);
}

nlohmann::ordered_json policyToJson(const Policy& p) {
  nlohmann::ordered_json j;
  if (!p.preset.empty()) j["preset"] = p.preset;
  j["max_attempts"] = p.maxAttempts;
  j["timeout"] = durationOrNull(p.timeout);
  j["deadline"] = durationOrNull(p.deadline);
  j["backoff"] = backoffName(p.backoff);
  j["jitter"] = jitterName(p.jitter);
  j["base"] = formatDuration(p.base);
  j["multiplier"] = p.multiplier;
  j["cap"] = durationOrNull(p.cap);
  j["min_delay"] = formatDuration(p.minDelay);
  j["first_retry_immediate"] = p.firstRetryImmediate;
  j["retry_on"] = outcomeNames(p.retryOn);
  j["retry_after"] = retryAfterModeName(p.retryAfter);
  j["retry_after_cap"] = durationOrNull(p.retryAfterCap);
  j["retry_after_over_cap"] = nameOf(kOverCaps, p.overCap);
  j["budget"] = budgetToJson(p.budget);
  return j;
}

nlohmann::ordered_json configToJson(const SimConfig& c) {
  nlohmann::ordered_json j;
  j["seed"] = c.seed;
  j["clients"] = {{"operations", c.clients.operations}, {"arrival_rate_per_s", c.clients.arrivalRatePerSecond}};
  if (c.clients.clientObjects != 1) j["clients"]["client_objects"] = c.clients.clientObjects;
  // The causes across keys appear only when set, so older reports keep their shape.
  if (c.clients.newKeyOnRetry > 0) j["clients"]["new_key_on_retry"] = c.clients.newKeyOnRetry;
  if (c.clients.sameBodyShare > 0) j["clients"]["same_body_share"] = c.clients.sameBodyShare;
  j["policy"] = policyToJson(c.policy);
  nlohmann::ordered_json server;
  server["latency"] = {{"median", formatDuration(c.server.latencyMedian)},
                       {"p99", formatDuration(c.server.latencyP99)}};
  server["fast_latency"] = formatDuration(c.server.fastLatency);
  server["failure_rate"] = c.server.failureRate;
  server["failure_status"] = c.server.failureStatus;
  server["connection_error_rate"] = c.server.connectionErrorRate;
  server["lost_response_rate"] = c.server.lostResponseRate;
  server["capacity_rps"] = c.server.capacityRps;
  server["retry_after"] = formatDuration(c.server.retryAfter);
  server["conflict_retry_after"] = formatDuration(c.server.conflictRetryAfter);
  server["events"] = nlohmann::ordered_json::array();
  for (const auto& e : c.server.events) {
    nlohmann::ordered_json ev;
    ev["at"] = formatDuration(e.at);
    ev["duration"] = formatDuration(e.duration);
    if (e.extraRatePerSecond > 0) ev["extra_rate_per_s"] = e.extraRatePerSecond;
    if (e.outage) {
      ev["outage"] = true;
      if (e.outageFraction < 1) ev["outage_fraction"] = e.outageFraction;
      ev["outage_status"] =
          e.outageConnectionError ? nlohmann::ordered_json("connection_error") : nlohmann::ordered_json(503);
    }
    if (e.retryAfter) ev["retry_after"] = formatDuration(*e.retryAfter);
    if (e.failureRate) ev["failure_rate"] = *e.failureRate;
    server["events"].push_back(ev);
  }
  j["server"] = server;
  j["store"] = {{"ttl", formatDuration(c.store.ttl)},
                {"lease", durationOrNull(c.store.lease)},
                {"purge_lag", formatDuration(c.store.purgeLag)},
                {"stored_at", nameOf(kStoredAts, c.store.storedAt)}};
  if (c.store.crossKey.mode != CrossKey::Mode::Off) j["store"]["cross_key"] = crossKeyToJson(c.store.crossKey);
  if (c.intermediary.enabled) j["intermediary"] = intermediaryToJson(c.intermediary);
  if (c.hedging.enabled) j["hedging"] = hedgingToJson(c.hedging);
  return j;
}

}  // namespace idem::sim
