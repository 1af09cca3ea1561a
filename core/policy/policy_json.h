#pragma once
// Internal to core/policy: JSON text to a document, and the checks the policy reader shares.
// Not API: other folders use policy.h.
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/policy/duration.h"

namespace idem::policy::internal {

/// Parses JSON with // and /* */ comments. A syntax error or a member written twice in one
/// object (which JSON parsers silently resolve to the last one) is a PolicyError naming
/// `source` and the line and column or the field.
[[nodiscard]] nlohmann::json parseJsonText(std::string_view text, const std::string& source);

/// Throws PolicyError "<source>: <path>: <message>" (no path segment when path is empty), with
/// the path and message as its one problem (the reader adds where in the file it is).
[[noreturn]] void fail(const std::string& source, const std::string& path, const std::string& message);

/// A value as the message shows it: compact JSON, long values shortened.
[[nodiscard]] std::string shown(const nlohmann::json& value);

/// "a string", "a number", ... for "must be X, not Y" messages.
[[nodiscard]] std::string_view typeName(const nlohmann::json& value);

/// Rejects members of `object` not in `known`, suggesting the nearest known name.
void rejectUnknown(const nlohmann::json& object, const std::string& source, const std::string& path,
                   std::initializer_list<std::string_view> known);

/// path + "." + member, or member alone at the top level.
[[nodiscard]] std::string member(const std::string& path, std::string_view name);
/// path + "[i]".
[[nodiscard]] std::string element(const std::string& path, std::size_t index);

/// Whether `name` is an HTTP field name (RFC 9110 token).
[[nodiscard]] bool isToken(std::string_view name);

/// The longest duration a policy may hold: long enough for any audit retention, short
/// enough for every PostgreSQL interval and chrono arithmetic on it.
inline constexpr Millis kMaxDuration{std::chrono::hours(24) * 36500};

}  // namespace idem::policy::internal
