// The published policy as JSON (draft §2.3): what a client may rely on, per tier.
#include "core/policy/policy.h"

namespace idem::policy {
namespace {

using nlohmann::json;

// Whole seconds as an integer, as clients compute with them; a sub-second TTL keeps its
// fraction rather than rounding to a promise the server does not keep.
json seconds(Millis d) {
  if (d.count() % 1000 == 0) return d.count() / 1000;
  return static_cast<double>(d.count()) / 1000.0;
}

// A duration as the policy file wrote it ("24h" stays "24h", not "1d") when the document
// still says the same as the parsed tier; otherwise, e.g. for a Policy built in code, the
// largest exact unit.
std::string written(const json* writtenAs, Millis d) {
  if (writtenAs != nullptr && writtenAs->is_string()) {
    const auto& text = writtenAs->get_ref<const std::string&>();
    if (parseDuration(text) == d) return text;
  }
  return formatDuration(d);
}

const json* field(const json* object, std::string_view name) {
  if (object == nullptr || !object->is_object()) return nullptr;
  const auto it = object->find(name);
  return it == object->end() ? nullptr : &*it;
}

json tierJson(const Tier& t, const json* doc, OnTakeover frontTakeover) {
  json windows = json::object();
  for (const auto& [name, d] : t.referenceWindows)
    windows[name] = written(field(field(doc, "reference_windows"), name), d);
  std::string onConflict = onConflictName(t.onConflict);
  if (const json* w = field(doc, "on_conflict"); t.onConflict.wait && w != nullptr && w->is_string()) {
    const auto& text = w->get_ref<const std::string&>();
    if (text.starts_with("wait:") && parseDuration(std::string_view(text).substr(5)) == t.onConflict.waitFor)
      onConflict = text;
  }
  return {
      {"name", t.name},
      {"routes", t.routes},
      {"rollout", rolloutName(t.rollout)},
      // What a client must send: under observe and when-present a request without a key passes.
      {"key_required", t.keyRequired()},
      {"ttl", written(field(doc, "ttl"), t.ttl)},
      {"ttl_seconds", seconds(t.ttl)},
      {"lease", written(field(doc, "lease"), t.lease)},
      {"on_expired", onExpiredName(t.onExpired)},
      // What this front does when the tier does not say (serve executes, the proxy does not).
      {"on_takeover", onTakeoverName(t.onTakeover == OnTakeover::FrontDecides ? frontTakeover : t.onTakeover)},
      {"on_conflict", onConflict},
      {"cache", cacheRuleName(t.cache)},
      {"fingerprint",
       {{"mode", fp::modeName(t.fingerprint.mode)},
        {"fields", t.fingerprint.fields},
        {"headers", t.fingerprint.headers}}},
      {"archive_retention", written(field(doc, "archive_retention"), t.archiveRetention)},
      {"body_retention", t.bodyRetention ? json(written(field(doc, "body_retention"), *t.bodyRetention)) : json(nullptr)},
      {"reference_windows", windows},
      // Empty means the defaults to the enforcer, so it does here too.
      {"replay_headers", t.replayHeaders.empty() ? defaultReplayHeaders() : t.replayHeaders},
      // Where a response says how much was charged: null when the policy names none.
      {"amount", amountPathsJson(t.amount)},
      // What a client whose request matches another key's execution is answered, and how it
      // says it means a second operation.
      {"cross_key",
       t.crossKey.on() ? json{{"mode", crossKeyModeName(t.crossKey.mode)},
                              {"window", written(field(field(doc, "cross_key"), "window"), t.crossKey.window)},
                              {"confirm_header", kDuplicateConfirmedHeader}}
                       : json{{"mode", "off"}}},
  };
}

}  // namespace

json publishedJson(const Policy& policy, OnTakeover frontTakeover) {
  json tiers = json::array();
  const json* written = field(&policy.document, "tiers");
  for (std::size_t i = 0; i < policy.tiers.size(); ++i) {
    // The document's tier i is policy.tiers[i] when both came from parsePolicy; a name check
    // keeps a hand-built or edited Policy from borrowing another tier's spelling.
    const json* doc = written != nullptr && written->is_array() && i < written->size() ? &(*written)[i] : nullptr;
    if (const json* name = field(doc, "name"); name == nullptr || *name != policy.tiers[i].name) doc = nullptr;
    tiers.push_back(tierJson(policy.tiers[i], doc, frontTakeover));
  }
  return {
      {"docs_url", policy.docsUrl},
      {"tenant_header", policy.tenantHeader},
      {"key_header", "Idempotency-Key"},
      {"expiry_header", "Idempotency-Expires"},
      {"tiers", tiers},
  };
}

}  // namespace idem::policy
