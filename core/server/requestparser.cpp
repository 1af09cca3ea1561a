#include "core/server/requestparser.h"

#include <boost/beast/http/error.hpp>

namespace idem::server {
namespace bhttp = boost::beast::http;

RequestParser::RequestParser(std::size_t headerBytes, std::size_t fields, BodyReservation* body)
    : m_body(body), m_maxHeaderBytes(headerBytes), m_maxFields(fields) {}

void RequestParser::refuse(Refusal why, error_code& ec) {
  m_refusal = why;
  ec = why == Refusal::OverBudget ? bhttp::error::body_limit : bhttp::error::header_limit;
}

void RequestParser::on_request_impl(bhttp::verb method, string_view methodText, string_view target, int version,
                                    error_code& ec) {
  // The request line counts against the header bytes; Beast's header_limit already bounds it.
  m_headerBytes = methodText.size() + target.size() + 12;
  if (target.size() > kMaxFieldBytes) return refuse(Refusal::FieldTooLong, ec);
  m_message.target(target);
  if (method != bhttp::verb::unknown)
    m_message.method(method);
  else
    m_message.method_string(methodText);
  m_message.version(version);
}

void RequestParser::on_field_impl(bhttp::field name, string_view nameText, string_view value, error_code& ec) {
  m_headerBytes += nameText.size() + value.size() + 4;  // ": " and CRLF
  if (++m_fields > m_maxFields) return refuse(Refusal::TooManyFields, ec);
  if (m_headerBytes > m_maxHeaderBytes) return refuse(Refusal::TooManyHeaderBytes, ec);
  if (nameText.size() > kMaxFieldBytes || value.size() > kMaxFieldBytes) return refuse(Refusal::FieldTooLong, ec);
  if (is_header_done()) {
    ++m_trailerFields;  // counted above, kept from the handler
    return;
  }
  m_message.insert(name, nameText, value);
}

void RequestParser::on_body_init_impl(const boost::optional<std::uint64_t>& contentLength, error_code& ec) {
  ec = {};
  // The parser refused a Content-Length over body_limit before this; the connection took it
  // from the budget already, so the bytes can be reserved at once.
  if (contentLength) m_message.body().reserve(static_cast<std::size_t>(*contentLength));
}

std::size_t RequestParser::on_body_impl(string_view body, error_code& ec) {
  ec = {};
  m_message.body().append(body.data(), body.size());
  return body.size();
}

std::size_t RequestParser::on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) {
  if (m_body && !m_body->grow(body.size())) {
    refuse(Refusal::OverBudget, ec);
    return 0;
  }
  ec = {};
  m_message.body().append(body.data(), body.size());
  return body.size();
}

}  // namespace idem::server
