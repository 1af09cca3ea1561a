// The helpers every scenario reaches its verdict with.
#include <cstdio>

#include "core/conform/scenarios.h"

namespace idem::conform {

void verdict(ScenarioResult& out, Verdict v, std::string reason) {
  // A failure found earlier in a scenario stands: a later check cannot pass it again, and a
  // later failure is added to it.
  if (out.verdict == Verdict::Fail && !out.reason.empty()) {
    if (v == Verdict::Fail) out.reason += "; " + reason;
    return;
  }
  out.verdict = v;
  out.reason = std::move(reason);
}

std::string brief(const Exchange& e) {
  if (e.status == 0) return "no answer (" + e.error + ")";
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.0f", e.ms);
  return std::to_string(e.status) + " in " + ms + " ms";
}

const Exchange& sendInto(ScenarioResult& out, Probe& probe, const std::string& label, const Route& route,
                         const http::Headers& headers, const std::string& body) {
  out.exchanges.push_back(probe.send(label, route, headers, body));
  return out.exchanges.back();
}

bool answered(ScenarioResult& out, const Exchange& e) {
  if (e.status != 0) return true;
  verdict(out, Verdict::Fail, "\"" + e.label + "\" got " + brief(e));
  return false;
}

std::optional<long long> executionsOrFail(Probe& probe, const Mark& mark, ScenarioResult& out) {
  auto counted = probe.executions(mark, out.exchanges);
  if (!counted.n) verdict(out, Verdict::Fail, "cannot count executions: " + counted.detail);
  return counted.n;
}

bool firstSucceeds(ScenarioResult& out, const Exchange& e) {
  if (!answered(out, e)) return false;
  if (succeeded(e)) return true;
  verdict(out, Verdict::Fail,
          "the first request got " + brief(e) + ", not a 2xx: check --route, --body and --header (auth) first");
  return false;
}

std::string idOf(const Probe& probe, const Exchange& e) {
  auto id = probe.resourceId(e);
  return id ? *id : std::string("(no ") + probe.options().idField + ")";
}

}  // namespace idem::conform
