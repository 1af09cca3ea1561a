// A small scanner over a policy's JSON text: it records where each value starts under the same
// field paths the reader uses (policy_json.h: member, element). It also sees text the reader
// refused, so it never assumes the text is valid and always ends.
#include "core/policy/policy_position.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/policy/policy_json.h"

namespace idem::policy::internal {
namespace {

class Scanner {
 public:
  Scanner(std::string_view text, std::map<std::string, std::size_t>& out) : m_text(text), m_out(out) {}

  void value(const std::string& path) {
    skipSpace();
    if (m_at >= m_text.size()) return;
    m_out[path] = m_at;  // a member written twice: the second, the one the error is about
    const char c = m_text[m_at];
    if (c == '{') {
      ++m_at;
      for (skipSpace(); m_at < m_text.size() && m_text[m_at] != '}'; skipSpace()) {
        if (m_text[m_at] == ',') {
          ++m_at;
          continue;
        }
        const std::size_t before = m_at;
        const std::string key = string();
        skipSpace();
        if (m_at < m_text.size() && m_text[m_at] == ':') ++m_at;
        value(member(path, key));
        stepIfStuck(before);
      }
      ++m_at;
    } else if (c == '[') {
      ++m_at;
      std::size_t index = 0;
      for (skipSpace(); m_at < m_text.size() && m_text[m_at] != ']'; skipSpace()) {
        if (m_text[m_at] == ',') {
          ++m_at;
          continue;
        }
        const std::size_t before = m_at;
        value(element(path, index++));
        stepIfStuck(before);
      }
      ++m_at;
    } else if (c == '"') {
      (void)string();
    } else {
      while (m_at < m_text.size() && std::string_view(",]} \t\r\n/").find(m_text[m_at]) == std::string_view::npos) ++m_at;
    }
  }

 private:
  // Text the reader refused (a stray '}' inside an array, a lone '/') is not valid JSON: the
  // scanner must still end, so a pass that consumed nothing steps over one character.
  void stepIfStuck(std::size_t before) {
    if (m_at == before && m_at < m_text.size()) ++m_at;
  }

  void skipSpace() {
    while (m_at < m_text.size()) {
      const char c = m_text[m_at];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++m_at;
      } else if (m_text.substr(m_at, 2) == "//") {
        m_at = std::min(m_text.find('\n', m_at), m_text.size());
      } else if (m_text.substr(m_at, 2) == "/*") {
        const auto end = m_text.find("*/", m_at + 2);
        m_at = end == std::string_view::npos ? m_text.size() : end + 2;
      } else {
        return;
      }
    }
  }

  // A string token at m_at, decoded (member names may hold escapes).
  std::string string() {
    const std::size_t start = m_at++;
    while (m_at < m_text.size() && m_text[m_at] != '"') m_at += m_text[m_at] == '\\' ? 2 : 1;
    ++m_at;
    const std::string_view token = m_text.substr(start, std::min(m_at, m_text.size()) - start);
    const auto decoded = nlohmann::json::parse(token, nullptr, /*allow_exceptions=*/false);
    return decoded.is_string() ? decoded.get<std::string>() : std::string(token);
  }

  std::string_view m_text;
  std::map<std::string, std::size_t>& m_out;
  std::size_t m_at = 0;
};

}  // namespace

FieldPositions::FieldPositions(std::string_view text) : m_text(text) { Scanner(text, m_offsets).value(""); }

TextPosition FieldPositions::at(const std::string& field) const {
  for (std::string f = field;;) {
    if (const auto it = m_offsets.find(f); it != m_offsets.end()) {
      const std::string_view before = m_text.substr(0, it->second);
      const auto newline = before.rfind('\n');
      return {1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')),
              newline == std::string_view::npos ? it->second + 1 : it->second - newline};
    }
    if (f.empty()) return {};
    // The enclosing field: cut the last ".member" or "[index]".
    const auto cut = f.find_last_of(".[");
    f.resize(cut == std::string::npos ? 0 : cut);
  }
}

}  // namespace idem::policy::internal
