#include "core/policy/policy_fields.h"

#include "core/http/headers.h"
#include "core/policy/policy_json.h"

namespace idem::policy::internal {
namespace {
using nlohmann::json;
constexpr std::string_view kDurationHelp = "use 250ms, 2s, 30m, 24h or 30d";
}  // namespace

void FieldReader::fail(const std::string& path, const std::string& message) const {
  internal::fail(m_source, path, message);
}

const json* FieldReader::optional(const json& object, std::string_view name) {
  const auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

const json& FieldReader::required(const json& object, const std::string& path, std::string_view name,
                                  std::string_view meaning) const {
  const json* v = optional(object, name);
  if (v == nullptr) fail(member(path, name), "missing (required: " + std::string(meaning) + ")");
  return *v;
}

const json& FieldReader::expect(const json& v, const std::string& path, json::value_t type,
                                std::string_view wanted) const {
  if (v.type() != type)
    fail(path, "must be " + std::string(wanted) + ", not " + std::string(typeName(v)) + " (" + shown(v) + ")");
  return v;
}

std::string FieldReader::str(const json& v, const std::string& path) const {
  return expect(v, path, json::value_t::string, "a string").get<std::string>();
}

Millis FieldReader::duration(const json& v, const std::string& path) const {
  if (!v.is_string())
    fail(path, "must be a duration string such as \"24h\", not " + std::string(typeName(v)) + " (" + shown(v) + ")");
  const auto text = v.get<std::string>();
  const auto d = parseDuration(text);
  if (!d) fail(path, shown(v) + " is not a duration (" + std::string(kDurationHelp) + ")");
  if (d->count() == 0) fail(path, shown(v) + " must be longer than zero");
  if (*d > kMaxDuration) fail(path, shown(v) + " is too long (at most " + formatDuration(kMaxDuration) + ")");
  return *d;
}

std::vector<std::string> FieldReader::headerNames(const json& v, const std::string& path) const {
  expect(v, path, json::value_t::array, "an array of header names");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = element(path, i);
    const std::string name = str(v[i], at);
    if (!isToken(name)) fail(at, shown(v[i]) + " is not an HTTP header name");
    for (const auto& seen : out)
      if (http::equalsIgnoreCase(seen, name)) fail(at, shown(v[i]) + " is listed twice");
    out.push_back(name);
  }
  return out;
}

}  // namespace idem::policy::internal
