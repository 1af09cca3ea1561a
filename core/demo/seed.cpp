#include "core/demo/seed.h"

#include <future>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <thread>

#include "core/client/client.h"
#include "core/fingerprint/fingerprint.h"
#include "core/store/keystore.h"
#include "core/trace/outcome.h"
#include "core/store/transaction.h"

namespace idem::demo {
namespace {

using client::Client;
using client::ClientResponse;

constexpr const char* kPayments = "POST /v1/payments";
constexpr long long kMinute = 60;
constexpr long long kHour = 60 * kMinute;

struct Seeded {
  std::string tenant;
  std::string endpoint;
  std::string key;
  long long shiftSeconds;
};

class Seeder {
 public:
  Seeder(endpoint::Server& server, const std::string& conninfo)
      : m_server(server), m_conninfo(conninfo), m_client("127.0.0.1", server.port()) {}

  ClientResponse post(const std::string& path, const std::string& tenant, const std::string& key,
                      const std::string& body, http::Headers extra = {}, Client* client = nullptr) {
    ++m_report.requests;
    return send(path, tenant, key, body, std::move(extra), client ? *client : m_client);
  }

  /// One request, not counted: safe from another thread (the report is the seeding thread's).
  static ClientResponse send(const std::string& path, const std::string& tenant, const std::string& key,
                             const std::string& body, http::Headers extra, Client& client) {
    http::Headers h{{"Content-Type", "application/json"}, {"Account-Id", tenant}};
    if (!key.empty()) h.emplace_back("Idempotency-Key", key);
    h.insert(h.end(), extra.begin(), extra.end());
    return client.post(path, h, body);
  }

  void expect(const ClientResponse& r, int status, const std::string& what) {
    if (r.status != status)
      throw std::runtime_error("demo seed: " + what + ": expected " + std::to_string(status) + ", got " +
                               (r.status ? std::to_string(r.status) + " " + r.body : r.error));
  }

  /// Concurrent request while another one holds the key (Sim-Delay): the retry's answer.
  ClientResponse retryDuring(const std::string& path, const std::string& tenant, const std::string& key,
                             const std::string& body, int delayMs, int retryAfterMs, ClientResponse* original) {
    const int port = m_server.port();
    auto slow = std::async(std::launch::async, [&, port] {
      Client c("127.0.0.1", port);
      return send(path, tenant, key, body, {{"Sim-Delay-Ms", std::to_string(delayMs)}}, c);
    });
    ++m_report.requests;  // the slow one, counted here: the report is this thread's
    std::this_thread::sleep_for(std::chrono::milliseconds(retryAfterMs));
    Client c("127.0.0.1", port);
    auto r = post(path, tenant, key, body, {}, &c);
    *original = slow.get();
    return r;
  }

  void remember(const std::string& tenant, const std::string& endpoint, const std::string& key, long long lo,
                long long hi) {
    std::uniform_int_distribution<long long> d(lo, hi);
    m_seeded.push_back({tenant, endpoint, key, d(m_rng)});
  }

  SeedReport run();

 private:
  void ordinaryHistory();
  void conflictsAndMismatches();
  void failures();
  void stuckKey();
  void incident();

  endpoint::Server& m_server;
  std::string m_conninfo;
  Client m_client;
  SeedReport m_report;
  std::vector<Seeded> m_seeded;
  std::mt19937_64 m_rng{20261202};
};

std::string payment(long long amount, const std::string& currency, const std::string& customer) {
  return nlohmann::json{{"amount", amount}, {"currency", currency}, {"customer", customer}}.dump();
}

void Seeder::ordinaryHistory() {
  struct P {
    const char* tenant;
    const char* key;
    long long amount;
    const char* currency;
    const char* customer;
    int retries;
  };
  const P payments[] = {
      {"acct_acme", "acme-inv-2041", 129900, "usd", "cus_acme_001", 0},
      {"acct_acme", "acme-inv-2042", 4500, "usd", "cus_acme_017", 1},
      {"acct_acme", "acme-inv-2043", 78000, "usd", "cus_acme_003", 0},
      {"acct_acme", "acme-sub-9931", 1999, "usd", "cus_acme_120", 2},
      {"acct_globex", "9f3c1a7e-55d2-4b7e-9a51-0c2f1e8d7b10", 25000, "eur", "cus_gx_77", 0},
      {"acct_globex", "6a1d0f42-8b3e-4c19-b7aa-3e5f9d2c4e81", 310000, "eur", "cus_gx_12", 1},
      {"acct_globex", "c2b9e8f1-1d4a-4f6b-8e3c-7a9d5b0f2e64", 8900, "eur", "cus_gx_31", 0},
      {"acct_initech", "tps-report-0001", 5000, "usd", "cus_it_milton", 0},
      {"acct_initech", "tps-report-0002", 5000, "usd", "cus_it_peter", 1},
      {"acct_initech", "stapler-order-red", 2399, "usd", "cus_it_milton", 3},
  };
  int replays = 0;
  for (const auto& p : payments) {
    const std::string body = payment(p.amount, p.currency, p.customer);
    auto r = post("/v1/payments", p.tenant, p.key, body);
    expect(r, 201, std::string("payment ") + p.key);
    for (int i = 0; i < p.retries; ++i) {
      expect(post("/v1/payments", p.tenant, p.key, body), 201, "replay");
      ++replays;
    }
    if (std::string(p.key) == "acme-inv-2041") {
      // A refund of part of it, retried once by the client.
      const std::string refund =
          nlohmann::json{{"payment", nlohmann::json::parse(r.body)["id"]}, {"amount", 29900}}.dump();
      expect(post("/v1/refunds", p.tenant, "acme-refund-2041-1", refund), 201, "refund");
      expect(post("/v1/refunds", p.tenant, "acme-refund-2041-1", refund), 201, "refund replay");
      remember(p.tenant, "POST /v1/refunds", "acme-refund-2041-1", 2 * kHour, 6 * kHour);
    }
    remember(p.tenant, kPayments, p.key, 10 * kMinute, 20 * kHour);
  }
  // Two payments from the day before yesterday: expired, not yet swept.
  for (const char* key : {"acme-inv-1990", "acme-inv-1991"}) {
    expect(post("/v1/payments", "acct_acme", key, payment(15000, "usd", "cus_acme_044")), 201, key);
    remember("acct_acme", kPayments, key, 40 * kHour, 44 * kHour);
  }
  // Orders (30m TTL, fields fingerprint) and webhook acks (key optional).
  for (int i = 1; i <= 5; ++i) {
    const std::string key = "cart-" + std::to_string(7000 + i);
    const std::string body = nlohmann::json{{"item", "sku_" + std::to_string(100 + i)},
                                            {"quantity", i % 3 + 1},
                                            {"customer", "cus_shop_" + std::to_string(i)}}
                                 .dump();
    expect(post("/v1/orders", "acct_globex", key, body), 201, "order " + key);
    if (i % 2 == 0) expect(post("/v1/orders", "acct_globex", key, body), 201, "order replay");
    remember("acct_globex", "POST /v1/orders", key, 1 * kMinute, 25 * kMinute);
  }
  expect(post("/v1/orders", "acct_globex", "cart-6990", R"({"item":"sku_099","quantity":1})"), 201, "old order");
  remember("acct_globex", "POST /v1/orders", "cart-6990", 3 * kHour, 5 * kHour);
  for (int i = 1; i <= 3; ++i)
    expect(post("/v1/webhooks/ack", "acct_initech", i == 2 ? "" : "evt_ack_" + std::to_string(i),
                nlohmann::json{{"event", "evt_" + std::to_string(5500 + i)}}.dump()),
           200, "webhook ack");
  m_report.lines.push_back(
      "ordinary history: 12 payments, a refund, 6 orders, 3 webhook acks across acct_acme, "
      "acct_globex, acct_initech; " +
      std::to_string(replays + 3) + " client retries replayed");
}

void Seeder::conflictsAndMismatches() {
  ClientResponse original;
  // Payments answer 409 while the original runs.
  auto r = retryDuring("/v1/payments", "acct_globex", "gx-payout-5512", payment(99000, "eur", "cus_gx_02"), 1200, 300,
                       &original);
  expect(r, 409, "conflict");
  expect(original, 201, "conflict original");
  remember("acct_globex", kPayments, "gx-payout-5512", 3 * kHour, 4 * kHour);
  // Orders wait up to 2s for the original, then replay it…
  r = retryDuring("/v1/orders", "acct_acme", "cart-7101", R"({"item":"sku_300","quantity":1})", 700, 200, &original);
  expect(r, 201, "waited replay");
  remember("acct_acme", "POST /v1/orders", "cart-7101", 5 * kMinute, 10 * kMinute);
  // …and answer 409 when it takes longer than that.
  r = retryDuring("/v1/orders", "acct_acme", "cart-7102", R"({"item":"sku_301","quantity":2})", 2600, 200, &original);
  expect(r, 409, "order conflict after waiting");
  remember("acct_acme", "POST /v1/orders", "cart-7102", 10 * kMinute, 15 * kMinute);
  // Same key, different payload: 422.
  expect(post("/v1/payments", "acct_acme", "acme-inv-2042", payment(4600, "usd", "cus_acme_017")), 422, "mismatch");
  expect(post("/v1/orders", "acct_globex", "cart-7002", R"({"item":"sku_102","quantity":9,"customer":"cus_shop_2"})"),
         422, "order mismatch");
  m_report.lines.push_back(
      "conflicts: a 409 on payments, an order retry that waited and replayed, one that waited "
      "2s and got 409; two 422 payload mismatches");
}

void Seeder::failures() {
  const std::string body = payment(5400, "usd", "cus_it_samir");
  expect(post("/v1/payments", "acct_initech", "tps-report-0003", body, {{"Sim-Fail", "after"}}), 500, "fail after");
  expect(post("/v1/payments", "acct_initech", "tps-report-0003", body), 500, "failure replay");
  remember("acct_initech", kPayments, "tps-report-0003", 1 * kHour, 2 * kHour);
  expect(post("/v1/payments", "acct_initech", "tps-report-0004", body, {{"Sim-Fail", "before"}}), 503, "fail before");
  expect(post("/v1/payments", "acct_initech", "tps-report-0004", body), 201, "retry after released");
  remember("acct_initech", kPayments, "tps-report-0004", 30 * kMinute, 50 * kMinute);
  m_report.lines.push_back(
      "failures: a 500 after execution started (stored, replayed, ledger row 'failed'); a "
      "failure before execution (released, the retry executed)");
}

void Seeder::stuckKey() {
  // A worker that claimed a payment and died: claimed through the store directly, never
  // completed, and its lease moved 12 minutes into the past.
  const enforce::PolicyPtr inForce = m_server.host().policy();
  const policy::Tier* tier = inForce->policy.tierFor("POST", "/v1/payments");
  const std::string body = payment(64000, "usd", "cus_acme_311");
  store::Pool pool(m_conninfo, 1);
  store::KeyStore keys(pool);
  store::ClaimRequest c;
  c.scope = {"acct_acme", kPayments, "acme-inv-2050"};
  c.fingerprint = fp::compute(tier->fingerprint, body, {});
  c.tier = tier->name;
  c.policyVersion = m_server.policyVersion();
  c.ttl = tier->ttl;
  c.lease = tier->lease;
  c.archiveRetention = tier->archiveRetention;
  c.requestId = "req_worker_died_0c41";
  (void)keys.claim(c);
  pg::Connection conn(m_conninfo);
  backdateKey(conn, c.scope.tenant, c.scope.endpoint, c.scope.key, 12 * kMinute);
  m_report.stuckKey = c.scope.key;
  m_report.lines.push_back("stuck: acct_acme " + c.scope.key +
                           " is still 'processing'; its worker died 12 minutes ago (lease expired, nobody retried)");
}

void Seeder::incident() {
  const enforce::PolicyPtr inForce = m_server.host().policy();
  const policy::Tier* tier = inForce->policy.tierFor("POST", "/v1/payments");
  const std::string tenant = "acct_acme", key = "checkout-8812-pay";
  const std::string body = payment(249900, "usd", "cus_acme_1042");
  expect(post("/v1/payments", tenant, key, body), 201, "incident original");
  expect(post("/v1/payments", tenant, key, body), 201, "incident retry 1");
  expect(post("/v1/payments", tenant, key, body), 201, "incident retry 2");
  if (!m_server.host().flushTrace()) throw std::runtime_error("demo seed: trace not written");
  // The original ran 24h33m ago (TTL 24h): the key expired 33 minutes ago. The two retries
  // came after a 30s and a 2m30s timeout and were replayed.
  pg::Connection conn(m_conninfo);
  const long long shift = tier->ttl.count() / 1000 + 33 * kMinute;
  backdateKey(conn, tenant, kPayments, key, shift);
  auto ids = conn.exec(
      "SELECT id FROM idem.events WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3 AND "
      "outcome = $4 ORDER BY id",
      {tenant, kPayments, key, std::string(trace::sqlName(trace::Outcome::Replayed))});
  const long long offsets[] = {30, 150};
  for (int i = 0; i < ids.rows() && i < 2; ++i)
    conn.exec("UPDATE idem.events SET at = at + make_interval(secs => $2) WHERE id = $1",
              {ids.str(i, "id"), offsets[i]});
  // The channel's last retry, inside its 72h retry window but after the key's 24h: executed again.
  auto late = post("/v1/payments", tenant, key, body);
  expect(late, 201, "incident late retry");
  if (!late.header("Idempotent-Replayed").empty()) throw std::runtime_error("demo seed: the late retry was replayed");
  m_report.incidentTenant = tenant;
  m_report.incidentKey = key;
  m_report.lines.push_back(
      "THE INCIDENT: acct_acme " + key + " was charged twice — replayed at +30s and +2m30s, then retried " +
      std::to_string(shift / kHour) + "h" + std::to_string(shift % kHour / kMinute) +
      "m later, 33 minutes after the key expired, and executed again (two ledger rows, generations 1 and 2)");
}

SeedReport Seeder::run() {
  ordinaryHistory();
  conflictsAndMismatches();
  failures();
  stuckKey();
  if (!m_server.host().flushTrace()) throw std::runtime_error("demo seed: trace not written");
  {
    pg::Connection conn(m_conninfo);
    for (const auto& s : m_seeded) backdateKey(conn, s.tenant, s.endpoint, s.key, s.shiftSeconds);
  }
  incident();
  m_server.host().flushTrace();
  return m_report;
}

}  // namespace

void backdateKey(pg::Connection& conn, const std::string& tenant, const std::string& endpoint, const std::string& key,
                 long long seconds) {
  // One transaction: the key's records move together or not at all.
  const std::vector<pg::Param> p{tenant, endpoint, key, seconds};
  pg::Transaction tx(conn);
  conn.exec(
      "UPDATE idem.keys SET created_at = created_at - make_interval(secs => $4), "
      "completed_at = completed_at - make_interval(secs => $4), "
      "expires_at = expires_at - make_interval(secs => $4), "
      "lease_until = lease_until - make_interval(secs => $4) "
      "WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3",
      p);
  conn.exec(
      "UPDATE idem.key_archive SET created_at = created_at - make_interval(secs => $4), "
      "completed_at = completed_at - make_interval(secs => $4), "
      "expires_at = expires_at - make_interval(secs => $4), "
      "archived_at = archived_at - make_interval(secs => $4) "
      "WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3",
      p);
  conn.exec(
      "UPDATE idem.events SET at = at - make_interval(secs => $4) "
      "WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3",
      p);
  conn.exec(
      // The resource's own "created" (what the ledger API shows) moves with the row's time, so
      // the channel's side and the key's agree on when the charge happened.
      "UPDATE idem_demo.ledger SET created_at = created_at - make_interval(secs => $4), "
      "payload = CASE WHEN jsonb_typeof(payload -> 'created') = 'number' "
      "  THEN jsonb_set(payload, '{created}', to_jsonb((payload ->> 'created')::bigint - $4::bigint)) "
      "  ELSE payload END "
      "WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3",
      p);
  tx.commit();
}

SeedReport seedHistory(endpoint::Server& server, const std::string& conninfo) {
  // The seed moves keys back in time by SQL behind the endpoint's back (as an operator's edit
  // would); replays from memory honour such an edit only after the cache's max age, so the
  // seed's late retry would be replayed instead of refused.
  if (server.options().replayCache.maxAge > std::chrono::milliseconds(0))
    throw std::invalid_argument("demo seed: the endpoint must run with its replay cache off (replayCache.maxAge 0)");
  Seeder s(server, conninfo);
  return s.run();
}

}  // namespace idem::demo
