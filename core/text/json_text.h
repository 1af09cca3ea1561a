#pragma once
// The one way JSON from clients is read and the one way JSON that may carry client bytes is
// written. nlohmann's parser recurses nowhere, but copying, comparing and dumping a value do,
// so a body nested 500 000 levels deep (it fits in 1 MiB) would overflow a thread's stack;
// and dump() throws on invalid UTF-8, which a path, header or key may hold.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace idem::text {

/// Arrays and objects nested deeper than this are refused in every JSON body. An API's bodies
/// need a handful of levels; 64 leaves room for any real document and keeps every recursive
/// algorithm on the value far from the stack's end.
inline constexpr std::size_t kMaxJsonDepth = 64;

struct ClientJson {
  enum class Error { None, Invalid, TooDeep };
  nlohmann::json value;  // discarded unless error == None
  Error error = Error::None;
  std::string reason;  // why it was refused, in words a client can act on; empty when accepted
};

/// Parses a client's JSON body: RFC 8259 in UTF-8, no raw NUL byte (the parser would stop there,
/// so bytes after it would go unseen), at most kMaxJsonDepth levels. Never throws for bad input.
[[nodiscard]] ClientJson parseClientJson(std::string_view body);

/// How deep arrays and objects nest in JSON text, counted outside strings; stops counting once
/// past `stopAfter` (cheap on hostile input). Invalid JSON gets some number: parse it to know.
[[nodiscard]] std::size_t jsonDepth(std::string_view body, std::size_t stopAfter = kMaxJsonDepth);

/// The refusal for a body deeper than kMaxJsonDepth.
[[nodiscard]] std::string tooDeepReason();

/// Serialises JSON that may hold client bytes: invalid UTF-8 is written as U+FFFD instead of
/// throwing (a response or log line must never fail because of what a client sent).
[[nodiscard]] std::string dumpJson(const nlohmann::json& value, int indent = -1);

}  // namespace idem::text
