#include "core/store/headercodec.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "core/text/json_text.h"

namespace idem::store {
namespace {

/// A hand-written reader for the common shape ([["Name", "value"], ...] with no escapes in the
/// strings): a general JSON parse cost a replay ~0.6 µs, more than its SQL parameters. Any
/// other input (escapes, other shapes) returns nullopt and goes to the general parser.
class PairReader {
 public:
  explicit PairReader(std::string_view text) : m_text(text) {}

  std::optional<http::Headers> read() {
    http::Headers out;
    if (!take('[')) return std::nullopt;
    if (take(']')) return end() ? std::optional(std::move(out)) : std::nullopt;
    do {
      if (!take('[')) return std::nullopt;
      auto name = string();
      if (!name || !take(',')) return std::nullopt;
      auto value = string();
      if (!value || !take(']')) return std::nullopt;
      out.emplace_back(*name, *value);
    } while (take(','));
    if (!take(']') || !end()) return std::nullopt;
    return out;
  }

 private:
  void skipSpace() {
    while (m_at < m_text.size() && (m_text[m_at] == ' ' || m_text[m_at] == '\n' || m_text[m_at] == '\t' ||
                                    m_text[m_at] == '\r'))
      ++m_at;
  }
  bool take(char c) {
    skipSpace();
    if (m_at >= m_text.size() || m_text[m_at] != c) return false;
    ++m_at;
    return true;
  }
  bool end() {
    skipSpace();
    return m_at == m_text.size();
  }
  std::optional<std::string_view> string() {
    if (!take('"')) return std::nullopt;
    const std::size_t start = m_at;
    while (m_at < m_text.size()) {
      const char c = m_text[m_at];
      if (c == '"') return m_text.substr(start, m_at++ - start);
      if (c == '\\' || static_cast<unsigned char>(c) < 0x20) return std::nullopt;
      ++m_at;
    }
    return std::nullopt;
  }

  std::string_view m_text;
  std::size_t m_at = 0;
};

}  // namespace

std::string headersToJson(const http::Headers& headers) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& [n, v] : headers) arr.push_back({n, v});
  return text::dumpJson(arr);  // a handler may echo client bytes in a header
}

http::Headers headersFromJson(std::string_view text) {
  if (text.empty()) return {};
  if (auto fast = PairReader(text).read()) return std::move(*fast);
  http::Headers out;
  auto arr = nlohmann::json::parse(text, nullptr, false);
  if (!arr.is_array()) return out;
  for (const auto& pair : arr)
    if (pair.is_array() && pair.size() == 2 && pair[0].is_string() && pair[1].is_string())
      out.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
  return out;
}

}  // namespace idem::store
