#pragma once
// Request fingerprints (draft §2.4): what makes "the same request" under one key.
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/http/headers.h"

namespace idem::fp {

enum class Mode {
  None,    // the key alone identifies the request
  Body,    // SHA-256 of the body bytes
  Json,    // SHA-256 of the RFC 8785 canonical form: whitespace and member order don't matter
  Fields,  // SHA-256 of the canonical form of selected JSON pointers only
};

struct Spec {
  Mode mode = Mode::Json;
  std::vector<std::string> fields;   // JSON pointers, for Mode::Fields ("/amount")
  std::vector<std::string> headers;  // header names whose values are part of the fingerprint
};

/// The body is not JSON although the mode needs JSON: a 400 before execution.
class InvalidJson : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The body nests deeper than text::kMaxJsonDepth: a 400 before execution, like InvalidJson.
class BodyTooDeep : public InvalidJson {
 public:
  using InvalidJson::InvalidJson;
};

/// 32-byte raw SHA-256 over the parts the spec selects. Throws InvalidJson (or BodyTooDeep).
[[nodiscard]] std::string compute(const Spec& spec, std::string_view body, const http::Headers& headers);

/// RFC 8785 (JCS) canonical serialisation: sorted members (by UTF-16 code units), no
/// whitespace, numbers as ECMAScript Number.prototype.toString.
[[nodiscard]] std::string canonicalJson(const nlohmann::json& value);

/// Raw 32-byte SHA-256 digest.
[[nodiscard]] std::string sha256(std::string_view data);
/// Lower-case hex of raw bytes.
[[nodiscard]] std::string toHex(std::string_view raw);
void appendHex(std::string& out, std::string_view raw);

[[nodiscard]] std::string_view modeName(Mode m);
[[nodiscard]] std::optional<Mode> modeFromName(std::string_view name);

}  // namespace idem::fp
