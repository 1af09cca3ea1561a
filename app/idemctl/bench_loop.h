#pragma once
// The benchmarks' event-loop runs: requests driven by their own callbacks on one loop thread,
// counted until a deadline.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "app/idemctl/bench.h"

namespace idemctl::bench {

/// Runs `loop` for `seconds`, then sets `stop` (the clients start nothing new) and runs it until
/// what was in flight came back. The run: what `done` counted by the deadline, and that long.
inline Run runLoopFor(boost::asio::io_context& loop, int seconds, bool& stop, const long long& done) {
  boost::asio::steady_timer timer(loop, std::chrono::seconds(seconds));
  const auto start = std::chrono::steady_clock::now();
  Run run;
  timer.async_wait([&](const boost::system::error_code&) {
    stop = true;
    run.operations = done;
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  loop.run();
  return run;
}

}  // namespace idemctl::bench
