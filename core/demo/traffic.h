#pragma once
// Light live traffic for the demo: a request every second or so (new payments, client retries
// that replay, orders, the odd mismatch and conflict), so the console has something moving.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace idem::demo {

class LiveTraffic {
 public:
  /// keyPrefix starts every key it sends ("live-pay-7"), so two of them on one store never share a key.
  LiveTraffic(std::string host, int port, std::string keyPrefix = "live-");
  LiveTraffic(const LiveTraffic&) = delete;
  LiveTraffic& operator=(const LiveTraffic&) = delete;
  /// Stops and joins.
  ~LiveTraffic();
  void stop();
  [[nodiscard]] long long sent() const { return m_sent.load(); }

 private:
  void run();
  std::string m_host;
  int m_port;
  std::string m_keyPrefix;
  std::atomic<long long> m_sent{0};
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stopping = false;
  std::thread m_thread;
};

}  // namespace idem::demo
