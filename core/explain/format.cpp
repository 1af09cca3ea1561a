#include "core/explain/format.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/explain/format_parts.h"
#include "core/text/json_text.h"

namespace idem::explain {
namespace {

using json = nlohmann::ordered_json;

json opt(const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); }
json opt(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }
json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json opt(const std::optional<Instant>& v) { return v ? json(isoUtc(*v)) : json(nullptr); }

// Times in tables and the timeline: to the second, in the explanation's zone.
std::string at(const Explanation& x, Instant t) { return text::humanTime(t.micros, x.zone, text::TimePrecision::Second); }

std::string orDash(const std::optional<std::string>& v) { return v && !v->empty() ? *v : "-"; }
std::string orDash(const std::optional<int>& v) { return v ? std::to_string(*v) : "-"; }

std::string latency(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ms < 10 ? "%.1f ms" : "%.0f ms", ms);
  return buf;
}

std::string archivedText(const Explanation& x, const Generation& g) {
  if (g.live) return "live";
  std::string out = g.archivedAt ? at(x, *g.archivedAt) : "archived";
  if (!g.archivedBy.empty()) out += " (" + g.archivedBy + ")";
  return out;
}

// Plain columns padded to the widest cell.
std::string table(const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], r[c].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line = indent;
    for (std::size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

// A table cell: pipes escaped, line breaks flattened.
std::string mdCell(std::string v) {
  std::string out;
  for (char ch : v) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else out += ch;
  }
  return out;
}

std::string eventDetails(const Explanation& x, const Event& e, bool markdown) {
  std::vector<std::string> parts;
  if (e.generation) parts.push_back("generation " + std::to_string(*e.generation));
  if (e.status) parts.push_back(std::to_string(*e.status));
  if (e.repeats > 1)
    parts.push_back(std::to_string(e.repeats) + " identical decisions" +
                    (e.lastAt ? " until " + at(x, *e.lastAt) : std::string()) + ", folded into one trace row");
  const bool folded = e.repeats > 1;
  if (e.latencyMs) parts.push_back((folded ? "slowest " : "") + latency(*e.latencyMs));
  if (e.requestId && !e.requestId->empty())
    parts.push_back((folded ? "last request " : "request ") + (markdown ? markdownCode(*e.requestId) : *e.requestId));
  if (e.relatedKey) parts.push_back("matches key " + (markdown ? markdownCode(*e.relatedKey) : *e.relatedKey));
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

int totalReplays(const Explanation& x) {
  int n = 0;
  for (const auto& s : x.generations) n += s.replays;
  return n;
}

}  // namespace

std::string wrapWords(const std::string& text, std::size_t width, const std::string& indent) {
  std::istringstream in(text);
  std::string word;
  std::string line;
  std::string out;
  while (in >> word) {
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

std::string markdownCode(const std::string& v) {
  std::size_t run = 0;
  std::size_t longest = 0;
  for (char ch : v) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !v.empty() && (v.front() == '`' || v.back() == '`');
  return fence + (pad ? " " : "") + v + (pad ? " " : "") + fence;
}

std::string markdownText(const std::string& v) {
  std::string out;
  for (char ch : v) {
    if (ch == '\\' || ch == '*' || ch == '_' || ch == '`' || ch == '[' || ch == ']' || ch == '<' || ch == '>' ||
        ch == '|' || ch == '#')
      out += '\\';
    out += ch;
  }
  return out;
}


nlohmann::ordered_json toJson(const Explanation& x, Audience audience) {
  if (audience == Audience::Customer) return customerJson(x);
  const auto& h = x.history;
  json gens = json::array();
  for (std::size_t i = 0; i < h.generations.size(); ++i) {
    const auto& g = h.generations[i];
    const auto& s = x.generations[i];
    json policy = nullptr;
    if (g.policy) {
      policy = {{"version", g.policy->version},
                {"effective_at", isoUtc(g.policy->effectiveAt)},
                {"sha256", g.policy->sha256},
                {"recorded", g.policy->recorded},
                {"tier", json::parse(text::dumpJson(g.policy->tier))}};
    }
    gens.push_back({{"generation", g.number},
                    {"live", g.live},
                    {"state", g.state},
                    {"tier", g.tier},
                    {"status", opt(g.status)},
                    {"resource_ref", opt(g.resourceRef)},
                    {"request_id", opt(g.requestId)},
                    {"fingerprint", g.fingerprintHex},
                    {"created_at", isoUtc(g.createdAt)},
                    {"completed_at", opt(g.completedAt)},
                    {"expires_at", isoUtc(g.expiresAt)},
                    {"lease_until", opt(g.leaseUntil)},
                    {"archived_at", opt(g.archivedAt)},
                    {"archived_by", g.live ? json(nullptr) : json(g.archivedBy)},
                    {"purge_after", opt(g.purgeAfter)},
                    {"body_dropped_at", opt(g.bodyDroppedAt)},
                    {"policy_version", opt(g.policyVersion)},
                    {"policy", policy},
                    {"executions", s.executions},
                    {"replays", s.replays},
                    {"conflicts", s.conflicts},
                    {"mismatches", s.mismatches},
                    {"rejected_expired", s.rejectedExpired},
                    {"lease_takeovers", s.takeovers},
                    {"released", s.released},
                    {"after_expiry", s.afterExpiry},
                    {"in_doubt", s.inDoubt}});
  }
  json events = json::array();
  for (const auto& e : h.events) {
    events.push_back({{"at", isoUtc(e.at)},
                      {"outcome", e.outcome},
                      {"generation", opt(e.generation)},
                      {"status", opt(e.status)},
                      {"latency_ms", opt(e.latencyMs)},
                      {"request_id", opt(e.requestId)},
                      {"detail", opt(e.detail)},
                      {"repeats", e.repeats},
                      {"last_at", e.lastAt ? json(isoUtc(*e.lastAt)) : json(nullptr)},
                      {"related_key", opt(e.relatedKey)}});
  }
  return {{"scope", h.scope.text()},
          {"service", h.scope.service},
          {"tenant", h.scope.tenant},
          {"endpoint", h.scope.endpoint},
          {"key", h.key},
          {"observed_at", isoUtc(h.observedAt)},
          {"time_zone", x.zone.name()},
          {"executions", x.executions},
          {"in_doubt", x.inDoubt},
          {"unanswered", x.unanswered},
          {"cause", x.cause.empty() ? json(nullptr) : json(x.cause)},
          {"generations", gens},
          {"events", events},
          {"narrative", x.narrative},
          {"duplicates_across_keys", crossKeyJson(x)},
          {"resolution", resolutionJson(x.resolution)}};
}

std::string toText(const Explanation& x, Audience audience) {
  if (audience == Audience::Customer) return customerText(x, 100);
  const auto& h = x.history;
  std::string out;
  out += "Key:         " + h.key + "\n";
  out += "Scope:       " + h.scope.text() + "\n";
  out += "Service:     " + h.scope.service + "\n";
  out += "Executions:  " + std::to_string(x.executions);
  if (x.unanswered > 0) out += " (" + std::to_string(x.unanswered) + " with no answer from the service)";
  if (x.inDoubt > 0) out += " (+" + std::to_string(x.inDoubt) + " in doubt)";
  out += "\n";
  if (!x.cause.empty()) out += "Cause:       " + x.cause + "\n";
  out += "Observed at: " + at(x, h.observedAt) + "\n\n";

  out += "Generations:\n";
  std::vector<std::vector<std::string>> rows{
      {"gen", "state", "status", "resource", "created", "expires", "archived", "replays", "policy"}};
  for (std::size_t i = 0; i < h.generations.size(); ++i) {
    const auto& g = h.generations[i];
    rows.push_back({std::to_string(g.number), g.state, orDash(g.status), orDash(g.resourceRef), at(x, g.createdAt),
                    at(x, g.expiresAt), archivedText(x, g), std::to_string(x.generations[i].replays),
                    g.policy ? "v" + std::to_string(g.policy->version) : "-"});
  }
  if (h.generations.empty()) rows.push_back({"(none stored)"});
  out += table(rows, "  ");

  out += "\nEvents:\n";
  std::vector<std::vector<std::string>> ev;
  for (const auto& e : h.events) ev.push_back({at(x, e.at), e.outcome, eventDetails(x, e, false)});
  if (ev.empty()) ev.push_back({"(no events recorded)"});
  out += table(ev, "  ");

  out += "\nWhat happened:\n" + wrapWords(x.narrative, 100, "  ");
  out += crossKeyText(x, 100);
  out += resolutionText(x, 100);
  return out;
}

std::string toMarkdown(const Explanation& x, std::size_t maxTimelineEvents, Audience audience) {
  if (audience == Audience::Customer) return customerMarkdown(x);
  const auto& h = x.history;
  std::string out;
  out += "## Idempotency key " + markdownCode(h.key) + " — " + markdownText(h.scope.label()) + "\n\n";
  out += "**Executions: " + std::to_string(x.executions) + "**";
  if (x.inDoubt > 0) out += " (+" + std::to_string(x.inDoubt) + " in doubt)";
  out += " · generations: " + std::to_string(h.generations.size()) + " · replays: " + std::to_string(totalReplays(x));
  out += " · observed at " + at(x, h.observedAt) + "\n\n";
  out += markdownText(x.narrative) + "\n\n";
  out += resolutionMarkdown(x);
  out += crossKeyMarkdown(x);

  out += "### Generations\n\n";
  out += "| Generation | State | Status | Resource | Created | Expires | Archived | Replays | Policy |\n";
  out += "|---:|---|---:|---|---|---|---|---:|---|\n";
  for (std::size_t i = 0; i < h.generations.size(); ++i) {
    const auto& g = h.generations[i];
    out += "| " + std::to_string(g.number) + " | " + g.state + " | " + orDash(g.status) + " | " +
           (g.resourceRef && !g.resourceRef->empty() ? mdCell(markdownCode(*g.resourceRef)) : "-") + " | " +
           at(x, g.createdAt) + " | " + at(x, g.expiresAt) + " | " + archivedText(x, g) + " | " +
           std::to_string(x.generations[i].replays) + " | " +
           (g.policy ? "v" + std::to_string(g.policy->version) : "-") + " |\n";
  }
  if (h.generations.empty()) out += "| - | no generation stored | | | | | | | |\n";

  out += "\n### Timeline\n\n";
  std::size_t listed = 0;
  for (const auto& e : h.events) {
    if (listed++ == maxTimelineEvents) {
      out += "- … and " + std::to_string(h.events.size() - maxTimelineEvents) +
             " more events (the full trace: `idemctl explain --format json`)\n";
      break;
    }
    std::string details = eventDetails(x, e, true);
    out += "- **" + at(x, e.at) + "** — " + markdownText(e.outcome) + (details.empty() ? "" : " (" + details + ")") + "\n";
  }
  if (h.events.empty()) out += "- no events recorded\n";
  return out;
}

std::string render(const Explanation& x, Format format, Audience audience) {
  switch (format) {
    case Format::Json:
      return text::dumpJson(toJson(x, audience), 2) + "\n";  // stored keys and bodies are client bytes
    case Format::Markdown:
      return toMarkdown(x, std::numeric_limits<std::size_t>::max(), audience);
    case Format::Text:
      break;
  }
  return toText(x, audience);
}

}  // namespace idem::explain
