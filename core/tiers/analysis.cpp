// The pure parts of the tiers analysis: the TTL ladder, what-if arithmetic, the
// recommendation and the flags. No database here.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/text/humanduration.h"
#include "core/text/numbers.h"
#include "core/tiers/tiers.h"
#include "core/trace/outcome.h"

namespace idem::tiers {
namespace {

using std::chrono::days;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

std::string human(Millis d) { return text::humanDuration(d); }
std::string human(double ms) { return text::humanDuration(Millis(static_cast<long long>(std::llround(ms)))); }

using text::withThousands;

Millis ceilTo(Millis d, Millis unit) { return unit * ((d.count() + unit.count() - 1) / unit.count()); }

}  // namespace

const std::vector<std::string>& retryOutcomes() {
  static const std::vector<std::string> outcomes = [] {
    std::vector<std::string> v;
    for (const auto& f : trace::kOutcomes)
      if (f.retry) v.emplace_back(f.sql);
    return v;
  }();
  return outcomes;
}

const std::vector<Millis>& ttlLadder() {
  static const std::vector<Millis> ladder = [] {
    std::vector<Millis> v;
    for (long long s : {1, 2, 5, 10, 15, 30, 45}) v.emplace_back(seconds(s));
    for (long long m : {1, 2, 5, 10, 15, 20, 30, 45}) v.emplace_back(minutes(m));
    for (long long h : {1, 2, 3, 4, 6, 8, 12, 18, 24, 36, 48, 72, 96, 120}) v.emplace_back(hours(h));
    for (long long d : {7, 10, 14, 21, 30, 45, 60, 90, 120, 180, 270, 365, 730}) v.emplace_back(days(d));
    return v;
  }();
  return ladder;
}

const std::vector<Millis>& bodyRetentionLadder() {
  static const std::vector<Millis> ladder = [] {
    std::vector<Millis> v;
    for (long long d : {1, 7, 14, 30, 60, 90, 180, 365, 730}) v.emplace_back(days(d));
    return v;
  }();
  return ladder;
}

std::optional<double> archiveBytesKeepingBodies(const TierReport& tier, Millis keep) {
  const Millis keptNow = tier.tier.bodyRetention.value_or(tier.tier.archiveRetention);
  if (keep >= keptNow) return std::nullopt;
  const auto& within = tier.storage.archiveBodyBytesWithin;
  auto it = std::find_if(within.begin(), within.end(), [keep](const auto& w) { return w.first == keep; });
  if (it == within.end()) return std::nullopt;
  // The rows stay; only the bodies archived longer ago than `keep` would go.
  return tier.storage.archiveBytes - tier.storage.archiveBodyBytes + std::min(it->second, tier.storage.archiveBodyBytes);
}

Millis roundUpToPolicyUnit(Millis d) {
  if (d <= Millis(0)) return seconds(1);
  if (d < minutes(2)) return ceilTo(d, seconds(1));
  if (d < hours(2)) return ceilTo(d, minutes(1));
  if (d < days(7)) return ceilTo(d, hours(1));
  return ceilTo(d, days(1));
}

const WhatIf* TierReport::pointAt(Millis ttl) const {
  auto it = std::find_if(curve.begin(), curve.end(), [ttl](const WhatIf& w) { return w.ttl == ttl; });
  return it == curve.end() ? nullptr : &*it;
}

const TierReport* Report::tier(const std::string& name) const {
  auto it = std::find_if(tiers.begin(), tiers.end(), [&](const TierReport& t) { return t.tier.name == name; });
  return it == tiers.end() ? nullptr : &*it;
}

WhatIf evaluate(const policy::Tier& tier, const RetryStats& retries, const Storage& storage, Millis ttl,
                long long afterExpiry) {
  WhatIf w;
  w.ttl = ttl;
  w.retries = retries.retries;
  w.afterExpiry = afterExpiry;
  w.missRate = retries.retries > 0 ? static_cast<double>(afterExpiry) / static_cast<double>(retries.retries) : 0;
  w.perMillion =
      retries.operations > 0 ? static_cast<double>(afterExpiry) * 1e6 / static_cast<double>(retries.operations) : 0;
  if (tier.onExpired == policy::OnExpired::Execute)
    w.duplicatesPerMillion = w.perMillion;
  else
    w.rejectionsPerMillion = w.perMillion;
  // Steady state: live rows = arrival rate × TTL, so they scale with the TTL.
  const double ratio = tier.ttl.count() > 0 ? static_cast<double>(ttl.count()) / static_cast<double>(tier.ttl.count())
                                            : 1.0;
  w.liveBytes = storage.liveBytes * ratio;
  w.storageBytes = w.liveBytes + storage.archiveBytes;
  w.missRateRange = wilson(afterExpiry, retries.retries);
  const Interval perOperation = wilson(afterExpiry, retries.operations);
  w.perMillionRange = {perOperation.low * 1e6, perOperation.high * 1e6};
  for (const auto& [name, window] : tier.referenceWindows)
    if (window > ttl) w.exposures.emplace_back(name, window);
  return w;
}

Recommendation recommend(const policy::Tier& tier, const RetryStats& retries) {
  Recommendation r;
  if (retries.retries < kMinRetriesToRecommend || !retries.offsets) {
    // A handful of retries says where a few clients came back, not where the p99.9 lies: a
    // TTL cut from them (2 days to 30 s on a 5-operation store) would be a guess.
    r.made = false;
    r.ttl = tier.ttl;
    r.because = "not enough retries observed to recommend: " + withThousands(retries.retries) + " of the " +
                std::to_string(kMinRetriesToRecommend) + " needed (" + withThousands(retries.operations) +
                " operations); keep " + human(tier.ttl) + " until more are seen";
    return r;
  }
  Millis needed{0};
  std::vector<std::string> covers;
  if (retries.offsets) {
    const double p999 = retries.offsets->p999;
    // A retry exactly TTL after the first request already finds the key expired, so the TTL
    // has to be longer than the offset it covers.
    needed = std::max(needed, Millis(static_cast<long long>(std::floor(p999)) + 1));
    covers.push_back("p99.9 of " + withThousands(retries.retries) + " observed " +
                     (retries.retries == 1 ? "retry" : "retries") + " (" + human(p999) + ")");
  }
  std::string windows;
  for (const auto& [name, window] : tier.referenceWindows) {
    needed = std::max(needed, window);
    windows += (windows.empty() ? "" : ", ") + name + " (" + human(window) + ")";
  }
  if (!windows.empty())
    covers.push_back(std::string(tier.referenceWindows.size() == 1 ? "the reference window " : "every reference window: ") +
                     windows);
  r.ttl = roundUpToPolicyUnit(std::max(needed, tier.lease));
  r.because = "the smallest TTL that covers " + covers.front();
  for (std::size_t i = 1; i < covers.size(); ++i) r.because += " and " + covers[i];
  if (tier.lease > needed) r.because += "; raised to the lease (" + human(tier.lease) + ")";
  return r;
}

std::vector<std::string> flagsFor(const policy::Tier& tier, const RetryStats& retries, const WhatIf& current) {
  std::vector<std::string> flags;
  const bool execute = tier.onExpired == policy::OnExpired::Execute;
  const std::string consequence = execute ? "executed again (a duplicate)" : "rejected with 422 (manual reconciliation)";
  if (retries.offsets && Millis(static_cast<long long>(std::ceil(retries.offsets->p999))) >= tier.ttl) {
    flags.push_back("retries outrun the TTL: p99.9 of retries comes " + human(retries.offsets->p999) +
                    " after the first request, past the TTL (" + human(tier.ttl) + "); " +
                    withThousands(current.afterExpiry) + " of " + withThousands(current.retries) + " retries (" +
                    humanPercent(current.missRate) + ") came after expiry and were " + consequence);
  }
  for (const auto& [name, window] : tier.referenceWindows) {
    if (window <= tier.ttl) continue;
    flags.push_back("reference window " + name + " (" + human(window) + ") is longer than the TTL (" + human(tier.ttl) +
                    "): a request resent in the last " + human(window - tier.ttl) +
                    " of that window finds the key forgotten and is " + consequence);
  }
  return flags;
}

std::string exposureText(const WhatIf& w) {
  std::string out;
  for (const auto& [name, window] : w.exposures)
    out += (out.empty() ? "" : "; ") + name + " (" + human(window) + ") outruns the TTL by " + human(window - w.ttl) +
           ": a resend that late finds the key gone";
  return out;
}

std::string humanBytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  double v = std::max(0.0, bytes);
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  else
    std::snprintf(buf, sizeof buf, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

std::string humanPerMillion(double perMillion) {
  if (perMillion <= 0) return "0";
  if (perMillion >= 100) return withThousands(std::llround(perMillion));
  char buf[32];
  std::snprintf(buf, sizeof buf, perMillion < 10 ? "%.2f" : "%.1f", perMillion);
  return buf;
}

std::string humanPercent(double share) {
  const double pct = share * 100.0;
  char buf[32];
  if (pct <= 0) return "0 %";
  if (pct < 0.01) return "< 0.01 %";
  std::snprintf(buf, sizeof buf, pct < 10 ? "%.2f %%" : "%.1f %%", pct);
  return buf;
}

}  // namespace idem::tiers
