#include "core/text/json_text.h"

namespace idem::text {

std::size_t jsonDepth(std::string_view body, std::size_t stopAfter) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool inString = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (inString) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > stopAfter) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::string tooDeepReason() {
  return "the body nests arrays or objects more than " + std::to_string(kMaxJsonDepth) +
         " levels deep, the limit for every JSON body";
}

ClientJson parseClientJson(std::string_view body) {
  ClientJson out;
  // Depth first: a refused body is never built.
  if (jsonDepth(body) > kMaxJsonDepth) {
    out.error = ClientJson::Error::TooDeep;
    out.reason = tooDeepReason();
    return out;
  }
  if (const auto nul = body.find('\0'); nul != std::string_view::npos) {
    out.error = ClientJson::Error::Invalid;
    out.reason = "the body is not valid JSON (a NUL byte at byte " + std::to_string(nul + 1) + ")";
    return out;
  }
  try {
    out.value = nlohmann::json::parse(body.begin(), body.end());
  } catch (const nlohmann::json::parse_error& e) {
    out.error = ClientJson::Error::Invalid;
    out.reason = "the body is not valid JSON (error at byte " + std::to_string(e.byte) + ")";
  } catch (const nlohmann::json::exception&) {
    out.error = ClientJson::Error::Invalid;
    out.reason = "the body is not valid JSON";
  }
  return out;
}

std::string dumpJson(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace idem::text
