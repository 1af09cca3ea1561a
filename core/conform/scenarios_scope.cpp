// The scenarios about what a refusal says and whose key it is: problem details on every 4xx,
// keys scoped per tenant, and the same body under two keys.
#include <algorithm>

#include "core/conform/scenarios.h"
#include "core/text/json_text.h"

namespace idem::conform {

namespace {

bool refusal(const Exchange& e) { return e.status >= 400 && e.status < 500; }

// Why this 4xx is not a problem document; "" when it is (or carries the draft's Link instead).
std::string notAProblem(const Exchange& e, bool& linkOnly) {
  const auto type = http::findHeader(e.responseHeaders, "Content-Type");
  const std::string contentType = type ? std::string(*type) : std::string();
  const bool problemJson = contentType.rfind("application/problem+json", 0) == 0;
  if (!problemJson) {
    const auto link = http::findHeader(e.responseHeaders, "Link");
    if (link && link->find("describedby") != std::string_view::npos) {
      linkOnly = true;
      return {};
    }
    return "Content-Type " + (contentType.empty() ? std::string("missing") : "\"" + contentType + "\"");
  }
  auto body = text::parseClientJson(e.responseBody);
  if (body.error != text::ClientJson::Error::None || !body.value.is_object()) return "the body is not a JSON object";
  std::string missing;
  for (const char* member : {"type", "title"})
    if (!body.value.contains(member) || !body.value[member].is_string())
      missing += (missing.empty() ? "" : " and ") + std::string(member);
  return missing.empty() ? std::string() : "no string " + missing;
}

}  // namespace

void problemDetails(Probe&, const Earlier& earlier, ScenarioResult& out) {
  static const char* const kRefusing[] = {"payload-mismatch", "key-missing", "key-malformed", "concurrent"};
  bool ranOne = false;
  int checked = 0, viaLink = 0;
  std::string wrong;
  for (const auto& s : earlier) {
    if (std::find(std::begin(kRefusing), std::end(kRefusing), s.name) == std::end(kRefusing)) continue;
    ranOne = ranOne || s.verdict != Verdict::Skip;
    for (const auto& e : s.exchanges) {
      if (!refusal(e)) continue;
      ++checked;
      bool linkOnly = false;
      const auto why = notAProblem(e, linkOnly);
      viaLink += linkOnly ? 1 : 0;
      out.exchanges.push_back(e);
      out.exchanges.back().label = s.name + ": " + e.label;
      if (!why.empty())
        wrong += (wrong.empty() ? "" : "; ") + std::to_string(e.status) + " (" + s.name + ", " + e.label + "): " + why;
    }
  }
  if (!ranOne)
    return verdict(out, Verdict::Skip,
                   "no scenario that expects a 4xx ran before it (payload-mismatch, key-missing, key-malformed, "
                   "concurrent)");
  if (checked == 0)
    return verdict(out, Verdict::Fail, "no 4xx answer to check: the service refused nothing the draft says to refuse");
  if (!wrong.empty()) return verdict(out, Verdict::Fail, wrong);
  verdict(out, Verdict::Pass,
          "all " + std::to_string(checked) + " 4xx answers are problem+json with type and title" +
              (viaLink ? " (" + std::to_string(viaLink) + " by the draft's Link rel=describedby instead)" : ""));
}

void tenantScope(Probe& probe, const Earlier&, ScenarioResult& out) {
  const auto& o = probe.options();
  if (o.tenantHeader.empty())
    return verdict(out, Verdict::Skip, "no --tenant-header: the kit does not know how the service tells tenants apart");
  const auto key = probe.newKey(out.name);
  const auto body = probe.body(out.name);
  const auto mark = probe.mark();
  sendInto(out, probe, "tenant " + probe.tenant(0), o.route, probe.headers(key, 0), body);
  if (!firstSucceeds(out, out.exchanges[0])) return;
  sendInto(out, probe, "tenant " + probe.tenant(1) + ", same key", o.route, probe.headers(key, 1), body);
  sendInto(out, probe, "tenant " + probe.tenant(0) + " again", o.route, probe.headers(key, 0), body);
  sendInto(out, probe, "tenant " + probe.tenant(1) + " again", o.route, probe.headers(key, 1), body);
  for (const auto& e : out.exchanges)
    if (!answered(out, e)) return;
  const auto& a = out.exchanges[0];
  const auto& b = out.exchanges[1];
  const auto& aAgain = out.exchanges[2];
  const auto& bAgain = out.exchanges[3];
  const auto n = executionsOrFail(probe, mark, out);
  if (!n) return;
  if (succeeded(b) && b.responseBody == a.responseBody)
    return verdict(out, Verdict::Fail,
                   "tenant " + probe.tenant(1) + " got tenant " + probe.tenant(0) + "'s answer (" + idOf(probe, b) +
                       "): keys are not scoped per tenant, one client sees another's response");
  if (!succeeded(b))
    return verdict(out, Verdict::Fail,
                   "tenant " + probe.tenant(1) + " was refused (" + brief(b) + ") for a key only tenant " +
                       probe.tenant(0) + " used: keys are shared across tenants");
  if (*n != 2) verdict(out, Verdict::Fail, std::to_string(*n) + " executions for two tenants' first requests and retries");
  // Whose answer a retry got is in its body; replay fidelity (status, headers) is replay's check.
  if (aAgain.responseBody != a.responseBody)
    verdict(out, Verdict::Fail, "tenant " + probe.tenant(0) + "'s retry got " + brief(aAgain) + ", not its own answer");
  if (bAgain.responseBody != b.responseBody)
    verdict(out, Verdict::Fail, "tenant " + probe.tenant(1) + "'s retry got " + brief(bAgain) + ", not its own answer");
  verdict(out, Verdict::Pass,
          "each tenant executed once (" + idOf(probe, a) + ", " + idOf(probe, b) + ") and each retry replayed its own");
}

void crossKey(Probe& probe, const Earlier&, ScenarioResult& out) {
  const auto& o = probe.options();
  const auto body = probe.body(out.name);
  const auto mark = probe.mark();
  sendInto(out, probe, "first key", o.route, probe.headers(probe.newKey(out.name)), body);
  if (!firstSucceeds(out, out.exchanges[0])) return;
  const auto secondKey = probe.newKey(out.name);
  sendInto(out, probe, "same body, another key", o.route, probe.headers(secondKey), body);
  const auto& second = out.exchanges[1];
  if (!answered(out, second)) return;
  const auto n = executionsOrFail(probe, mark, out);
  if (!n) return;
  const bool twice = succeeded(second) && *n == 2;
  const bool held = second.status == 409 && *n == 1;
  const bool refused = refusal(second) && second.status != 409 && *n == 1;
  const std::string seen = twice  ? "executed twice (" + idOf(probe, out.exchanges[0]) + ", " + idOf(probe, second) + ")"
                           : held    ? "held: 409 for the second key, nothing executed"
                           : refused ? "refused: " + brief(second) + " for the second key, nothing executed"
                                     : brief(second) + " for the second key, " + std::to_string(*n) + " execution(s)";
  switch (o.crossKey) {
    case CrossKey::Unstated:
      return verdict(out, Verdict::Info, seen + " (give --expect-cross-key to hold the service to a promise)");
    case CrossKey::Off:
    case CrossKey::Observe:
      return verdict(out, twice ? Verdict::Pass : Verdict::Fail, seen + " (expected: executed twice)");
    case CrossKey::Reject:
      return verdict(out, refused || held ? Verdict::Pass : Verdict::Fail, seen + " (expected: refused)");
    case CrossKey::Hold:
      break;
  }
  if (!held) return verdict(out, Verdict::Fail, seen + " (expected: held with 409)");
  if (o.crossKeyConfirm.empty()) return verdict(out, Verdict::Pass, seen);
  // The client confirms it means a second one: the held request now executes.
  auto confirmed = probe.headers(secondKey);
  confirmed.insert(confirmed.end(), o.crossKeyConfirm.begin(), o.crossKeyConfirm.end());
  const auto& third = sendInto(out, probe, "confirmed on purpose", o.route, confirmed, body);
  if (!answered(out, third)) return;
  const auto after = executionsOrFail(probe, mark, out);
  if (!after) return;
  verdict(out, succeeded(third) && *after == 2 ? Verdict::Pass : Verdict::Fail,
          seen + "; confirmed: " + brief(third) + ", " + std::to_string(*after) + " execution(s) in all");
}

}  // namespace idem::conform
