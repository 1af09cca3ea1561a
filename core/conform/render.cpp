#include "core/conform/render.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/text/json_text.h"

namespace idem::conform {

namespace {

// Evidence keeps this much of a body: enough to read an error, not a whole page.
constexpr std::size_t kBodyShown = 400;

std::string trimmed(const std::string& body) {
  if (body.size() <= kBodyShown) return body;
  return body.substr(0, kBodyShown) + "… (" + std::to_string(body.size()) + " bytes)";
}

// One line of evidence: the body without the line break a text body ends with.
std::string shown(const std::string& body) {
  std::string out = trimmed(body);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string upper(std::string_view v) {
  std::string out(v);
  for (auto& c : out) c = static_cast<char>(c - 'a' + 'A');
  return out;
}

std::string summary(const Report& r) {
  return std::to_string(r.count(Verdict::Pass)) + " passed, " + std::to_string(r.count(Verdict::Fail)) + " failed, " +
         std::to_string(r.count(Verdict::Skip)) + " skipped, " + std::to_string(r.count(Verdict::Info)) +
         " informational";
}

nlohmann::json headersJson(const http::Headers& headers) {
  auto out = nlohmann::json::array();
  for (const auto& [name, value] : headers) out.push_back({name, value});
  return out;
}

// Headers a person reading evidence needs no line for: transport and server noise. The JSON
// report keeps every header.
bool noise(const std::string& name) {
  for (const char* n : {"Date", "Server", "Connection", "Content-Length", "Keep-Alive", "X-Powered-By", "Request-Id"})
    if (http::equalsIgnoreCase(name, n)) return true;
  return false;
}

// "  Name: value  Name: value", each after two spaces; "" for none.
std::string headersLine(const http::Headers& headers) {
  std::string out;
  for (const auto& [name, value] : headers) {
    if (!noise(name)) out.append("  ").append(name).append(": ").append(value);
  }
  return out;
}

// "> POST /v1/charges  Idempotency-Key: …" then "< 201  Content-Type: …" then the body.
void evidence(std::ostream& out, const Exchange& e, const std::string& indent) {
  out << indent << e.label << ":\n";
  out << indent << "  > " << e.method << ' ' << e.path << headersLine(e.requestHeaders) << '\n';
  if (!e.requestBody.empty()) out << indent << "    " << shown(e.requestBody) << '\n';
  if (e.status == 0) {
    out << indent << "  < no answer: " << e.error << '\n';
    return;
  }
  out << indent << "  < " << e.status << headersLine(e.responseHeaders) << '\n';
  if (!e.responseBody.empty()) out << indent << "    " << shown(e.responseBody) << '\n';
}

std::string asText(const Report& r) {
  std::ostringstream out;
  out << "idemctl conform " << r.target << "  " << r.route << "  (run " << r.runId << ")\n";
  out << "executions counted by " << r.counting << "\n\n";
  for (const auto& s : r.scenarios) {
    char head[64];
    std::snprintf(head, sizeof head, "%-5s %-17s ", upper(verdictName(s.verdict)).c_str(), s.name.c_str());
    out << head << s.reason << '\n';
    if (s.verdict != Verdict::Fail) continue;
    out << "      expected (" << s.draft << "): " << s.expects << '\n';
    for (const auto& e : s.exchanges) evidence(out, e, "      ");
  }
  out << '\n' << summary(r) << '\n';
  return out.str();
}

std::string asMarkdown(const Report& r) {
  std::ostringstream out;
  out << "# Idempotency-Key conformance: `" << r.route << "` at " << r.target << "\n\n";
  out << "Run `" << r.runId << "`; executions counted by " << r.counting << ". **" << summary(r) << ".**\n\n";
  out << "| scenario | verdict | draft | what happened |\n|---|---|---|---|\n";
  for (const auto& s : r.scenarios) {
    std::string reason = s.reason;
    for (auto at = reason.find('|'); at != std::string::npos; at = reason.find('|', at + 2)) reason.replace(at, 1, "\\|");
    out << "| `" << s.name << "` | " << verdictName(s.verdict) << " | " << s.draft << " | " << reason << " |\n";
  }
  for (const auto& s : r.scenarios) {
    if (s.verdict != Verdict::Fail) continue;
    out << "\n## `" << s.name << "` failed\n\nIt checks that " << s.title << " (" << s.draft << "). Expected: " << s.expects
        << ".\n\n```\n";
    for (const auto& e : s.exchanges) evidence(out, e, "");
    out << "```\n";
  }
  return out.str();
}

std::string asJson(const Report& r) {
  nlohmann::json scenarios = nlohmann::json::array();
  for (const auto& s : r.scenarios) {
    nlohmann::json exchanges = nlohmann::json::array();
    for (const auto& e : s.exchanges) {
      nlohmann::json response = nullptr;
      if (e.status != 0)
        response = {{"status", e.status}, {"headers", headersJson(e.responseHeaders)}, {"body", trimmed(e.responseBody)}};
      exchanges.push_back({{"label", e.label},
                           {"request",
                            {{"method", e.method},
                             {"path", e.path},
                             {"headers", headersJson(e.requestHeaders)},
                             {"body", trimmed(e.requestBody)}}},
                           {"response", response},
                           {"error", e.error},
                           {"ms", e.ms}});
    }
    scenarios.push_back({{"name", s.name},
                         {"title", s.title},
                         {"draft", s.draft},
                         {"expects", s.expects},
                         {"verdict", verdictName(s.verdict)},
                         {"reason", s.reason},
                         {"exchanges", exchanges}});
  }
  nlohmann::json doc{{"target", r.target},
                     {"route", r.route},
                     {"run_id", r.runId},
                     {"counting", r.counting},
                     {"summary",
                      {{"passed", r.count(Verdict::Pass)},
                       {"failed", r.count(Verdict::Fail)},
                       {"skipped", r.count(Verdict::Skip)},
                       {"informational", r.count(Verdict::Info)}}},
                     {"scenarios", scenarios}};
  return text::dumpJson(doc, 2) + "\n";
}

}  // namespace

std::string render(const Report& report, text::OutputFormat format) {
  switch (format) {
    case text::OutputFormat::Json: return asJson(report);
    case text::OutputFormat::Markdown: return asMarkdown(report);
    case text::OutputFormat::Text: break;
  }
  return asText(report);
}

}  // namespace idem::conform
