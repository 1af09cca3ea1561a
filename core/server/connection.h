#pragma once
// One HTTP/1.1 connection of the transport (Boost.Beast, asynchronous): reads each request
// under the server's limits and deadlines, hands it to the listener's Handler, writes the answer. A slow or
// idle client holds a socket and a small buffer, never a thread.
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/server/bodybudget.h"
#include "core/server/handler.h"
#include "core/server/rawroute.h"
#include "core/server/transport.h"

namespace idem::server {

class Connection;

/// What every connection of one server shares.
struct ConnectionContext {
  ConnectionContext(const TransportOptions& o, Handler& s, boost::asio::thread_pool& h, std::string docsUrl)
      : options(o), handler(s), handlers(h), docs(std::move(docsUrl)) {}
  const TransportOptions& options;
  Handler& handler;                    // what answers this listener's requests
  boost::asio::thread_pool& handlers;  // runs Handler::handle (it may block)
  const std::string docs;
  /// Tried before `handler` on every request (the fault rig); null: none.
  RawRoute* rawRoute = nullptr;
  /// This listener's connection budget: in all, and per client address (a listener of its own
  /// keeps its budget whatever the others' clients do).
  int maxConnections = 4096;
  int maxPerClient = 1024;
  BodyBudget* bodyBudget = nullptr;     // shared by every listener of the server
  TransportStats* stats = nullptr;      // likewise
  std::atomic<bool> stopping{false};
  std::atomic<int> open{0};
  std::mutex mutex;  // guards `connections` and `perClient`
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections;
  std::unordered_map<std::string, int> perClient;

  enum class Admission { Admitted, ServerFull, ClientFull };
  /// Counts a connection from `peer` in, unless a limit is reached (then nothing is counted).
  Admission admit(const std::string& peer);
  /// Counts it out again (the connection closed).
  void leave(const std::string& peer);
};

/// Serves an accepted socket, admitted from `peer`, until the client leaves, a limit cuts it,
/// or the server stops.
void serveConnection(boost::asio::ip::tcp::socket socket, ConnectionContext& context, std::string peer);

/// Shutdown: closes every connection that waits for a request; those handling one answer it
/// (with Connection: close) and then close.
void closeIdleConnections(ConnectionContext& context);

}  // namespace idem::server
