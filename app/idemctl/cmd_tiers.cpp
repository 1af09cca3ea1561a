// idemctl tiers: the retention tiers against observed retries, with what-ifs (issue 5).
#include <iostream>
#include <sstream>

#include "app/idemctl/command.h"
#include "core/policy/duration.h"
#include "core/store/policystore.h"
#include "core/tiers/format.h"
#include "core/tiers/tiers.h"

namespace {

constexpr const char* kUsageText =
    "[--db CONNINFO] [--service NAME] [--since 30d] [--ttl TIER=DURATION[,TIER=DURATION…] [TIER=DURATION …]] "
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
  if (args.has("service"))
    if (auto bad = idem::store::serviceNameProblem(args.get("service")); !bad.empty()) return usage("--service: " + bad);

  try {
    idem::pg::Connection conn(idemctl::conninfo(args));
    // Without --service: every service with a policy in force, each its own report (one alone
    // reads as before); with it, that service's.
    std::vector<std::string> services{args.get("service", idem::store::kDefaultService)};
    if (!args.has("service"))
      if (auto chosen = idem::store::servicesWithChoice(conn); !chosen.empty()) services = chosen;
    if (services.size() > 1 && !options.candidates.empty())
      return usage("--ttl names tiers of one service: say which with --service (" + [&] {
               std::string names;
               for (const auto& s : services) names += (names.empty() ? "" : ", ") + s;
               return names;
             }() + ")");
    std::vector<t::Report> reports;
    for (const auto& service : services) {
      options.service = service;
      reports.push_back(t::analyse(conn, options));
    }
    for (const auto& [name, ttl] : options.candidates)
      if (!reports.front().tier(name)) {
        std::string names;
        for (const auto& tr : reports.front().tiers) names += (names.empty() ? "" : ", ") + tr.tier.name;
        return usage("--ttl: the policy in force for service " + services.front() + " (v" +
                     std::to_string(reports.front().policyVersion) + ") has no tier \"" + name + "\"; its tiers are " +
                     names);
      }
    if (reports.size() == 1) {
      std::cout << t::render(reports.front(), *format);
    } else if (*format == idem::text::OutputFormat::Json) {
      auto all = nlohmann::json::array();
      for (const auto& r : reports) all.push_back(nlohmann::json::parse(t::render(r, *format)));
      std::cout << nlohmann::json{{"services", all}}.dump() << '\n';
    } else {
      for (std::size_t i = 0; i < reports.size(); ++i) std::cout << (i ? "\n" : "") << t::render(reports[i], *format);
    }
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
                 idemctl::Flag::option("service", "NAME", "Whose tiers: the policy in force for this service.",
                                       "every service with a policy in force, one report each"),
                 idemctl::Flag::option("since", "DURATION", "Retries observed within this window.", "30d"),
                 idemctl::Flag::option("ttl", "TIER=DURATION[,...]",
                                       "What if a tier's key retention were this long; more pairs may follow.",
                                       "the policy in force"),
                 idemctl::Flag::option("format", "text|json|markdown", "How the report is written.", "text")},
                runTiers);
