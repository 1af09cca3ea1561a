#include "core/conform/probe.h"

#include <nlohmann/json.hpp>

#include <random>
#include <set>
#include <stdexcept>

#include "core/http/keyheader.h"
#include "core/text/json_text.h"

namespace idem::conform {

namespace {

using Clock = std::chrono::steady_clock;

// "id", "data.id", "data.0.id" or a JSON pointer "/data/id".
nlohmann::json::json_pointer pointerOf(const std::string& path) {
  if (path.empty()) throw std::invalid_argument("an empty field path");
  std::string pointer = path;
  if (pointer.front() != '/') {
    pointer = "/" + pointer;
    for (auto& c : pointer)
      if (c == '.') c = '/';
  }
  return nlohmann::json::json_pointer(pointer);  // throws parse_error for "~" misuse
}

std::optional<nlohmann::json> valueAt(const std::string& body, const nlohmann::json::json_pointer& at) {
  auto parsed = text::parseClientJson(body);
  if (parsed.error != text::ClientJson::Error::None) return std::nullopt;
  if (!parsed.value.contains(at)) return std::nullopt;
  return parsed.value.at(at);
}

std::string randomRunId() {
  std::random_device device;
  std::mt19937_64 bits(device() ^ static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()));
  static const char* const kHex = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 8; ++i) id += kHex[bits() % 16];
  return id;
}

}  // namespace

std::optional<Url> Url::parse(const std::string& text) {
  const auto scheme = text.find("://");
  if (scheme == std::string::npos) return std::nullopt;
  const std::string name = text.substr(0, scheme);
  if (name != "http" && name != "https") return std::nullopt;
  const auto slash = text.find('/', scheme + 3);
  Url url{text.substr(0, slash), slash == std::string::npos ? "" : text.substr(slash)};
  if (url.origin.size() == scheme + 3) return std::nullopt;  // no host
  while (!url.path.empty() && url.path.back() == '/') url.path.pop_back();
  return url;
}

Probe::Probe(const Options& options) : m_options(options), m_runId(options.runId.empty() ? randomRunId() : options.runId) {
  auto url = Url::parse(options.url);
  if (!url) throw std::invalid_argument("\"" + options.url + "\" is not an http:// or https:// URL");
  m_url = *url;
  m_tenants[0] = options.tenants[0];
  m_tenants[1] = options.tenants[1];
  m_client = std::make_unique<client::Client>(m_url.origin, options.timeout);
  try {
    (void)pointerOf(options.idField);
    (void)pointerOf(options.countField);
  } catch (const std::exception&) {
    throw std::invalid_argument("--id-field and --count-field take a field name, a dotted path (data.id) or a JSON "
                                "pointer (/data/id)");
  }
  if (!options.countUrl.empty()) {
    if (options.countUrl.front() == '/') {
      m_countPath = m_url.path + options.countUrl;
      m_countClient = std::make_unique<client::Client>(m_url.origin, options.timeout);
    } else {
      auto countUrl = Url::parse(options.countUrl);
      if (!countUrl)
        throw std::invalid_argument("--count-url: \"" + options.countUrl + "\" is not a path or an http(s) URL");
      m_countPath = countUrl->path.empty() ? "/" : countUrl->path;
      m_countClient = std::make_unique<client::Client>(countUrl->origin, options.timeout);
    }
  }
}

std::string Probe::counting() const {
  if (m_countClient)
    return "the count endpoint " + m_options.countUrl + " (field " + m_options.countField + "), read before and after "
           "each scenario";
  return "distinct ids (field " + m_options.idField + ") in the 2xx answers";
}

std::string Probe::newKey(const std::string& scenario) {
  return *http::serializeSfString("conform-" + m_runId + "-" + scenario + "-" + std::to_string(++m_keys));
}

std::string Probe::body(const std::string& scenario) const {
  std::string out = m_options.body;
  const std::string placeholder = "{unique}";
  const std::string unique = m_runId + "-" + scenario;
  for (auto at = out.find(placeholder); at != std::string::npos; at = out.find(placeholder, at + unique.size()))
    out.replace(at, placeholder.size(), unique);
  return out;
}

http::Headers Probe::headers(const std::string& key, int tenant) const {
  http::Headers h = m_options.headers;
  if (!http::findHeader(h, "Content-Type")) h.emplace_back("Content-Type", "application/json");
  if (!m_options.tenantHeader.empty()) h.emplace_back(m_options.tenantHeader, this->tenant(tenant));
  if (!key.empty()) h.emplace_back(m_options.keyHeader, key);
  return h;
}

Exchange Probe::exchange(client::Client& client, const std::string& label, const Route& route,
                         const http::Headers& headers, const std::string& body) const {
  Exchange e{label, route.method, m_url.path + route.path, headers, body, 0, {}, {}, {}, 0};
  const auto start = Clock::now();
  auto answer = client.send(route.method, e.path, headers, route.method == "GET" ? std::string() : body);
  e.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  e.status = answer.status;
  e.responseHeaders = std::move(answer.headers);
  e.responseBody = std::move(answer.body);
  e.error = std::move(answer.error);
  return e;
}

Exchange Probe::send(const std::string& label, const Route& route, const http::Headers& headers, const std::string& body) {
  auto e = exchange(*m_client, label, route, headers, body);
  reached({e});
  return e;
}

void Probe::reached(const std::vector<Exchange>& exchanges) {
  for (const auto& e : exchanges) m_answered = m_answered || e.status != 0;
  if (!m_answered && !exchanges.empty())
    throw Unreachable("no answer from " + m_options.url + ": " + exchanges.front().error +
                      "\nIs the service running, and is the URL its base (scheme, host, port)?");
}

Exchange Probe::sendAlone(const std::string& label, const Route& route, const http::Headers& headers,
                          const std::string& body) const {
  client::Client own(m_url.origin, m_options.timeout);
  return exchange(own, label, route, headers, body);
}

std::optional<long long> Probe::readCount(std::string& error) {
  auto answer = m_countClient->get(m_countPath, m_options.headers);
  if (answer.status != 200) {
    error = "--count-url " + m_options.countUrl + ": " +
            (answer.status == 0 ? answer.error : "answered " + std::to_string(answer.status) + ", not 200");
    return std::nullopt;
  }
  auto value = valueAt(answer.body, pointerOf(m_options.countField));
  if (!value || !value->is_number_integer()) {
    // A bare number is a count too.
    auto whole = text::parseClientJson(answer.body);
    if (whole.error == text::ClientJson::Error::None && whole.value.is_number_integer()) return whole.value.get<long long>();
    error = "--count-url " + m_options.countUrl + " answered no whole number at " + m_options.countField;
    return std::nullopt;
  }
  return value->get<long long>();
}

Mark Probe::mark() {
  if (!m_countClient) return {};
  std::string error;
  auto count = readCount(error);
  if (!count) throw Unreachable(error);
  return {count};
}

Executions Probe::executions(const Mark& mark, const std::vector<Exchange>& answers) {
  if (m_countClient) {
    std::string error;
    auto now = readCount(error);
    if (!now || !mark.count) return {std::nullopt, error};
    return {*now - *mark.count, "count " + std::to_string(*mark.count) + " -> " + std::to_string(*now)};
  }
  std::set<std::string> ids;
  std::string listed;
  for (const auto& a : answers) {
    if (!succeeded(a)) continue;
    auto id = resourceId(a);
    if (!id)
      return {std::nullopt, "the " + std::to_string(a.status) + " answer to \"" + a.label + "\" has no " +
                                m_options.idField + " field: name the field with the created id (--id-field) or give "
                                "--count-url"};
    if (ids.insert(*id).second) listed += (listed.empty() ? "" : ", ") + *id;
  }
  return {static_cast<long long>(ids.size()), ids.empty() ? "no 2xx answer" : "ids " + listed};
}

std::optional<std::string> Probe::resourceId(const Exchange& answer) const {
  auto value = valueAt(answer.responseBody, pointerOf(m_options.idField));
  if (!value || value->is_null() || value->is_object() || value->is_array()) return std::nullopt;
  return value->is_string() ? value->get<std::string>() : value->dump();
}

}  // namespace idem::conform
