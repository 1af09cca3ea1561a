#include "core/store/pgarray.h"

#include <cstdint>

namespace idem::pg {
namespace {

void putInt32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

void putInt64(std::string& out, std::uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

int hexNibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

ArrayParam::ArrayParam(Type element) : m_element(element) {}

void ArrayParam::appendInt32(unsigned v) { putInt32(m_body, v); }

void ArrayParam::element(std::string_view bytes) {
  appendInt32(static_cast<unsigned>(bytes.size()));
  m_body.append(bytes);
  ++m_count;
}

void ArrayParam::addText(std::string_view utf8) { element(utf8); }
void ArrayParam::addBytes(std::string_view raw) { element(raw); }

void ArrayParam::addInt4(int v) {
  std::string b;
  putInt32(b, static_cast<std::uint32_t>(v));
  element(b);
}

void ArrayParam::addBool(bool v) { element(std::string(1, v ? '\1' : '\0')); }

void ArrayParam::addUuid(std::string_view canonical) {
  std::string b;
  int high = -1;
  for (char c : canonical) {
    if (c == '-') continue;
    const int n = hexNibble(c);
    if (n < 0) throw QueryError("invalid input syntax for type uuid: \"" + std::string(canonical) + "\"", "22P02");
    if (high < 0) {
      high = n;
    } else {
      b += static_cast<char>(high * 16 + n);
      high = -1;
    }
  }
  if (b.size() != 16 || high >= 0)
    throw QueryError("invalid input syntax for type uuid: \"" + std::string(canonical) + "\"", "22P02");
  element(b);
}

void ArrayParam::addJsonb(std::string_view json) {
  std::string b(1, '\1');  // jsonb's binary format: a version byte, then the text
  b.append(json);
  element(b);
}

void ArrayParam::addInterval(std::chrono::milliseconds d) {
  std::string b;
  putInt64(b, static_cast<std::uint64_t>(d.count() * 1000));  // microseconds
  putInt32(b, 0);                                              // days
  putInt32(b, 0);                                              // months
  element(b);
}

void ArrayParam::addNull() {
  appendInt32(0xffffffffu);  // length -1
  m_hasNull = true;
  ++m_count;
}

Param ArrayParam::take() {
  std::string out;
  out.reserve(20 + m_body.size());
  putInt32(out, 1);  // dimensions
  putInt32(out, m_hasNull ? 1 : 0);
  putInt32(out, static_cast<std::uint32_t>(m_element));
  putInt32(out, static_cast<std::uint32_t>(m_count));
  putInt32(out, 1);  // lower bound
  out += m_body;
  m_body.clear();
  m_count = 0;
  return Param::bytes(out);
}

}  // namespace idem::pg
