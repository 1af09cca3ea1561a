#include "core/measure/compare.h"

#include <algorithm>
#include <cmath>

#include "core/sim/schedule.h"

namespace idem::measure {

namespace {

constexpr int kRuns = 200;
constexpr double kRelative = 0.10;
constexpr double kAbsoluteSeconds = 0.020;

double tolerance(double v) { return std::max(kRelative * std::abs(v), kAbsoluteSeconds); }

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
}

Spread spreadJson(const nlohmann::json& j) {
  Spread s;
  s.min = j.at("min").get<double>();
  s.p50 = j.at("p50").get<double>();
  s.max = j.at("max").get<double>();
  s.samples = j.at("samples").get<int>();
  return s;
}

}  // namespace

std::vector<Check> compareSchedule(const sim::Policy& policy, const std::vector<FaultReport>& measured) {
  std::vector<Check> out;
  for (const auto& f : measured) {
    const auto spec = sim::parseFaultSpec(f.profile);
    if (!spec) continue;
    const sim::Usec latency = sim::Server{}.fastLatency;
    const auto many = sim::simulateSchedule(policy, *spec, 1000, 1, latency);
    std::vector<double> attempts(many.attemptsPerOperation.begin(), many.attemptsPerOperation.end());
    const double simAttempts = spreadOf(attempts).p50;
    out.push_back({f.profile, 0, "attempts", f.attempts.p50, simAttempts, simAttempts, f.attempts.p50 == simAttempts});
    for (const auto& r : f.retries) {
      const int k = r.offset.samples;
      std::vector<double> mins;
      std::vector<double> p50s;
      std::vector<double> maxs;
      for (int run = 0; run < kRuns; ++run) {
        const auto s = sim::simulateSchedule(policy, *spec, k, static_cast<std::uint64_t>(run + 1), latency);
        const auto n = static_cast<std::size_t>(r.retry);
        if (s.offsets.size() < n) continue;  // the policy never gets this far: no band, the check fails
        const Spread sp = spreadOf(s.offsets[n - 1]);
        mins.push_back(sp.min);
        p50s.push_back(sp.p50);
        maxs.push_back(sp.max);
      }
      const auto check = [&](const char* what, double value, const std::vector<double>& sims, bool lowerOnly) {
        Check c{f.profile, r.retry, what, value, 0, 0, false, false};
        if (!sims.empty()) {
          const double lo = quantile(sims, 0.05);
          const double hi = quantile(sims, 0.95);
          c.low = lo - tolerance(lo);
          c.high = hi + tolerance(hi);
          c.late = value > c.high;
          c.ok = value >= c.low && (lowerOnly || !c.late);
        }
        out.push_back(c);
      };
      check("min", r.offset.min, mins, false);
      check("p50", r.offset.p50, p50s, false);
      check("max", r.offset.max, maxs, true);
    }
  }
  return out;
}

std::vector<FaultReport> faultsFromJson(const nlohmann::json& faults) {
  std::vector<FaultReport> out;
  for (const auto& j : faults) {
    FaultReport f;
    f.profile = j.at("profile").get<std::string>();
    f.operations = j.at("operations").get<int>();
    f.attempts = spreadJson(j.at("attempts"));
    for (const auto& r : j.at("retries"))
      f.retries.push_back({r.at("retry").get<int>(), spreadJson(r.at("gap_s")), spreadJson(r.at("sleep_s")),
                           spreadJson(r.at("offset_s"))});
    f.keySent = j.value("key_sent", false);
    if (j.contains("same_key") && !j["same_key"].is_null()) f.sameKey = j["same_key"].get<bool>();
    if (j.contains("retry_after_s") && !j["retry_after_s"].is_null()) f.retryAfter = j["retry_after_s"].get<double>();
    if (j.contains("retry_after_honoured") && !j["retry_after_honoured"].is_null())
      f.retryAfterHonoured = j["retry_after_honoured"].get<bool>();
    if (j.contains("attempt_length_s")) f.attemptLength = spreadJson(j["attempt_length_s"]);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace idem::measure
