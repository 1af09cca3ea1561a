#include "core/tiers/format.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "core/text/humanduration.h"
#include "core/text/json_text.h"

namespace idem::tiers {
namespace {

using policy::formatDuration;
using text::humanDuration;

std::string human(double ms) { return humanDuration(Millis(static_cast<long long>(std::llround(ms)))); }

nlohmann::json tierJson(const TierReport& t) {
  using nlohmann::json;
  json windows = json::object();
  for (const auto& [name, d] : t.tier.referenceWindows) windows[name] = formatDuration(d);
  json byOutcome = json::object();
  for (const auto& [outcome, n] : t.retries.byOutcome) byOutcome[outcome] = n;
  json offsets = nullptr;
  if (t.retries.offsets) {
    const auto& o = *t.retries.offsets;
    offsets = {{"p50", o.p50}, {"p90", o.p90}, {"p99", o.p99}, {"p999", o.p999}, {"max", o.max}};
  }
  // What the archive would weigh with bodies kept for each shorter age of the ladder.
  json keepingBodies = json::object();
  for (Millis keep : bodyRetentionLadder())
    if (auto bytes = archiveBytesKeepingBodies(t, keep)) keepingBodies[formatDuration(keep)] = *bytes;
  json curve = json::array();
  for (const auto& w : t.curve)
    curve.push_back({{"ttl_ms", w.ttl.count()}, {"after_expiry", w.afterExpiry}, {"miss_rate", w.missRate},
                     {"storage_bytes", w.storageBytes}});
  return {
      {"name", t.tier.name},
      {"routes", t.tier.routes},
      {"ttl", formatDuration(t.tier.ttl)},
      {"ttl_ms", t.tier.ttl.count()},
      {"lease", formatDuration(t.tier.lease)},
      {"on_expired", std::string(policy::onExpiredName(t.tier.onExpired))},
      {"archive_retention", formatDuration(t.tier.archiveRetention)},
      {"body_retention", t.tier.bodyRetention ? json(formatDuration(*t.tier.bodyRetention)) : json()},
      {"reference_windows", windows},
      {"retries",
       {{"operations", t.retries.operations},
        {"count", t.retries.retries},
        {"by_outcome", byOutcome},
        {"offset_ms", offsets}}},
      {"storage",
       {{"live_rows", t.storage.liveRows},
        {"avg_row_bytes", t.storage.avgRowBytes},
        {"live_bytes", t.storage.liveBytes},
        {"archive_rows", t.storage.archiveRows},
        {"archive_bytes", t.storage.archiveBytes},
        {"archive_body_bytes", t.storage.archiveBodyBytes},
        {"archive_bytes_keeping_bodies", keepingBodies},
        {"sampled", t.storage.sampled}}},
      {"current", whatIfJson(t.current)},
      {"recommendation",
       {{"made", t.recommendation.made},
        {"ttl", t.recommendation.made ? json(formatDuration(t.recommendation.ttl)) : json()},
        {"ttl_ms", t.recommendation.made ? json(t.recommendation.ttl.count()) : json()},
        {"because", t.recommendation.because},
        {"cost", whatIfJson(t.recommendation.cost)}}},
      {"proposed", whatIfJson(t.proposed)},
      {"proposed_from", t.proposedFromCandidate ? "--ttl" : "recommendation"},
      {"flagged", t.flagged()},
      {"flags", t.flags},
      {"curve", curve},
  };
}

// Ranges lead: the point value of a small sample reads as a measurement it is not.
std::string outcomeLine(const TierReport& t, const WhatIf& w) {
  const bool execute = t.tier.onExpired == policy::OnExpired::Execute;
  std::string line = humanPercentRange(w.missRateRange) +
                     " of retries after expiry (" + std::to_string(w.afterExpiry) + " of " +
                     std::to_string(w.retries) + "), " + humanPerMillionRange(w.perMillionRange) +
                     (execute ? " duplicates" : " rejections") + " per million operations, storage " +
                     humanBytes(w.storageBytes);
  if (w.exposed()) line += "; known exposure: " + exposureText(w);
  return line;
}

nlohmann::json rangeJson(const Interval& i) { return nlohmann::json::array({i.low, i.high}); }

std::string markdown(const Report& r) {
  std::ostringstream out;
  out << "# Retention tiers — service " << r.service << ", policy v" << r.policyVersion << "\n\n";
  out << "Retries observed over the last " << humanDuration(r.since) << " (to " << isoTime(r.generatedAtMs)
      << "). Offsets are measured from the key's first request. " << confidenceRule() << "\n\n";
  out << "| tier | routes | TTL | on expiry | reference windows | retries | p50 | p90 | p99 | p99.9 | max | storage | "
         "recommended | flag |\n";
  out << "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& t : r.tiers) {
    std::string routes, windows;
    for (const auto& route : t.tier.routes) routes += (routes.empty() ? "" : "<br>") + ("`" + route + "`");
    for (const auto& [name, d] : t.tier.referenceWindows)
      windows += (windows.empty() ? "" : ", ") + name + " " + humanDuration(d);
    const auto& o = t.retries.offsets;
    auto cell = [&](double Offsets::*field) { return o ? human((*o).*field) : std::string("–"); };
    out << "| " << t.tier.name << " | " << routes << " | " << humanDuration(t.tier.ttl) << " | "
        << policy::onExpiredName(t.tier.onExpired) << " | " << (windows.empty() ? "–" : windows) << " | "
        << t.retries.retries << " | " << cell(&Offsets::p50) << " | " << cell(&Offsets::p90) << " | "
        << cell(&Offsets::p99) << " | " << cell(&Offsets::p999) << " | " << cell(&Offsets::max) << " | "
        << humanBytes(t.current.storageBytes) << " | "
        << (t.recommendation.made ? humanDuration(t.recommendation.ttl) : std::string("not enough retries")) << " | "
        << (t.flagged() ? "**too short**" : "ok") << " |\n";
  }
  for (const auto& t : r.tiers) {
    out << "\n## " << t.tier.name << "\n\n";
    for (const auto& f : t.flags) out << "- ⚠ " << f << "\n";
    if (!t.flags.empty()) out << "\n";
    out << "- **Now** (" << humanDuration(t.current.ttl) << "): " << outcomeLine(t, t.current) << ".\n";
    if (t.recommendation.made)
      out << "- **Recommended** (" << humanDuration(t.recommendation.ttl) << "): " << t.recommendation.because << ". "
          << outcomeLine(t, t.recommendation.cost) << ".\n";
    else
      out << "- **No recommendation**: " << t.recommendation.because << ".\n";
    if (t.proposedFromCandidate)
      out << "- **What if** (" << humanDuration(t.proposed.ttl) << "): " << outcomeLine(t, t.proposed) << ".\n";
    out << "- Operations " << t.retries.operations << ", live rows " << std::llround(t.storage.liveRows)
        << " at " << humanBytes(t.storage.avgRowBytes) << " each, archive " << humanBytes(t.storage.archiveBytes)
        << " (" << std::llround(t.storage.archiveRows) << " rows, " << humanBytes(t.storage.archiveBodyBytes)
        << " of it stored bodies" << (t.storage.sampled ? ", sampled" : "") << ").\n";
  }
  return out.str();
}

std::string text(const Report& r) {
  std::ostringstream out;
  out << "Retention tiers of service " << r.service << ", policy v" << r.policyVersion << "; retries over the last " << humanDuration(r.since)
      << " (to " << isoTime(r.generatedAtMs) << ")\n" << confidenceRule() << "\n";
  for (const auto& t : r.tiers) {
    out << "\n" << t.tier.name << (t.flagged() ? "  [TOO SHORT]" : "") << "\n";
    std::string routes;
    for (const auto& route : t.tier.routes) routes += (routes.empty() ? "" : ", ") + route;
    out << "  routes        " << (routes.empty() ? "-" : routes) << "\n";
    out << "  TTL           " << humanDuration(t.tier.ttl) << " (lease " << humanDuration(t.tier.lease)
        << ", on expiry " << policy::onExpiredName(t.tier.onExpired) << ", archive "
        << humanDuration(t.tier.archiveRetention)
        << (t.tier.bodyRetention ? ", bodies " + humanDuration(*t.tier.bodyRetention) : std::string()) << ")\n";
    for (const auto& [name, d] : t.tier.referenceWindows)
      out << "  window        " << name << " " << humanDuration(d) << "\n";
    out << "  retries       " << t.retries.retries << " after " << t.retries.operations << " operations";
    if (const auto& o = t.retries.offsets)
      out << "; offset p50 " << human(o->p50) << ", p90 " << human(o->p90) << ", p99 " << human(o->p99)
          << ", p99.9 " << human(o->p999) << ", max " << human(o->max);
    out << "\n";
    out << "  now           " << outcomeLine(t, t.current) << "\n";
    if (t.recommendation.made)
      out << "  recommended   " << humanDuration(t.recommendation.ttl) << ": " << outcomeLine(t, t.recommendation.cost)
          << "\n                (" << t.recommendation.because << ")\n";
    else
      out << "  recommended   none: " << t.recommendation.because << "\n";
    if (t.proposedFromCandidate)
      out << "  what if       " << humanDuration(t.proposed.ttl) << ": " << outcomeLine(t, t.proposed) << "\n";
    for (const auto& f : t.flags) out << "  ! " << f << "\n";
  }
  return out.str();
}

}  // namespace

std::string isoTime(long long epochMs) {
  const std::time_t t = static_cast<std::time_t>(epochMs / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json whatIfJson(const WhatIf& w) {
  nlohmann::json exposures = nlohmann::json::array();
  for (const auto& [name, window] : w.exposures)
    exposures.push_back({{"window", name}, {"duration", formatDuration(window)}, {"beyond_ttl", formatDuration(window - w.ttl)}});
  return {{"ttl", formatDuration(w.ttl)},
          {"ttl_ms", w.ttl.count()},
          {"retries", w.retries},
          {"after_expiry", w.afterExpiry},
          {"miss_rate", w.missRate},
          {"per_million", w.perMillion},
          {"duplicates_per_million", w.duplicatesPerMillion},
          {"rejections_per_million", w.rejectionsPerMillion},
          {"miss_rate_95", rangeJson(w.missRateRange)},
          {"per_million_95", rangeJson(w.perMillionRange)},
          {"known_exposures", exposures},
          {"live_bytes", w.liveBytes},
          {"storage_bytes", w.storageBytes}};
}

nlohmann::json toJson(const Report& report) {
  nlohmann::json tiers = nlohmann::json::array();
  for (const auto& t : report.tiers) tiers.push_back(tierJson(t));
  return {{"service", report.service},
          {"policy_version", report.policyVersion},
          {"rule", confidenceRule()},
          {"min_retries_to_recommend", kMinRetriesToRecommend},
          {"policy_effective_at", isoTime(report.policyEffectiveAtMs)},
          {"generated_at", isoTime(report.generatedAtMs)},
          {"since", formatDuration(report.since)},
          {"since_ms", report.since.count()},
          {"tiers", tiers}};
}

std::string render(const Report& report, Format format) {
  switch (format) {
    case Format::Json: return text::dumpJson(toJson(report), 2) + "\n";
    case Format::Markdown: return markdown(report);
    case Format::Text: return text(report);
  }
  return {};
}

}  // namespace idem::tiers
