// Attempts -> per client and fault figures (attempts.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "core/measure/attempts.h"
#include "core/measure/fit.h"
#include "core/sim/config_parse.h"
#include "core/sim/policytext.h"
#include "core/sim/schedule.h"

namespace idem::measure {

namespace {

constexpr double kUsPerSecond = 1e6;
// A sleep this much shorter than Retry-After still counts as obeying it (clock and scheduling slack).
constexpr double kRetryAfterSlackSeconds = 0.05;

double seconds(long long us) { return static_cast<double>(us) / kUsPerSecond; }

// Operation identity within one client and profile.
std::string operationOf(const Attempt& a, std::size_t index) {
  if (a.operation) return "op:" + *a.operation;
  if (a.key) return "key:" + *a.key;
  return "attempt:" + std::to_string(index);
}

FaultReport reportFault(const std::string& profile, const std::vector<const Attempt*>& attempts) {
  FaultReport r;
  r.profile = profile;
  std::map<std::string, std::vector<const Attempt*>> ops;
  bool named = true;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    ops[operationOf(*attempts[i], i)].push_back(attempts[i]);
    named = named && attempts[i]->operation.has_value();
    r.keySent = r.keySent || attempts[i]->key.has_value();
  }
  r.operations = static_cast<int>(ops.size());
  std::vector<double> counts;
  std::vector<std::vector<double>> gaps;
  std::vector<std::vector<double>> sleeps;
  std::vector<std::vector<double>> offsets;
  std::vector<double> lengths;
  bool anyRetry = false;
  bool keysSame = true;
  for (auto& [id, list] : ops) {
    std::sort(list.begin(), list.end(), [](const Attempt* a, const Attempt* b) { return a->arrivedUs < b->arrivedUs; });
    counts.push_back(static_cast<double>(list.size()));
    // The first attempt's length is the client's timeout; later ones may include a sleep spent
    // holding the timed-out connection open (urllib3 closes it only when it sends again).
    lengths.push_back(seconds(list[0]->endedUs - list[0]->arrivedUs));
    for (std::size_t n = 1; n < list.size(); ++n) {
      anyRetry = true;
      if (list[n]->key != list[0]->key) keysSame = false;
      if (gaps.size() < n) {
        gaps.resize(n);
        sleeps.resize(n);
        offsets.resize(n);
      }
      gaps[n - 1].push_back(seconds(list[n]->arrivedUs - list[n - 1]->arrivedUs));
      sleeps[n - 1].push_back(seconds(list[n]->arrivedUs - list[n - 1]->endedUs));
      offsets[n - 1].push_back(seconds(list[n]->arrivedUs - list[0]->arrivedUs));
    }
  }
  r.attempts = spreadOf(counts);
  for (std::size_t n = 0; n < gaps.size(); ++n)
    r.retries.push_back({static_cast<int>(n + 1), spreadOf(gaps[n]), spreadOf(sleeps[n]), spreadOf(offsets[n])});
  if (named && anyRetry) r.sameKey = keysSame;
  if (const auto spec = sim::parseFaultSpec(profile); spec && spec->retryAfter) {
    r.retryAfter = sim::toSeconds(*spec->retryAfter);
    if (anyRetry) {
      bool honoured = true;
      for (const auto& s : sleeps)
        for (double v : s) honoured = honoured && v >= *r.retryAfter - kRetryAfterSlackSeconds;
      r.retryAfterHonoured = honoured;
    }
  }
  if (profile == "hang") r.attemptLength = spreadOf(lengths);
  return r;
}

nlohmann::ordered_json spreadJson(const Spread& s) {
  return {{"min", s.min}, {"p50", s.p50}, {"max", s.max}, {"samples", s.samples}};
}

std::string fmt(double v) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(3);
  o << v;
  return o.str();
}

}  // namespace

Spread spreadOf(std::vector<double> values) {
  Spread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.samples = static_cast<int>(values.size());
  s.min = values.front();
  s.max = values.back();
  // Nearest-rank median, as the simulator's percentiles (core/sim/stats.h).
  s.p50 = values[static_cast<std::size_t>(std::ceil(0.5 * static_cast<double>(values.size()))) - 1];
  return s;
}

std::string clientOf(const std::string& userAgent) {
  std::string out;
  std::size_t start = 0;
  while (start <= userAgent.size()) {
    std::size_t end = userAgent.find(' ', start);
    if (end == std::string::npos) end = userAgent.size();
    std::string token = userAgent.substr(start, end - start);
    // "m/E,P,b": the list after the last '/' (or '#'), in a fixed order.
    const std::size_t list = token.find_last_of("/#");
    if (list != std::string::npos && token.find(',', list) != std::string::npos) {
      std::vector<std::string> items;
      std::istringstream in(token.substr(list + 1));
      for (std::string item; std::getline(in, item, ',');) items.push_back(item);
      std::sort(items.begin(), items.end());
      token.resize(list + 1);
      for (std::size_t i = 0; i < items.size(); ++i) token += (i ? "," : "") + items[i];
    }
    out += (start ? " " : "") + token;
    start = end + 1;
  }
  return out;
}

std::vector<ClientReport> analyze(const std::vector<Attempt>& attempts) {
  std::map<std::string, std::map<std::string, std::vector<const Attempt*>>> byClient;
  for (const auto& a : attempts) byClient[clientOf(a.userAgent)][a.profile].push_back(&a);
  std::vector<ClientReport> out;
  for (const auto& [agent, profiles] : byClient) {
    ClientReport c;
    c.userAgent = agent;
    for (const auto& [profile, list] : profiles) c.faults.push_back(reportFault(profile, list));
    c.fitted = fitPolicy(c.faults, c.notes);
    out.push_back(std::move(c));
  }
  return out;
}

nlohmann::ordered_json toJson(const std::vector<ClientReport>& reports) {
  auto clients = nlohmann::ordered_json::array();
  for (const auto& c : reports) {
    auto faults = nlohmann::ordered_json::array();
    for (const auto& f : c.faults) {
      nlohmann::ordered_json j;
      j["profile"] = f.profile;
      j["operations"] = f.operations;
      j["attempts"] = spreadJson(f.attempts);
      auto retries = nlohmann::ordered_json::array();
      for (const auto& r : f.retries)
        retries.push_back({{"retry", r.retry},
                           {"gap_s", spreadJson(r.gap)},
                           {"sleep_s", spreadJson(r.sleep)},
                           {"offset_s", spreadJson(r.offset)}});
      j["retries"] = retries;
      j["key_sent"] = f.keySent;
      j["same_key"] = f.sameKey ? nlohmann::ordered_json(*f.sameKey) : nlohmann::ordered_json(nullptr);
      j["retry_after_s"] = f.retryAfter ? nlohmann::ordered_json(*f.retryAfter) : nlohmann::ordered_json(nullptr);
      j["retry_after_honoured"] =
          f.retryAfterHonoured ? nlohmann::ordered_json(*f.retryAfterHonoured) : nlohmann::ordered_json(nullptr);
      if (f.attemptLength) j["attempt_length_s"] = spreadJson(*f.attemptLength);
      faults.push_back(j);
    }
    nlohmann::ordered_json j;
    j["user_agent"] = c.userAgent;
    j["faults"] = faults;
    // The simulator's config shape: load it as policy A or B ("policy": {...}).
    j["fitted_policy"] = sim::policyToJson(c.fitted);
    j["notes"] = c.notes;
    clients.push_back(j);
  }
  return {{"clients", clients}};
}

std::string toText(const std::vector<ClientReport>& reports) {
  std::ostringstream o;
  if (reports.empty()) o << "no attempts recorded on fault routes in this window\n";
  for (const auto& c : reports) {
    o << "client: " << (c.userAgent.empty() ? "(no User-Agent)" : c.userAgent) << '\n';
    for (const auto& f : c.faults) {
      o << "  fault " << f.profile << ": " << f.operations << " operations, attempts min/p50/max " << f.attempts.min
        << '/' << f.attempts.p50 << '/' << f.attempts.max;
      o << ", key "
        << (!f.keySent   ? "not sent"
            : !f.sameKey ? "sent (sameness unknown: no op-<id>)"
            : *f.sameKey ? "kept across retries"
                         : "CHANGED between retries");
      if (f.retryAfter)
        o << ", Retry-After " << fmt(*f.retryAfter) << " s "
          << (!f.retryAfterHonoured   ? "(no retry)"
              : *f.retryAfterHonoured ? "honoured"
                                      : "NOT honoured");
      o << '\n';
      if (f.attemptLength)
        o << "    client gave up after (timeout) s: " << fmt(f.attemptLength->min) << " / " << fmt(f.attemptLength->p50)
          << " / " << fmt(f.attemptLength->max) << '\n';
      for (const auto& r : f.retries)
        o << "    retry " << r.retry << " (" << r.gap.samples << "): gap s min/p50/max " << fmt(r.gap.min) << " / "
          << fmt(r.gap.p50) << " / " << fmt(r.gap.max) << "   sleep " << fmt(r.sleep.min) << " / " << fmt(r.sleep.p50)
          << " / " << fmt(r.sleep.max) << "   offset " << fmt(r.offset.min) << " / " << fmt(r.offset.p50) << " / "
          << fmt(r.offset.max) << '\n';
    }
    o << "  fitted policy: " << sim::policyToJson(c.fitted).dump() << '\n';
    o << "    in words: " << sim::describePolicy(c.fitted) << '\n';
    for (const auto& n : c.notes) o << "  note: " << n << '\n';
  }
  return o.str();
}

}  // namespace idem::measure
