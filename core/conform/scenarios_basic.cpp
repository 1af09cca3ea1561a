// The scenarios of one key on one route: execute, replay, mismatch, missing and malformed keys.
#include <nlohmann/json.hpp>

#include "core/conform/scenarios.h"
#include "core/text/json_text.h"

namespace idem::conform {

namespace {

// The body with one member changed: a number +1, a string suffixed, a boolean flipped.
std::optional<std::string> varied(const std::string& body, const std::string& field, std::string& why) {
  nlohmann::ordered_json value;
  try {
    value = nlohmann::ordered_json::parse(body);
  } catch (const std::exception&) {
    why = "the body is not JSON, so the kit cannot make another payload from it";
    return std::nullopt;
  }
  if (!value.is_object() || value.empty()) {
    why = "the body is not a JSON object with a member to change";
    return std::nullopt;
  }
  const std::string name = field.empty() ? value.begin().key() : field;
  if (!value.contains(name)) {
    why = "the body has no member \"" + name + "\" (--vary-field)";
    return std::nullopt;
  }
  auto& member = value[name];
  if (member.is_number_integer()) member = member.get<long long>() + 1;
  else if (member.is_number()) member = member.get<double>() + 1;
  else if (member.is_string()) member = member.get<std::string>() + "-other";
  else if (member.is_boolean()) member = !member.get<bool>();
  else member = "conform-other";
  return value.dump();
}

// The headers a replay must carry as the first answer had them; "" when all do.
std::string lostHeaders(const Options& options, const Exchange& first, const Exchange& retry) {
  std::string lost;
  for (const auto& name : options.replayHeaders) {
    const auto was = http::findHeader(first.responseHeaders, name);
    if (!was) continue;
    const auto now = http::findHeader(retry.responseHeaders, name);
    if (!now) lost += (lost.empty() ? "" : ", ") + name + " missing (was \"" + std::string(*was) + "\")";
    else if (*now != *was)
      lost += (lost.empty() ? "" : ", ") + name + " \"" + std::string(*now) + "\" (was \"" + std::string(*was) + "\")";
  }
  return lost;
}

// A refusal expected of every request in `out` after `from`: `status` each, and nothing executed.
void expectRefusals(Probe& probe, const Mark& mark, ScenarioResult& out, int status, std::size_t from,
                    long long executionsAllowed) {
  std::string wrong;
  for (std::size_t i = from; i < out.exchanges.size(); ++i) {
    const auto& e = out.exchanges[i];
    if (!answered(out, e)) return;
    if (e.status != status) wrong += (wrong.empty() ? "" : "; ") + e.label + " got " + brief(e);
  }
  const auto n = executionsOrFail(probe, mark, out);
  if (!n) return;
  if (!wrong.empty()) verdict(out, Verdict::Fail, "expected " + std::to_string(status) + "; " + wrong);
  if (*n > executionsAllowed)
    verdict(out, Verdict::Fail,
            "executed " + std::to_string(*n - executionsAllowed) + " time(s) where nothing should have run");
  std::string labels;
  for (std::size_t i = from; i < out.exchanges.size(); ++i) labels += (labels.empty() ? "" : ", ") + out.exchanges[i].label;
  verdict(out, Verdict::Pass,
          std::to_string(status) + " for " + labels + (executionsAllowed ? "; no further execution" : "; nothing executed"));
}

}  // namespace

void firstRequest(Probe& probe, const Earlier&, ScenarioResult& out) {
  const auto mark = probe.mark();
  const auto& first = sendInto(out, probe, "first", probe.options().route, probe.headers(probe.newKey(out.name)),
                               probe.body(out.name));
  if (!firstSucceeds(out, first)) return;
  const auto n = executionsOrFail(probe, mark, out);
  if (!n) return;
  if (*n != 1) return verdict(out, Verdict::Fail, brief(first) + ", but " + std::to_string(*n) + " executions counted");
  verdict(out, Verdict::Pass, brief(first) + ", executed once (" + idOf(probe, first) + ")");
}

void replay(Probe& probe, const Earlier&, ScenarioResult& out) {
  const auto& route = probe.options().route;
  const auto key = probe.newKey(out.name);
  const auto body = probe.body(out.name);
  const auto mark = probe.mark();
  sendInto(out, probe, "first", route, probe.headers(key), body);
  if (!firstSucceeds(out, out.exchanges[0])) return;
  sendInto(out, probe, "retry", route, probe.headers(key), body);
  const auto& first = out.exchanges[0];
  const auto& retry = out.exchanges[1];
  if (!answered(out, retry)) return;
  const auto n = executionsOrFail(probe, mark, out);
  if (!n) return;
  if (*n != 1) verdict(out, Verdict::Fail, "executed " + std::to_string(*n) + " times (" + idOf(probe, first) + ", " +
                                               idOf(probe, retry) + ")");
  if (retry.status != first.status)
    verdict(out, Verdict::Fail, "status " + std::to_string(retry.status) + ", the first was " + std::to_string(first.status));
  if (retry.responseBody != first.responseBody)
    verdict(out, Verdict::Fail, "the body differs from the first answer's (" + std::to_string(retry.responseBody.size()) +
                                    " bytes, the first " + std::to_string(first.responseBody.size()) + ")");
  if (auto lost = lostHeaders(probe.options(), first, retry); !lost.empty()) verdict(out, Verdict::Fail, "headers: " + lost);
  const auto marker = http::findHeader(retry.responseHeaders, "Idempotent-Replayed");
  verdict(out, Verdict::Pass,
          "the same " + std::to_string(retry.status) + ", body and kept headers; one execution" +
              (marker ? "; marked Idempotent-Replayed: " + std::string(*marker) : "; no Idempotent-Replayed marker"));
}

void payloadMismatch(Probe& probe, const Earlier&, ScenarioResult& out) {
  const auto body = probe.body(out.name);
  std::string why;
  const auto other = varied(body, probe.options().varyField, why);
  if (!other) return verdict(out, Verdict::Skip, why);
  const auto key = probe.newKey(out.name);
  const auto mark = probe.mark();
  sendInto(out, probe, "first", probe.options().route, probe.headers(key), body);
  if (!firstSucceeds(out, out.exchanges[0])) return;
  sendInto(out, probe, "other body", probe.options().route, probe.headers(key), *other);
  expectRefusals(probe, mark, out, 422, 1, 1);
}

void keyMissing(Probe& probe, const Earlier&, ScenarioResult& out) {
  const auto mark = probe.mark();
  sendInto(out, probe, "no key", probe.options().route, probe.headers(""), probe.body(out.name));
  expectRefusals(probe, mark, out, 400, 0, 0);
}

void keyMalformed(Probe& probe, const Earlier&, ScenarioResult& out) {
  const auto& o = probe.options();
  const auto body = probe.body(out.name);
  const auto mark = probe.mark();
  // Each is malformed under a lenient reading too (a bare token is accepted by some servers).
  sendInto(out, probe, "empty key", o.route, probe.headers("\"\""), body);
  sendInto(out, probe, "unterminated sf-string", o.route, probe.headers("\"conform-" + probe.runId() + "-open"), body);
  const std::string longKey = "\"" + std::string(o.maxKeyLength + 1, 'k') + "\"";
  sendInto(out, probe, "key of " + std::to_string(o.maxKeyLength + 1) + " characters", o.route, probe.headers(longKey),
           body);
  auto twice = probe.headers(probe.newKey(out.name));
  twice.emplace_back(o.keyHeader, probe.newKey(out.name));
  sendInto(out, probe, "two " + o.keyHeader + " fields", o.route, twice, body);
  expectRefusals(probe, mark, out, 400, 0, 0);
}

}  // namespace idem::conform
