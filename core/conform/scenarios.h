#pragma once
// The scenarios, one function each, and the helpers they share to reach a verdict.
#include <optional>
#include <string>
#include <vector>

#include "core/conform/kit.h"
#include "core/conform/probe.h"

namespace idem::conform {

using Earlier = std::vector<ScenarioResult>;
using ScenarioFn = void (*)(Probe&, const Earlier&, ScenarioResult&);

struct Scenario {
  ScenarioInfo info;
  std::string draft;
  std::string expects;
  ScenarioFn run;
};

/// Every scenario, in the order they run (problem-details reads the ones before it).
[[nodiscard]] const std::vector<Scenario>& allScenarios();

void firstRequest(Probe&, const Earlier&, ScenarioResult&);
void replay(Probe&, const Earlier&, ScenarioResult&);
void payloadMismatch(Probe&, const Earlier&, ScenarioResult&);
void keyMissing(Probe&, const Earlier&, ScenarioResult&);
void keyMalformed(Probe&, const Earlier&, ScenarioResult&);
void concurrent(Probe&, const Earlier&, ScenarioResult&);
void problemDetails(Probe&, const Earlier&, ScenarioResult&);
void tenantScope(Probe&, const Earlier&, ScenarioResult&);
void expiry(Probe&, const Earlier&, ScenarioResult&);
void crossKey(Probe&, const Earlier&, ScenarioResult&);

void verdict(ScenarioResult& out, Verdict v, std::string reason);
/// "201 in 12 ms" / "no answer (Read timeout)".
[[nodiscard]] std::string brief(const Exchange& e);
/// Sends, keeps the exchange in out.exchanges and returns it.
const Exchange& sendInto(ScenarioResult& out, Probe& probe, const std::string& label, const Route& route,
                         const http::Headers& headers, const std::string& body);
/// False (and `out` failed) when the exchange got no HTTP answer.
bool answered(ScenarioResult& out, const Exchange& e);
/// The executions out.exchanges caused since `mark`; nullopt (and `out` failed) when unknown.
std::optional<long long> executionsOrFail(Probe& probe, const Mark& mark, ScenarioResult& out);
/// The first request of a keyed scenario: fails `out` unless it is answered 2xx.
bool firstSucceeds(ScenarioResult& out, const Exchange& e);
/// "the ids ch_1, ch_2" style detail for reasons.
[[nodiscard]] std::string idOf(const Probe& probe, const Exchange& e);

}  // namespace idem::conform
