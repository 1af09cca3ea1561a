#pragma once
// The request parser of the endpoint's connections: Beast's HTTP/1 wire parser building a
// request<string_body>, like bhttp::request_parser, plus what that one does not do:
// - a field longer than Beast's 16-bit field storage is refused (431) where the stock parser
//   throws std::length_error through the event loop;
// - the header field count is checked as fields arrive;
// - trailer fields of a chunked body are counted against the same limits (count and bytes) and
//   dropped: never merged into the header set the handler sees (RFC 9110 §6.5.1 allows it), so
//   no header check can be bypassed by sending a field after the body;
// - a chunked body takes its bytes from the server's body budget as they arrive.
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>

#include "core/server/bodybudget.h"

namespace idem::server {

class RequestParser : public boost::beast::http::basic_parser<true> {
 public:
  using Message = boost::beast::http::request<boost::beast::http::string_body>;
  /// Beast keeps each field's name and value lengths in 16 bits.
  static constexpr std::size_t kMaxFieldBytes = 65'533;
  /// Why the parser stopped with an error of its own (the error code alone says 431 or 413).
  enum class Refusal { None, FieldTooLong, TooManyFields, TooManyHeaderBytes, OverBudget };

  /// headerBytes and fields bound the header block and trailers together; `body` (may be null)
  /// is where a chunked body's bytes are taken from the budget.
  RequestParser(std::size_t headerBytes, std::size_t fields, BodyReservation* body);

  [[nodiscard]] Message& get() { return m_message; }
  [[nodiscard]] Message release() { return std::move(m_message); }
  [[nodiscard]] Refusal refusal() const { return m_refusal; }
  [[nodiscard]] std::size_t trailerFields() const { return m_trailerFields; }

 private:
  using error_code = boost::beast::error_code;
  using string_view = boost::beast::string_view;
  void on_request_impl(boost::beast::http::verb method, string_view methodText, string_view target, int version,
                       error_code& ec) override;
  void on_response_impl(int, string_view, int, error_code&) override {}
  void on_field_impl(boost::beast::http::field name, string_view nameText, string_view value,
                     error_code& ec) override;
  void on_header_impl(error_code& ec) override { ec = {}; }
  void on_body_init_impl(const boost::optional<std::uint64_t>& contentLength, error_code& ec) override;
  std::size_t on_body_impl(string_view body, error_code& ec) override;
  void on_chunk_header_impl(std::uint64_t, string_view, error_code& ec) override { ec = {}; }
  std::size_t on_chunk_body_impl(std::uint64_t remain, string_view body, error_code& ec) override;
  void on_finish_impl(error_code& ec) override { ec = {}; }
  void refuse(Refusal why, error_code& ec);

  Message m_message;
  BodyReservation* m_body;
  const std::size_t m_maxHeaderBytes;
  const std::size_t m_maxFields;
  std::size_t m_headerBytes = 0;  // request line, fields and trailers as counted so far
  std::size_t m_fields = 0;       // header fields and trailer fields
  std::size_t m_trailerFields = 0;
  Refusal m_refusal = Refusal::None;
};

}  // namespace idem::server
