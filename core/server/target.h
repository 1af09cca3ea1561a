#pragma once
// The request target (RFC 9112 §3.2, origin-form) parsed strictly: the path percent-decoded,
// the query split into decoded name/value pairs. A malformed escape or a decoded control
// character is an error (400), never guessed at; bytes that are not UTF-8 pass through (the
// route table decides: 404).
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace idem::server {

struct Target {
  std::string path;  // decoded, without the query
  std::multimap<std::string, std::string> query;
};

/// The parsed target, or nullopt with `error` saying what is wrong (for a 400's detail).
[[nodiscard]] std::optional<Target> parseTarget(std::string_view target, std::string& error);

}  // namespace idem::server
