#pragma once
// One-dimensional array parameters in PostgreSQL's binary format, for statements that take a
// batch of rows as parallel arrays (`unnest($1::text[], $2::bytea[], …)`). Binary, not an array
// literal: no quoting or hex-encoding of bodies on our side, no literal parsing on the server's.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/store/pg.h"

namespace idem::pg {

class ArrayParam {
 public:
  /// `element`: the type the statement casts the parameter to (`$n::<element>[]`); the server
  /// checks it against the array's header.
  explicit ArrayParam(Type element);

  void addText(std::string_view utf8);  // text
  void addBytes(std::string_view raw);  // bytea
  void addInt4(int v);
  void addBool(bool v);
  void addUuid(std::string_view canonical);  // "xxxxxxxx-xxxx-…": 16 bytes
  void addJsonb(std::string_view json);
  void addInterval(std::chrono::milliseconds d);  // microseconds, no days or months
  void addNull();

  /// The parameter to bind; the builder is spent.
  [[nodiscard]] Param take();
  [[nodiscard]] int size() const { return m_count; }

 private:
  void element(std::string_view bytes);
  void appendInt32(unsigned v);

  std::string m_body;  // the elements, each length-prefixed
  Type m_element;
  int m_count = 0;
  bool m_hasNull = false;
};

}  // namespace idem::pg
