// idemctl tiers: the retention tiers against observed retries, with what-ifs (issue 5).
#include <iostream>
#include <sstream>

#include "app/idemctl/command.h"
#include "core/policy/duration.h"
#include "core/tiers/format.h"
#include "core/tiers/tiers.h"

namespace {

constexpr const char* kUsageText =
    "[--db CONNINFO] [--since 30d] [--ttl TIER=DURATION[,TIER=DURATION…] [TIER=DURATION …]] "
    "[--format text|json|markdown]";

int usage(const std::string& message) { return idemctl::usageError("tiers", kUsageText, message); }

/// "payments=72h" into the candidates; false with a message when it is not one.
bool addCandidate(const std::string& item, std::map<std::string, idem::policy::Millis>& out, std::string& error) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = "--ttl: \"" + item + "\" is not TIER=DURATION (e.g. payments=72h)";
    return false;
  }
  const auto d = idem::policy::parseDuration(item.substr(eq + 1));
  if (!d || d->count() <= 0) {
    error = "--ttl: \"" + item.substr(eq + 1) + "\" is not a duration (use 250ms, 2s, 30m, 24h or 30d)";
    return false;
  }
  out[item.substr(0, eq)] = *d;
  return true;
}

int runTiers(const idemctl::Args& args) {
  namespace t = idem::tiers;
  const auto format = idem::text::parseOutputFormat(args.get("format", "text"));
  if (!format) return usage("--format: \"" + args.get("format") + "\" is not text, json or markdown");
  t::Options options;
  if (args.has("since")) {
    const auto since = idem::policy::parseDuration(args.get("since"));
    if (!since || since->count() <= 0)
      return usage("--since: \"" + args.get("since") + "\" is not a duration (e.g. 7d, 30d, 24h)");
    options.since = *since;
  }
  // The argument parser keeps one value per option, so further TIER=DURATION pairs may follow
  // --ttl as plain words, or be joined with commas.
  std::vector<std::string> items;
  if (args.has("ttl")) {
    std::stringstream list(args.get("ttl"));
    for (std::string item; std::getline(list, item, ',');)
      if (!item.empty()) items.push_back(item);
    if (items.empty()) return usage("--ttl needs TIER=DURATION");
  }
  for (const auto& word : args.positional()) {
    if (!args.has("ttl")) return usage("unexpected argument \"" + word + "\"");
    items.push_back(word);
  }
  std::string error;
  for (const auto& item : items)
    if (!addCandidate(item, options.candidates, error)) return usage(error);

  try {
    idem::pg::Connection conn(idemctl::conninfo(args));
    const auto report = t::analyse(conn, options);
    for (const auto& [name, ttl] : options.candidates)
      if (!report.tier(name)) {
        std::string names;
        for (const auto& tr : report.tiers) names += (names.empty() ? "" : ", ") + tr.tier.name;
        return usage("--ttl: the policy in force (v" + std::to_string(report.policyVersion) + ") has no tier \"" +
                     name + "\"; its tiers are " + names);
      }
    std::cout << t::render(report, *format);
    return idemctl::kOk;
  } catch (const t::NoPolicy& e) {
    std::cerr << "idemctl tiers: " << e.what() << '\n';
    return idemctl::kFailure;
  } catch (const idem::pg::Unavailable& e) {
    std::cerr << "idemctl tiers: " << e.what() << "\nCheck --db or the PG* variables.\n";
    return idemctl::kUnavailable;
  }
}

}  // namespace

IDEMCTL_COMMAND("tiers", "retention tiers against observed retries; what-if for another TTL", kUsageText,
                {idemctl::dbFlag(),
                 idemctl::Flag::option("since", "DURATION", "Retries observed within this window.", "30d"),
                 idemctl::Flag::option("ttl", "TIER=DURATION[,...]",
                                       "What if a tier's key retention were this long; more pairs may follow.",
                                       "the policy in force"),
                 idemctl::Flag::option("format", "text|json|markdown", "How the report is written.", "text")},
                runTiers);
