#include "core/proxy/createdresource.h"

#include <algorithm>

#include "core/text/json_text.h"

namespace idem::proxy {
namespace {

constexpr std::size_t kMaxId = 128;
constexpr std::size_t kMaxBodyRead = std::size_t{64} * 1024;  // a creation's answer; a larger body is not parsed for it

bool plainToken(std::string_view id) {
  return !id.empty() && id.size() <= kMaxId &&
         std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// "/v1/charges/ch_1?expand=x", "https://api.example/v1/charges/ch_1/" -> "ch_1"
std::optional<std::string> lastSegment(std::string_view location) {
  if (const auto scheme = location.find("://"); scheme != std::string_view::npos) {
    const auto path = location.find('/', scheme + 3);
    location = path == std::string_view::npos ? std::string_view() : location.substr(path);
  }
  location = location.substr(0, location.find_first_of("?#"));
  while (!location.empty() && location.back() == '/') location.remove_suffix(1);
  const auto slash = location.rfind('/');
  const std::string_view segment = slash == std::string_view::npos ? location : location.substr(slash + 1);
  if (!plainToken(segment)) return std::nullopt;
  return std::string(segment);
}

}  // namespace

std::optional<std::string> createdResource(int status, const http::Headers& headers, std::string_view body) {
  if (status < 200 || status > 299) return std::nullopt;
  if (const auto location = http::findHeader(headers, "Location"))
    if (auto id = lastSegment(*location)) return id;
  const auto type = http::findHeader(headers, "Content-Type");
  if (!type || type->find("json") == std::string_view::npos || body.size() > kMaxBodyRead) return std::nullopt;
  const text::ClientJson parsed = text::parseClientJson(body);
  if (parsed.error != text::ClientJson::Error::None || !parsed.value.is_object()) return std::nullopt;
  const auto id = parsed.value.find("id");
  if (id == parsed.value.end() || !id->is_string()) return std::nullopt;
  const auto& text = id->get_ref<const std::string&>();
  if (!plainToken(text)) return std::nullopt;
  return text;
}

}  // namespace idem::proxy
