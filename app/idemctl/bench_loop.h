#pragma once
// The benchmarks' two ways of driving requests for a while: `clients` threads each making one
// request after another, or requests driven by their own callbacks on one event loop.
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "app/idemctl/bench.h"

namespace idemctl::bench {

/// `clients` threads calling op(thread, rng, made so far) for `seconds`; what returned true counts.
template <typename Op>
Run measure(int clients, int seconds, Op op) {
  std::atomic<bool> stop{false};
  std::atomic<long long> done{0};
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(clients));
  for (int t = 0; t < clients; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<unsigned long long>(t) * 7919 + 17);
      long long n = 0;
      while (!stop.load(std::memory_order_relaxed))
        if (op(t, rng, n)) ++n;
      done += n;
    });
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (auto& th : threads) th.join();
  return {done.load(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

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
