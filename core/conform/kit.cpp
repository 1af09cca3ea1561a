#include "core/conform/kit.h"

#include <algorithm>
#include <stdexcept>

#include "core/conform/scenarios.h"

namespace idem::conform {

std::optional<Route> Route::parse(std::string_view text) {
  const auto space = text.find(' ');
  if (space == std::string_view::npos || space == 0) return std::nullopt;
  Route r{std::string(text.substr(0, space)), std::string(text.substr(space + 1))};
  while (!r.path.empty() && r.path.front() == ' ') r.path.erase(0, 1);
  if (r.path.empty() || r.path.front() != '/' || r.path.find(' ') != std::string::npos) return std::nullopt;
  if (!std::all_of(r.method.begin(), r.method.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) return std::nullopt;
  return r;
}

std::string_view verdictName(Verdict v) {
  switch (v) {
    case Verdict::Pass: return "pass";
    case Verdict::Fail: return "fail";
    case Verdict::Skip: return "skip";
    case Verdict::Info: return "info";
  }
  return "?";
}

int Report::count(Verdict v) const {
  return static_cast<int>(std::count_if(scenarios.begin(), scenarios.end(), [&](const auto& s) { return s.verdict == v; }));
}

const std::vector<Scenario>& allScenarios() {
  static const std::vector<Scenario> all{
      {{"first-request", "a first request with a new key executes"},
       "§2.6 (first time request)",
       "2xx; one execution",
       firstRequest},
      {{"replay", "a retry with the same key and body replays the first answer"},
       "§2.6 (duplicate request, retry)",
       "the first's status, body bytes and kept headers; no new execution",
       replay},
      {{"payload-mismatch", "the same key with another body is refused"},
       "§2.2, §2.7",
       "422; no new execution",
       payloadMismatch},
      {{"key-missing", "a request without a key on a route that requires one is refused"},
       "§2.7",
       "400; no execution",
       keyMissing},
      {{"key-malformed", "a key that is not a valid sf-string, too long or repeated is refused"},
       "§2.1, §5 (validate the key)",
       "400 for each; no execution",
       keyMalformed},
      {{"concurrent", "a retry while the first request still runs is not executed"},
       "§2.6 (concurrent request), §2.7",
       "409 for one of them (or the second waits and replays); one execution",
       concurrent},
      {{"problem-details", "the 4xx answers above are problem details"},
       "§2.7 (RFC 9457)",
       "Content-Type application/problem+json with string type and title (or a Link rel=describedby)",
       problemDetails},
      {{"tenant-scope", "one key under two tenants is two requests"},
       "§5 (a composite key per client)",
       "both tenants execute; each retry replays its own tenant's answer",
       tenantScope},
      {{"expiry", "a key used again after the published TTL is treated as the policy says"},
       "§2.3",
       "executes again, or is refused with a 4xx (per --after-expiry); never a replay",
       expiry},
      {{"cross-key", "the same body under two keys (issue 32)"},
       "none (the draft scopes deduplication to one key)",
       "informational, unless --expect-cross-key states the service's promise",
       crossKey},
  };
  return all;
}

const std::vector<ScenarioInfo>& scenarios() {
  static const std::vector<ScenarioInfo> infos = [] {
    std::vector<ScenarioInfo> out;
    for (const auto& s : allScenarios()) out.push_back(s.info);
    return out;
  }();
  return infos;
}

Report run(const Options& options) {
  const auto known = [](const std::string& name) {
    const auto& all = allScenarios();
    return std::any_of(all.begin(), all.end(), [&](const Scenario& s) { return s.info.name == name; });
  };
  for (const auto* list : {&options.only, &options.skip})
    for (const auto& name : *list)
      if (!known(name)) throw std::invalid_argument("no scenario is named \"" + name + "\"");

  Probe probe(options);
  Report report{options.url, options.route.text(), probe.runId(), probe.counting(), {}};
  for (const auto& s : allScenarios()) {
    const auto named = [&](const std::vector<std::string>& list) {
      return std::find(list.begin(), list.end(), s.info.name) != list.end();
    };
    ScenarioResult result{s.info.name, s.info.title, s.draft, s.expects, Verdict::Skip, {}, {}};
    if (!options.only.empty() && !named(options.only))
      continue;
    if (named(options.skip)) {
      result.reason = "left out (--skip)";
    } else {
      s.run(probe, report.scenarios, result);
    }
    report.scenarios.push_back(std::move(result));
  }
  return report;
}

}  // namespace idem::conform
