// JSON text to a document for the policy reader, with messages that point into the file.
#include "core/policy/policy_json.h"

#include <algorithm>
#include <set>
#include <vector>

#include "core/policy/policy.h"
#include "core/text/json_text.h"

namespace idem::policy::internal {
namespace {

using nlohmann::json;

// Where the parser is, so that a member written twice can be named by its path.
struct Frame {
  std::string path;
  bool isArray = false;
  std::size_t nextIndex = 0;   // arrays: index of the next element
  std::string lastKey;         // objects: the member whose value comes next
  std::set<std::string> keys;  // objects: members seen so far
};

class DuplicateChecker {
 public:
  explicit DuplicateChecker(const std::string& source) : m_source(source) {}

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        m_frames.push_back(Frame{childPath(), event == json::parse_event_t::array_start, 0, {}, {}});
        break;
      case json::parse_event_t::key: {
        Frame& f = m_frames.back();
        f.lastKey = parsed.get<std::string>();
        if (!f.keys.insert(f.lastKey).second)
          fail(m_source, member(f.path, f.lastKey), "written twice in the same object; keep one");
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        m_frames.pop_back();
        elementDone();
        break;
      case json::parse_event_t::value:
        elementDone();
        break;
    }
    return true;
  }

 private:
  std::string childPath() const {
    if (m_frames.empty()) return {};
    const Frame& f = m_frames.back();
    return f.isArray ? element(f.path, f.nextIndex) : member(f.path, f.lastKey);
  }
  void elementDone() {
    if (!m_frames.empty() && m_frames.back().isArray) ++m_frames.back().nextIndex;
  }

  const std::string& m_source;
  std::vector<Frame> m_frames;
};

// nlohmann's message starts with "[json.exception.parse_error.101] parse error at line 3,
// column 5: "; we say where ourselves and keep only what went wrong.
std::string syntaxDetail(const std::string& what) {
  const auto column = what.find("column ");
  const auto colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
  if (colon != std::string::npos) return what.substr(colon + 2);
  const auto bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

json parseJsonText(std::string_view text, const std::string& source) {
  DuplicateChecker checker(source);
  try {
    return json::parse(text.begin(), text.end(), std::ref(checker), /*allow_exceptions=*/true,
                       /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    // e.byte counts the bytes read, the offending one included.
    const std::size_t offset = e.byte == 0 ? 0 : std::min<std::size_t>(e.byte - 1, text.size());
    const std::string_view before = text.substr(0, offset);
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
    const auto lastNewline = before.rfind('\n');
    const std::size_t column = lastNewline == std::string_view::npos ? offset + 1 : offset - lastNewline;
    throw PolicyError(source + ": line " + std::to_string(line) + ", column " + std::to_string(column) +
                      ": not valid JSON: " + syntaxDetail(e.what()));
  } catch (const json::exception& e) {
    // Valid syntax the library still refuses, without a position: a number beyond a double
    // (out_of_range.406). Any json::exception, so no kind of it escapes as a non-PolicyError.
    throw PolicyError(source + ": not valid JSON: " + syntaxDetail(e.what()) + " (numbers must fit a double)");
  }
}

void fail(const std::string& source, const std::string& path, const std::string& message) {
  throw PolicyError(source + ": " + (path.empty() ? std::string() : path + ": ") + message,
                    {PolicyError::Problem{path, message}});
}

std::string shown(const json& value) {
  constexpr std::size_t kMax = 60;
  std::string text = text::dumpJson(value);
  if (text.size() > kMax) text = text.substr(0, kMax - 3) + "...";
  return text;
}

std::string_view typeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    case json::value_t::binary:
    case json::value_t::discarded:
      break;
  }
  return "not a JSON value";
}

void rejectUnknown(const json& object, const std::string& source, const std::string& path,
                   std::initializer_list<std::string_view> known) {
  for (const auto& [name, value] : object.items()) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string_view nearest;
    std::size_t best = 3;  // suggest only close misspellings: "tll" -> "ttl", not "x" -> "ttl"
    for (const auto candidate : known) {
      const std::size_t d = editDistance(name, candidate);
      if (d < best) {
        best = d;
        nearest = candidate;
      }
    }
    std::string hint;
    if (!nearest.empty()) {
      hint = "did you mean \"" + std::string(nearest) + "\"?";
    } else {
      hint = "known fields:";
      for (const auto candidate : known) hint += (hint.back() == ':' ? " " : ", ") + std::string(candidate);
    }
    fail(source, member(path, name), "unknown field (" + hint + ")");
  }
}

std::string member(const std::string& path, std::string_view name) {
  return path.empty() ? std::string(name) : path + "." + std::string(name);
}

std::string element(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

bool isToken(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

}  // namespace idem::policy::internal
