// JSON and text reports.
#include "core/sim/report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/sim/config_parse.h"
#include "core/sim/presets.h"
#include "core/sim/verdict.h"

namespace idem::sim {

namespace {

using ojson = nlohmann::ordered_json;

double round6(double v) { return std::round(v * 1e6) / 1e6; }

ojson secondsOrNull(const std::optional<Usec>& d) { return d ? ojson(round6(toSeconds(*d))) : ojson(nullptr); }

ojson seriesJson(const std::vector<SeriesRow>& rows) {
  ojson s;
  s["interval_s"] = 1;
  auto column = [&](const char* name, auto member) {
    ojson col = ojson::array();
    for (const auto& r : rows) col.push_back(r.*member);
    s[name] = std::move(col);
  };
  ojson t = ojson::array();
  for (std::size_t i = 0; i < rows.size(); ++i) t.push_back(i);
  s["t_s"] = std::move(t);
  column("offered", &SeriesRow::offered);
  column("attempts", &SeriesRow::attempts);
  column("successes", &SeriesRow::successes);
  column("retries", &SeriesRow::retries);
  column("timeouts", &SeriesRow::timeouts);
  column("in_flight", &SeriesRow::inFlight);
  ojson wait = ojson::array();
  for (const auto& r : rows) wait.push_back(round6(r.queueWaitS));
  s["queue_wait_s"] = std::move(wait);
  return s;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string seconds(double s) { return humanSeconds(s); }

ojson acrossKeysJson(const Result& r) {
  const CrossKeyCounts& x = r.crossKey;
  ojson j;
  j["new_key_retries"] = r.newKeyRetries;
  j["intermediary_retries"] = r.intermediaryRetries;
  j["hedged_copies"] = r.hedgedCopies;
  j["detection"] = {{"mode", crossKeyModeName(r.config.store.crossKey.mode)},
                    {"window_s", round6(toSeconds(r.config.store.crossKey.window))},
                    {"matches", x.matches},
                    {"legitimate_matches", x.legitimateMatches},
                    {"held", x.held},
                    {"rejected", x.rejected},
                    {"legitimate_refused", x.legitimateRefused}};
  if (r.counterpart) {
    j["counterpart"] = {{"mode", crossKeyModeName(r.counterpart->mode)},
                        {"duplicates", r.counterpart->duplicates},
                        {"duplicates_new_key", r.counterpart->duplicatesNewKey},
                        {"legitimate_refused", r.counterpart->legitimateRefused}};
  } else {
    j["counterpart"] = nullptr;
  }
  return j;
}

/// One line on what crosses keys, when the scenario has any of it.
std::string acrossKeysText(const Result& r) {
  const CrossKey& ck = r.config.store.crossKey;
  if (r.newKeyRetries == 0 && ck.mode == CrossKey::Mode::Off && !r.config.intermediary.enabled &&
      !r.config.hedging.enabled && r.config.clients.sameBodyShare == 0)
    return {};
  std::ostringstream out;
  out << "  across keys        new-key retries " << r.newKeyRetries << " (" << r.duplicatesNewKey
      << " ran again), intermediary retries " << r.intermediaryRetries << ", hedged copies " << r.hedgedCopies << '\n';
  if (ck.mode != CrossKey::Mode::Off)
    out << "  detection          " << crossKeyModeName(ck.mode) << " within " << seconds(toSeconds(ck.window)) << ": "
        << r.crossKey.matches << " requests matched (" << r.crossKey.legitimateMatches << " of them meant), held " << r.crossKey.held
        << ", rejected " << r.crossKey.rejected << ", meant repeats that never ran " << r.crossKey.legitimateRefused
        << '\n';
  if (r.counterpart)
    out << "  " << (r.counterpart->mode == CrossKey::Mode::Off ? "without detection  " : "with hold          ")
        << r.counterpart->duplicates << " duplicates (" << r.counterpart->duplicatesNewKey << " under a new key)"
        << (r.counterpart->mode == CrossKey::Mode::Off
                ? std::string()
                : ", meant repeats that never ran " + std::to_string(r.counterpart->legitimateRefused))
        << '\n';
  return out.str();
}

}  // namespace

bool expiryDuplicatesPossible(const Result& r) {
  return !r.horizon.value || *r.horizon.value >= r.config.store.ttl + r.config.store.purgeLag;
}

nlohmann::ordered_json toJson(const Result& r) {
  ojson j;
  j["operations"] = r.operations;
  j["attempts"] = r.attempts;
  j["amplification"] = round6(r.amplification());
  j["successes"] = r.successes;
  j["success_rate"] = round6(r.successRate());
  j["failures"] = {{"retries_exhausted", r.failures.retriesExhausted},
                   {"not_retryable", r.failures.notRetryable},
                   {"deadline", r.failures.deadline},
                   {"budget", r.failures.budget}};
  j["timeouts"] = r.timeouts;
  j["connection_errors"] = r.connectionErrors;
  j["lost_responses"] = r.lostResponses;
  j["conflicts_409"] = r.conflicts409;
  j["status_500"] = r.status500;
  j["status_503"] = r.status503;
  j["replays"] = r.replays;
  j["budget_exhausted"] = r.failures.budget;
  j["executions"] = r.executions;
  j["duplicates"] = r.duplicates;
  j["duplicates_per_million"] = round6(r.duplicatesPerMillion());
  j["duplicate_causes"] = {{"after_purge", r.duplicatesAfterPurge},
                           {"concurrent", r.duplicatesConcurrent},
                           {"lease_takeover", r.duplicatesLeaseTakeover},
                           {"new_key", r.duplicatesNewKey}};
  j["across_keys"] = acrossKeysJson(r);
  j["horizon_s"] = secondsOrNull(r.horizon.value);
  j["horizon_bounded_by"] = r.horizon.boundedBy;
  j["ttl_s"] = round6(toSeconds(r.config.store.ttl));
  j["purge_lag_s"] = round6(toSeconds(r.config.store.purgeLag));
  j["expiry_duplicates_possible"] = expiryDuplicatesPossible(r);
  j["max_queue_wait_s"] = round6(toSeconds(r.maxQueueWait));
  j["simulated_s"] = round6(toSeconds(r.simulatedUntil));
  ojson offsets = ojson::array();
  for (const auto& o : r.offsets) {
    ojson e;
    e["attempt"] = o.attempt;
    e["count"] = o.count;
    e["p50_s"] = round6(o.p50);
    e["p90_s"] = round6(o.p90);
    e["p99_s"] = round6(o.p99);
    e["p999_s"] = round6(o.p999);
    e["max_s"] = round6(o.max);
    ojson ecdf = ojson::array();
    for (double v : o.ecdf) ecdf.push_back(round6(v));
    e["ecdf_s"] = std::move(ecdf);
    offsets.push_back(std::move(e));
  }
  j["attempt_offsets"] = std::move(offsets);
  if (r.recovery) {
    j["recovery"] = {{"last_event_end_s", round6(r.recovery->lastEventEndS)},
                     {"recovered_after_s",
                      r.recovery->recoveredAfterS ? ojson(round6(*r.recovery->recoveredAfterS)) : ojson(nullptr)}};
  } else {
    j["recovery"] = nullptr;
  }
  j["cancelled"] = r.cancelled;
  j["series"] = seriesJson(r.series);
  j["config"] = configToJson(r.config);
  return j;
}

std::string policyLabel(const Policy& p) {
  if (!p.preset.empty()) {  // by its current name, not an old alias ("stripe" is stripe-python)
    const Preset* preset = findPreset(p.preset);
    return preset ? std::string(preset->name) : p.preset;
  }
  const std::string backoff = p.backoff == Backoff::None ? "no backoff" : std::string(backoffName(p.backoff)) + " backoff";
  return backoff + ", " + (p.jitter == Jitter::None ? std::string("no jitter") : std::string(jitterName(p.jitter)) + " jitter");
}

std::string toText(const Result& r, bool withAttempts) {
  std::ostringstream out;
  const Policy& p = r.config.policy;
  out << policyLabel(p) << ": " << verdictLine(r) << "\n";
  out << "Simulated " << r.operations << " operations (seed " << r.config.seed << "), policy "
      << (p.preset.empty() ? std::string("custom") : "preset " + policyLabel(p)) << ": " << p.maxAttempts << " attempts max, "
      << backoffName(p.backoff) << " backoff, " << jitterName(p.jitter) << " jitter\n";
  if (r.cancelled) out << "(cancelled before the end: partial numbers)\n";
  out << "  attempts           " << r.attempts << " (amplification " << fmt("%.3f", r.amplification()) << ")\n";
  out << "  success rate       " << fmt("%.2f %%", 100 * r.successRate()) << " (" << r.successes << " succeeded)\n";
  out << "  failed             exhausted " << r.failures.retriesExhausted << ", not retryable "
      << r.failures.notRetryable << ", deadline " << r.failures.deadline << ", budget " << r.failures.budget << '\n';
  out << "  answers            timeouts " << r.timeouts << ", connection errors " << r.connectionErrors << " ("
      << r.lostResponses << " after execution), 409 " << r.conflicts409 << ", 500 " << r.status500 << ", 503 "
      << r.status503 << ", replays " << r.replays << '\n';
  out << "  executions         " << r.executions << ", duplicates " << r.duplicates << " ("
      << fmt("%.1f", r.duplicatesPerMillion()) << " per million: after purge " << r.duplicatesAfterPurge
      << ", concurrent " << r.duplicatesConcurrent << ", lease takeover " << r.duplicatesLeaseTakeover
      << ", new key " << r.duplicatesNewKey << ")\n";
  out << acrossKeysText(r);
  const double keyLife = toSeconds(r.config.store.ttl + r.config.store.purgeLag);
  const std::string horizon =
      r.horizon.value ? seconds(toSeconds(*r.horizon.value)) + " (bounded by " + std::string(r.horizon.boundedBy) + ")"
                      : std::string("unbounded (no timeout, or Retry-After obeyed without a cap, and no deadline)");
  out << "  retry horizon H    " << horizon << " vs TTL + purge lag " << seconds(keyLife) << ": "
      << (expiryDuplicatesPossible(r) ? "a retry can arrive after the key is gone"
                                      : "no retry can arrive after the key is gone")
      << '\n';
  if (r.maxQueueWait > 0) out << "  max queue wait     " << seconds(toSeconds(r.maxQueueWait)) << '\n';
  if (!r.offsets.empty() && !withAttempts)
    out << "  attempt offsets    " << r.offsets.size() << " attempt numbers (--attempts lists them)\n";
  if (!r.offsets.empty() && withAttempts) {
    out << "  attempt offsets after the first attempt:\n"
        << "    attempt      count        p50        p90        p99        max\n";
    for (const auto& o : r.offsets) {
      char line[160];
      std::snprintf(line, sizeof line, "    %7d %10lld %10s %10s %10s %10s\n", o.attempt,
                    static_cast<long long>(o.count), seconds(o.p50).c_str(), seconds(o.p90).c_str(),
                    seconds(o.p99).c_str(), seconds(o.max).c_str());
      out << line;
    }
  }
  if (r.recovery) {
    out << "  recovery           last event ended at " << seconds(r.recovery->lastEventEndS) << "; "
        << (r.recovery->recoveredAfterS ? "recovered after " + seconds(*r.recovery->recoveredAfterS)
                                        : std::string("did not recover (success ratio < 90% until arrivals stopped)"))
        << '\n';
  }
  return out.str();
}

}  // namespace idem::sim
