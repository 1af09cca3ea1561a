#include "core/fingerprint/fingerprint.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/fingerprint/canonical_text.h"
#include "core/text/json_text.h"

namespace idem::fp {
namespace {

using nlohmann::json;

json parseBody(std::string_view body) {
  if (body.empty())
    throw InvalidJson("the request body is empty, but this route fingerprints its JSON content: send a JSON body");
  text::ClientJson parsed = text::parseClientJson(body);
  if (parsed.error == text::ClientJson::Error::TooDeep) throw BodyTooDeep(parsed.reason);
  if (parsed.error != text::ClientJson::Error::None)
    throw InvalidJson(parsed.reason + ", but this route fingerprints its JSON content: send well-formed JSON "
                                      "(RFC 8259, UTF-8)");
  return std::move(parsed.value);
}

json::json_pointer toPointer(const std::string& text) {
  try {
    return json::json_pointer(text);
  } catch (const json::exception&) {
    throw std::invalid_argument("fingerprint field \"" + text +
                                "\" is not a JSON pointer (RFC 6901): write it as /name or /a/0/b");
  }
}

/// {pointer: value} for each selected pointer; a pointer that resolves to nothing reads as null
/// so that leaving an optional field out and sending it as null are the same request.
json selectFields(const std::vector<std::string>& pointers, const json& doc) {
  json selected = json::object();
  for (const auto& text : pointers) {
    const auto pointer = toPointer(text);
    json value = nullptr;
    try {
      value = doc.at(pointer);
    } catch (const json::exception&) {
      // Unresolvable (missing member, index out of range, path through a scalar): stays null.
    }
    selected[text] = std::move(value);
  }
  return selected;
}

std::string lowerAscii(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

/// Selected headers as an unambiguous byte string: names lower-cased, sorted and deduplicated
/// (the policy's spelling and order don't change fingerprints); repeated field lines joined
/// with ", " as HTTP allows (RFC 9110 §5.3); a missing header ("-") differs from an empty
/// one ("=0:"). Lengths are written out so no value can imitate the framing.
std::string headersPart(const std::vector<std::string>& names, const http::Headers& headers) {
  std::vector<std::string> wanted;
  wanted.reserve(names.size());
  for (const auto& n : names) wanted.push_back(lowerAscii(n));
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());

  std::string out;
  for (const auto& name : wanted) {
    out += std::to_string(name.size()) + ":" + name;
    std::optional<std::string> value;
    for (const auto& [n, v] : headers) {
      if (!http::equalsIgnoreCase(n, name)) continue;
      value = value ? *value + ", " + v : v;
    }
    out += value ? "=" + std::to_string(value->size()) + ":" + *value : std::string("-");
  }
  return out;
}

}  // namespace

std::string compute(const Spec& spec, std::string_view body, const http::Headers& headers) {
  std::string canonical;
  std::string_view content;  // what the mode takes from the body
  switch (spec.mode) {
    case Mode::None:
      break;
    case Mode::Body:
      content = body;
      break;
    case Mode::Json:
      // The depth limit holds on the fast path too: every JSON body has the same limit.
      if (text::jsonDepth(body) > text::kMaxJsonDepth) throw BodyTooDeep(text::tooDeepReason());
      // The streaming canonicaliser is the fast path; the DOM path handles what it declines,
      // including every invalid body, whose error message it words.
      if (auto fast = canonicalJsonText(body))
        canonical = std::move(*fast);
      else
        canonical = canonicalJson(parseBody(body));
      content = canonical;
      break;
    case Mode::Fields:
      canonical = canonicalJson(selectFields(spec.fields, parseBody(body)));
      content = canonical;
      break;
  }
  // Without headers the fingerprint is the plain SHA-256 of the content, which anyone can
  // recompute with standard tools when investigating a 422.
  if (spec.headers.empty()) return sha256(content);
  const std::string headerBytes = headersPart(spec.headers, headers);
  if (spec.mode == Mode::None) return sha256(headerBytes);
  // The content digest has a fixed length, so content and headers cannot bleed into each other.
  return sha256(sha256(content) + headerBytes);
}

std::string sha256(std::string_view data) {
  // Fetched once and one context per thread: EVP_Digest with EVP_sha256() looks the algorithm
  // up under a global lock and builds a context on every call, which was most of a
  // fingerprint's time with 8 request threads.
  static EVP_MD* const kSha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  thread_local const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                                    &EVP_MD_CTX_free);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (!kSha256 || !context || EVP_DigestInit_ex2(context.get(), kSha256, nullptr) != 1 ||
      EVP_DigestUpdate(context.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(context.get(), digest.data(), &length) != 1)
    throw std::runtime_error("SHA-256 failed inside OpenSSL");
  return std::string(reinterpret_cast<const char*>(digest.data()), length);
}

std::string toHex(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() * 2);
  appendHex(out, raw);
  return out;
}

void appendHex(std::string& out, std::string_view raw) {
  static constexpr char digits[] = "0123456789abcdef";
  for (const char c : raw) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 0x0F]);
  }
}

std::string_view modeName(Mode m) {
  switch (m) {
    case Mode::None:
      return "none";
    case Mode::Body:
      return "body";
    case Mode::Json:
      return "json";
    case Mode::Fields:
      return "fields";
  }
  return "json";
}

std::optional<Mode> modeFromName(std::string_view name) {
  for (const Mode m : {Mode::None, Mode::Body, Mode::Json, Mode::Fields})
    if (modeName(m) == name) return m;
  return std::nullopt;
}

}  // namespace idem::fp
