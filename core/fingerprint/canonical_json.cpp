// RFC 8785 (JCS) canonical serialisation.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/fingerprint/fingerprint.h"
#include "core/fingerprint/jcs.h"
#include "core/text/utf8.h"

namespace idem::fp {
namespace {

using nlohmann::json;

/// UTF-16 code units of a UTF-8 string: member names sort by these (RFC 8785 §3.2.3), which
/// differs from code point order once characters above U+FFFF meet U+E000..U+FFFF.
std::u16string toUtf16(std::string_view s) {
  std::u16string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t at = i;
    const auto decoded = text::decodeUtf8(s, i);
    if (!decoded) throw InvalidJson("a JSON string is not valid UTF-8 (byte " + std::to_string(at) + " of the string)");
    char32_t cp = *decoded;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
  }
  return out;
}

/// JSON.stringify's string form (RFC 8785 §3.2.2.2).
void appendString(std::string& out, const std::string& s) {
  (void)toUtf16(s);  // rejects invalid UTF-8, which has no canonical form
  out.push_back('"');
  appendJcsEscaped(out, s);
  out.push_back('"');
}

void appendScalar(std::string& out, const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      out += "null";
      break;
    case json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      break;
    case json::value_t::string:
      appendString(out, v.get_ref<const std::string&>());
      break;
    // JSON numbers are IEEE doubles to JCS, so integers nlohmann kept exact are written as the
    // double they round to, exactly as ECMAScript would.
    case json::value_t::number_integer:
      appendJcsNumber(out, static_cast<double>(v.get<std::int64_t>()));
      break;
    case json::value_t::number_unsigned:
      appendJcsNumber(out, static_cast<double>(v.get<std::uint64_t>()));
      break;
    case json::value_t::number_float:
      appendJcsNumber(out, v.get<double>());
      break;
    default:
      throw InvalidJson("a binary or discarded value has no JSON form");
  }
}

/// One open array or object: its children in output order and how many are written.
struct Frame {
  bool isObject = false;
  std::vector<std::pair<const std::string*, const json*>> children;  // name is null in arrays
  std::size_t next = 0;
};

}  // namespace

std::string canonicalJson(const json& value) {
  std::string out;
  // An explicit stack rather than recursion: a request body nested a million levels deep
  // must not overflow the thread's stack.
  std::vector<Frame> stack;
  const auto open = [&](const json& v) {
    if (v.is_object()) {
      Frame frame{true, {}, 0};
      std::vector<std::pair<std::u16string, std::pair<const std::string*, const json*>>> members;
      members.reserve(v.size());
      for (auto it = v.begin(); it != v.end(); ++it) members.push_back({toUtf16(it.key()), {&it.key(), &it.value()}});
      std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& m : members) frame.children.push_back(m.second);
      out.push_back('{');
      stack.push_back(std::move(frame));
    } else if (v.is_array()) {
      Frame frame{false, {}, 0};
      for (const auto& element : v) frame.children.push_back({nullptr, &element});
      out.push_back('[');
      stack.push_back(std::move(frame));
    } else {
      appendScalar(out, v);
    }
  };

  open(value);
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next == top.children.size()) {
      out.push_back(top.isObject ? '}' : ']');
      stack.pop_back();
      continue;
    }
    if (top.next > 0) out.push_back(',');
    const auto [name, child] = top.children[top.next++];
    if (name) {
      appendString(out, *name);
      out.push_back(':');
    }
    open(*child);  // may grow the stack: `top` is not used after this
  }
  return out;
}

}  // namespace idem::fp
