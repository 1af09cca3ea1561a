#pragma once
// One HTTP/1.1 connection of the endpoint (Boost.Beast, asynchronous): reads each request
// under the server's limits and deadlines, hands it to the Service, writes the answer. A slow or
// idle client holds a socket and a small buffer, never a thread.
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/endpoint/handler.h"
#include "core/endpoint/server.h"
#include "core/store/pool.h"

namespace idem::endpoint {

class Connection;

/// What every connection of one server shares.
struct ConnectionContext {
  ConnectionContext(const ServerOptions& o, Handler& s, boost::asio::thread_pool& h, std::string docsUrl)
      : options(o), handler(s), handlers(h), docs(std::move(docsUrl)) {}
  const ServerOptions& options;
  Handler& handler;                    // what answers this listener's requests
  boost::asio::thread_pool& handlers;  // runs Handler::handle (it blocks on the store)
  const std::string docs;
  /// Set on a server with --allow-fault-injection: /faults/... routes are answered by their
  /// profile (faultprofile.h) and each attempt is written through this pool (faultlog.h).
  store::Pool* faultPool = nullptr;
  std::atomic<bool> stopping{false};
  std::atomic<int> open{0};
  std::mutex mutex;  // guards `connections`
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections;
};

/// Serves an accepted socket until the client leaves, a limit cuts it, or the server stops.
void serveConnection(boost::asio::ip::tcp::socket socket, ConnectionContext& context);

/// Shutdown: closes every connection that waits for a request; those handling one answer it
/// (with Connection: close) and then close.
void closeIdleConnections(ConnectionContext& context);

}  // namespace idem::endpoint
