#include "core/faultrig/faultrig.h"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <iostream>

#include "core/faultrig/faultlog.h"
#include "core/faultrig/faultprofile.h"
#include "core/server/problems.h"

namespace idem::faultrig {
namespace {

long long wallUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Written on a handler thread: the insert must not stall the event loop.
void record(store::Pool& pool, boost::asio::thread_pool& handlers, FaultAttempt a) {
  boost::asio::post(handlers, [&pool, a = std::move(a)] {
    try {
      pool.withRetry([&](pg::Connection& conn) { insertFaultAttempt(conn, a); });
    } catch (const std::exception& e) {
      std::cerr << "idem endpoint: fault attempt on '" << a.profile << "' not recorded: " << e.what() << '\n';
    }
  });
}

}  // namespace

bool FaultRig::serve(const server::Request& sr, server::RawExchange& exchange, const server::Dispatch& where) {
  if (!isFaultRoute(sr.path)) return false;
  std::string error;
  const auto route = parseFaultRoute(sr.path, error);
  if (!route) {
    exchange.answer(server::problem(http::Problem::FaultProfileUnknown,
                                    error + "; nothing was executed or stored.", m_docs));
    return true;
  }
  FaultAttempt a;
  a.arrivedUs = exchange.arrivedUs();
  a.profile = route->profileName;
  a.operation = route->operation;
  a.key = http::findHeader(sr.headers, "Idempotency-Key");
  a.userAgent = http::findHeader(sr.headers, "User-Agent").value_or("");
  a.method = sr.method;
  a.path = route->rest;
  a.remote = sr.remote;
  switch (route->profile.kind) {
    case FaultProfile::Kind::Status: {
      const int status = route->profile.status;
      auto response =
          server::problem(http::Problem::InjectedFault,
                          "Fault profile '" + route->profileName + "' answered; nothing was executed.", m_docs, {},
                          status);
      if (route->profile.retryAfter) response.headers.emplace_back("Retry-After", *route->profile.retryAfter);
      a.outcome = std::to_string(status);
      a.retryAfter = route->profile.retryAfter;
      a.endedUs = wallUs();
      record(m_pool, where.handlers, std::move(a));
      exchange.answer(response);
      return true;
    }
    case FaultProfile::Kind::Reset:
      a.outcome = "reset";
      a.endedUs = wallUs();
      record(m_pool, where.handlers, std::move(a));
      exchange.reset();
      return true;
    case FaultProfile::Kind::Hang:
      a.outcome = "hang";
      // When the client gave up is the attempt's end.
      exchange.hang(kMaxHang, [this, handlers = &where.handlers, a = std::move(a)]() mutable {
        a.endedUs = wallUs();
        record(m_pool, *handlers, std::move(a));
      });
      return true;
  }
  return false;
}

std::unique_ptr<server::RawRoute> makeFaultRig(store::Pool& pool, const std::string& docsUrl) {
  return std::make_unique<FaultRig>(pool, docsUrl);
}

}  // namespace idem::faultrig
