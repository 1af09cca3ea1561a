// One request through the gate (core/gate) and the demo API behind it (core/endpoint/service.h)
// in-process, without the transport, on a
// real PostgreSQL: $IDEM_FUZZ_CONNINFO names a cluster (tests/fuzz/fuzz.sh starts a throwaway
// one); a fresh database in it is migrated and given the demo policy.
//
// Input: an HTTP/1.1-like request, "METHOD /path?query\r\nName: value\r\n...\r\n\r\nbody".
// Every request gets an answer, never an exception; the answer is well-formed (status, a JSON
// body where the Content-Type says so, its Request-Id); an executed keyed request is replayed,
// byte for byte, when sent again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>

#include "core/endpoint/service.h"
#include "core/gate/gate.h"
#include "core/store/pg.h"
#include "core/store/policystore.h"
#include "resources/embedded_resources.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_store.h"

using idem::fuzz::check;
namespace endpoint = idem::endpoint;
namespace server = idem::server;
using nlohmann::json;

namespace {

std::unique_ptr<idem::gate::Host> g_host;
std::unique_ptr<endpoint::Service> g_service;  // executes what g_gate lets through
std::unique_ptr<idem::gate::Gate> g_gate;
boost::asio::io_context g_loop;
std::unique_ptr<boost::asio::thread_pool> g_handlers;

// One request through the gate, as the transport hands it over: started on the loop, answered
// from wherever the gate answers.
server::Handled answer(server::Request request) {
  std::promise<server::Handled> answered;
  auto result = answered.get_future();
  boost::asio::post(g_loop, [&] {
    server::Done done = [&answered](server::Handled h) { answered.set_value(std::move(h)); };
    g_gate->start(request, server::Dispatch{g_loop.get_executor(), *g_handlers}, done);
  });
  while (result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    g_loop.restart();
    g_loop.run_for(std::chrono::milliseconds(5));
  }
  return result.get();
}

std::string_view nextLine(std::string_view& rest) {
  const auto end = rest.find('\n');
  std::string_view line = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

server::Request decode(std::string_view input) {
  server::Request r;
  std::string_view rest = input;
  const std::string_view requestLine = nextLine(rest);
  const auto space = requestLine.find(' ');
  r.method = std::string(requestLine.substr(0, space));
  std::string_view target = space == std::string_view::npos ? "/" : requestLine.substr(space + 1);
  const auto q = target.find('?');
  r.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) {
    std::string_view query = target.substr(q + 1);
    while (!query.empty()) {
      const auto amp = query.find('&');
      const std::string_view pair = query.substr(0, amp);
      const auto eq = pair.find('=');
      r.query.emplace(std::string(pair.substr(0, eq)),
                      eq == std::string_view::npos ? std::string() : std::string(pair.substr(eq + 1)));
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    }
  }
  while (!rest.empty()) {
    const std::string_view line = nextLine(rest);
    if (line.empty()) break;
    const auto colon = line.find(':');
    std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    r.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  r.body = std::string(rest);
  return r;
}

std::string headerValue(const server::Handled& h, std::string_view name) {
  for (const auto& [n, v] : h.response.headers)
    if (idem::http::equalsIgnoreCase(n, name)) return v;
  return {};
}

void checkWellFormed(const server::Request& request, const server::Handled& h) {
  const int status = h.response.status;
  check(status >= 100 && status <= 599, "a status is 100..599", std::to_string(status));
  check(headerValue(h, "Request-Id") == request.requestId, "every answer carries its Request-Id");
  const std::string type = headerValue(h, "Content-Type");
  if (type.starts_with("application/problem+json")) {
    const json problem = json::parse(h.response.body, nullptr, false);
    check(problem.is_object(), "a problem body is a JSON object", h.response.body);
    check(problem.value("status", 0) == status, "a problem's status is the response's", h.response.body);
  } else if (type.starts_with("application/json")) {
    check(!json::parse(h.response.body, nullptr, false).is_discarded(), "a JSON body is JSON", h.response.body);
  }
  // The catch-all answers 500 "internal" only when an exception escaped the handlers: any
  // input that gets there is a bug (and its text would leak internals to the client).
  check(h.outcome != "error", "no request reaches the catch-all", h.response.body);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::string conninfo = idem::fuzz::freshDatabase("fuzz_service", /*withDemo=*/true);
  idem::pg::Connection conn(conninfo);
  auto policy = idem::policy::parsePolicy(*idem::resources::find("policy/demo-policy.json"), "demo-policy.json");
  const int version = idem::store::recordPolicy(conn, policy);
  // Fault injection stays off: its delays would only slow the run down.
  g_host = std::make_unique<idem::gate::Host>(conninfo, std::move(policy), version, idem::gate::HostOptions{2});
  g_service = std::make_unique<endpoint::Service>(*g_host, false);
  g_handlers = std::make_unique<boost::asio::thread_pool>(2);
  g_gate = std::make_unique<idem::gate::Gate>(*g_host, *g_service, idem::gate::GateOptions{});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static unsigned long long counter = 0;
  server::Request request = decode(std::string_view(reinterpret_cast<const char*>(data), size));
  request.requestId = "fuzz-" + std::to_string(++counter);
  const server::Handled first = answer(request);
  checkWellFormed(request, first);

  // Never twice: an executed, successful keyed request sent again is answered from the store.
  if (first.generation > 0 && first.response.status / 100 == 2) {
    request.requestId = "fuzz-" + std::to_string(++counter);
    const server::Handled again = answer(request);
    checkWellFormed(request, again);
    check(again.response.status == first.response.status && again.response.body == first.response.body,
          "the same keyed request sent again gets the stored answer",
          std::to_string(first.response.status) + " " + first.response.body + "\n  then " +
              std::to_string(again.response.status) + " " + again.response.body);
    check(headerValue(again, "Idempotent-Replayed") == "true", "a replay says so", again.outcome);
  }
  return 0;
}
