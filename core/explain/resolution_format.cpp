// The resolution (for support) and the customer's explanation as JSON, text and Markdown.
#include <algorithm>

#include "core/explain/format_parts.h"
#include "core/text/humanduration.h"

namespace idem::explain {
namespace {

using json = nlohmann::ordered_json;

std::string spoken(const Explanation& x, Instant t) { return text::humanTime(t.micros, x.zone); }

json orNull(const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); }

// {"currency": "USD", "value": "2499.00", "text": "$2,499.00"}: the exact decimal as text.
json moneyJson(const std::optional<policy::Money>& m) {
  if (!m) return nullptr;
  return {{"currency", m->currency}, {"value", (m->negative ? "-" : "") + m->digits}, {"text", policy::formatMoney(*m)}};
}

// " $2,499.00", or why the amount is unknown, or nothing when the policy names no amount.
std::string amountWords(const Execution& e) {
  if (e.amount) return policy::formatMoney(*e.amount);
  return e.amountProblem.empty() ? std::string() : "amount unknown: " + e.amountProblem;
}

std::string roleWords(ExecutionRole role) {
  switch (role) {
    case ExecutionRole::Intended: return "intended";
    case ExecutionRole::Duplicate: return "DUPLICATE";
    case ExecutionRole::PossibleDuplicate: return "possible duplicate";
    case ExecutionRole::SeparateRequest: return "separate request";
    case ExecutionRole::NoEffect: return "no effect";
    case ExecutionRole::OutcomeUnknown: return "outcome unknown";
    case ExecutionRole::SuspectedDuplicate: return "SUSPECTED DUPLICATE (another key)";
  }
  return "";
}

}  // namespace

nlohmann::ordered_json resolutionJson(const Resolution& r) {
  json executions = json::array();
  for (const auto& e : r.executions)
    executions.push_back({{"generation", e.generation},
                          {"at", isoUtc(e.at)},
                          {"outcome", e.outcome},
                          {"resource", orNull(e.resource)},
                          {"request_id", orNull(e.requestId)},
                          {"status", e.status ? json(*e.status) : json(nullptr)},
                          {"role", roleName(e.role)},
                          {"reason", e.reason},
                          {"after_expiry_ms", e.afterExpiry ? json(e.afterExpiry->count() / 1000) : json(nullptr)},
                          {"amount", moneyJson(e.amount)},
                          {"amount_problem", e.amountProblem.empty() ? json(nullptr) : json(e.amountProblem)}});
  json prevention = nullptr;
  if (r.prevention) {
    const auto& p = *r.prevention;
    prevention = {{"tier", p.tier},
                  {"setting", p.setting},
                  {"current", p.current ? json(text::humanDuration(*p.current)) : json(nullptr)},
                  {"current_ms", p.current ? json(p.current->count()) : json(nullptr)},
                  {"observed_ms", p.observed.count() / 1000},
                  {"suggested", text::humanDuration(p.suggested)},
                  {"suggested_ms", p.suggested.count()},
                  {"text", p.text}};
  }
  return {{"action", actionName(r.action)},
          {"duplicates", r.duplicates},
          {"possible_duplicates", r.possibleDuplicates},
          {"proposal", r.proposal.empty() ? json(nullptr) : json(r.proposal)},
          {"executions", executions},
          {"prevention", prevention}};
}

std::string resolutionText(const Explanation& x, std::size_t width) {
  const Resolution& r = x.resolution;
  std::string out = "\nExecutions:\n";
  if (r.executions.empty()) out += "  (none)\n";
  for (const auto& e : r.executions) {
    out += "  " + spoken(x, e.at) + "  generation " + std::to_string(e.generation) + "  " +
           e.resource.value_or("(resource not stored)") + "  " + roleWords(e.role);
    if (const std::string amount = amountWords(e); !amount.empty()) out += "  " + amount;
    out += e.reason.empty() ? "\n" : "\n" + wrapWords(e.reason, width, "      ");
  }
  if (!r.proposal.empty()) out += "\nResolution:\n" + wrapWords(r.proposal, width, "  ");
  if (r.prevention) out += "\nPrevention:\n" + wrapWords(r.prevention->text, width, "  ");
  return out;
}

std::string resolutionMarkdown(const Explanation& x) {
  const Resolution& r = x.resolution;
  std::string out;
  if (!r.proposal.empty()) out += "**Resolution:** " + markdownText(r.proposal) + "\n\n";
  if (r.prevention) out += "**Prevention:** " + markdownText(r.prevention->text) + "\n\n";
  if (r.executions.empty()) return out;
  // An Amount column only when the policy names where to read one.
  const bool amounts = std::any_of(r.executions.begin(), r.executions.end(),
                                   [](const Execution& e) { return !amountWords(e).empty(); });
  out += amounts ? "### Executions\n\n| When | Generation | Resource | Amount | Role | Why |\n|---|---:|---|---:|---|---|\n"
                 : "### Executions\n\n| When | Generation | Resource | Role | Why |\n|---|---:|---|---|---|\n";
  for (const auto& e : r.executions) {
    const std::string role = e.role == ExecutionRole::Duplicate            ? "**duplicate**"
                             : e.role == ExecutionRole::SuspectedDuplicate ? "**suspected duplicate** (another key)"
                                                                           : roleWords(e.role);
    out += "| " + spoken(x, e.at) + " | " + std::to_string(e.generation) + " | " +
           (e.resource ? markdownCode(*e.resource) : std::string("not stored")) + " | " +
           (amounts ? markdownText(amountWords(e)) + " | " : std::string()) + role + " | " +
           markdownText(e.reason) + " |\n";
  }
  return out + "\n";
}

nlohmann::ordered_json crossKeyJson(const Explanation& x) {
  json out = json::array();
  for (const auto& f : x.crossKey)
    out.push_back({{"this_key", f.thisKeyIsLater ? "later" : "earlier"},
                   {"outcome", trace::sqlName(f.outcome)},
                   {"at", isoUtc(f.at)},
                   {"earlier_key", f.earlierKey},
                   {"earlier_resource", orNull(f.earlierResource)},
                   {"earlier_at", f.earlierAt ? json(isoUtc(*f.earlierAt)) : json(nullptr)},
                   {"later_key", f.laterKey},
                   {"later_resource", orNull(f.laterResource)},
                   {"gap_ms", f.gap ? json(f.gap->count() / 1000) : json(nullptr)},
                   {"both_ran", f.bothRan()},
                   {"text", f.text}});
  return out;
}

std::string crossKeyText(const Explanation& x, std::size_t width) {
  if (x.crossKey.empty()) return {};
  std::string out = "\nDuplicates across keys:\n";
  for (const auto& f : x.crossKey)
    out += "  " + spoken(x, f.at) + "  " + f.laterKey + " repeats " + f.earlierKey + "  " +
           std::string(trace::label(f.outcome)) + "\n" + wrapWords(f.text, width, "      ");
  return out;
}

std::string crossKeyMarkdown(const Explanation& x) {
  if (x.crossKey.empty()) return {};
  std::string out = "### Duplicates across keys\n\n| When | Key | Earlier key | Gap | What happened |\n|---|---|---|---:|---|\n";
  for (const auto& f : x.crossKey)
    out += "| " + spoken(x, f.at) + " | " + markdownCode(f.laterKey) + " | " + markdownCode(f.earlierKey) + " | " +
           (f.gap ? text::humanDuration(*f.gap) : std::string("-")) + " | " + markdownText(f.text) + " |\n";
  return out + "\n";
}

nlohmann::ordered_json customerJson(const Explanation& x) {
  const CustomerExplanation& c = x.customer;
  json timeline = json::array();
  for (const auto& line : c.timeline) timeline.push_back({{"at", isoUtc(line.at)}, {"text", line.text}});
  return {{"audience", "customer"},
          {"time_zone", x.zone.name()},
          {"references", c.references},
          {"summary", c.summary},
          {"timeline", timeline},
          {"action", c.action},
          {"advice", c.advice.empty() ? json(nullptr) : json(c.advice)}};
}

std::string customerText(const Explanation& x, std::size_t width) {
  const CustomerExplanation& c = x.customer;
  std::string out = wrapWords(c.summary, width, "") + "\nWhat happened:\n";
  for (const auto& line : c.timeline) {
    const std::string when = spoken(x, line.at);
    out += "  " + when + "\n" + wrapWords(line.text, width, "    ");
  }
  out += "\nWhat we will do:\n" + wrapWords(c.action, width, "  ");
  if (!c.advice.empty()) out += "\n" + wrapWords(c.advice, width, "");
  return out;
}

std::string customerMarkdown(const Explanation& x) {
  const CustomerExplanation& c = x.customer;
  std::string out = "## About your request";
  if (!c.references.empty()) {
    out += " ";
    for (std::size_t i = 0; i < c.references.size(); ++i) out += (i ? ", " : "") + markdownCode(c.references[i]);
  }
  out += "\n\n" + markdownText(c.summary) + "\n\n### What happened\n\n";
  for (const auto& line : c.timeline) out += "- **" + spoken(x, line.at) + "** — " + markdownText(line.text) + "\n";
  out += "\n### What we will do\n\n" + markdownText(c.action) + "\n";
  if (!c.advice.empty()) out += "\n" + markdownText(c.advice) + "\n";
  return out;
}

}  // namespace idem::explain
