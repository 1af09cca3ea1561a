#pragma once
// A route answered outside the Handler contract: it sees the request on the event loop before
// the listener's handler, and may do to the connection what no Handler can (reset it, leave it
// unanswered until the client gives up). The fault rig (core/faultrig) is one; the transport
// knows none by name, so a server without one carries none of its code.
#include <chrono>
#include <functional>

#include "core/server/handler.h"

namespace idem::server {

/// The connection a raw route took, for the calls it may make (on the event loop, once).
class RawExchange {
 public:
  virtual ~RawExchange() = default;
  /// Answers like a handler would (logged and counted like any answer).
  virtual void answer(const http::Response& response) = 0;
  /// Closes with a TCP reset (RST, not FIN), what a crashed peer or a middlebox does: no answer.
  virtual void reset() = 0;
  /// Answers nothing: reads and drops what the client sends until it closes, the server stops or
  /// `limit` passes; then `ended` runs (on the loop) and the connection closes.
  virtual void hang(std::chrono::seconds limit, std::function<void()> ended) = 0;
  /// When the request's head was read, epoch microseconds.
  [[nodiscard]] virtual long long arrivedUs() const = 0;
};

class RawRoute {
 public:
  virtual ~RawRoute() = default;
  /// Called on the event loop for every request of the listener (never block): true when this
  /// route took it and made exactly one call on `exchange`; false: the handler gets it.
  /// `where.handlers` runs work that blocks.
  virtual bool serve(const Request& request, RawExchange& exchange, const Dispatch& where) = 0;
};

}  // namespace idem::server
