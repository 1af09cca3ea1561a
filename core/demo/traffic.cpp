#include "core/demo/traffic.h"

#include <deque>
#include <nlohmann/json.hpp>
#include <random>

#include "core/client/client.h"

namespace idem::demo {

LiveTraffic::LiveTraffic(std::string host, int port, std::string keyPrefix)
    : m_host(std::move(host)), m_port(port), m_keyPrefix(std::move(keyPrefix)) {
  m_thread = std::thread([this] { run(); });
}

LiveTraffic::~LiveTraffic() { stop(); }

void LiveTraffic::stop() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void LiveTraffic::run() {
  std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<int> pause(600, 1800), pick(0, 99), amount(500, 90000), tenantPick(0, 2);
  const char* tenants[] = {"acct_acme", "acct_globex", "acct_initech"};
  struct Sent {
    std::string tenant, key, body;
  };
  std::deque<Sent> recent;
  client::Client client(m_host, m_port, std::chrono::seconds(10));
  long long n = 0;
  for (;;) {
    {
      std::unique_lock lock(m_mutex);
      if (m_wake.wait_for(lock, std::chrono::milliseconds(pause(rng)), [this] { return m_stopping; })) return;
    }
    const int p = pick(rng);
    http::Headers h{{"Content-Type", "application/json"}};
    if (p < 20 && !recent.empty()) {
      // A client retry after a timeout: replayed.
      const Sent& s = recent[static_cast<std::size_t>(rng() % recent.size())];
      h.emplace_back("Account-Id", s.tenant);
      h.emplace_back("Idempotency-Key", s.key);
      (void)client.post("/v1/payments", h, s.body);
    } else if (p < 23 && !recent.empty()) {
      // A client bug: same key, another amount → 422.
      const Sent& s = recent.back();
      h.emplace_back("Account-Id", s.tenant);
      h.emplace_back("Idempotency-Key", s.key);
      (void)client.post("/v1/payments", h, R"({"amount":1,"currency":"usd","customer":"cus_live_bug"})");
    } else if (p < 35) {
      h.emplace_back("Account-Id", "acct_globex");
      h.emplace_back("Idempotency-Key", m_keyPrefix + "cart-" + std::to_string(++n));
      (void)client.post("/v1/orders", h, R"({"item":"sku_live","quantity":1})");
    } else {
      Sent s{tenants[tenantPick(rng)], m_keyPrefix + "pay-" + std::to_string(++n),
             nlohmann::json{
                 {"amount", amount(rng)}, {"currency", "usd"}, {"customer", "cus_live_" + std::to_string(n % 40)}}
                 .dump()};
      h.emplace_back("Account-Id", s.tenant);
      h.emplace_back("Idempotency-Key", s.key);
      (void)client.post("/v1/payments", h, s.body);
      recent.push_back(std::move(s));
      if (recent.size() > 20) recent.pop_front();
    }
    ++m_sent;
  }
}

}  // namespace idem::demo
