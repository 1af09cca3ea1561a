// Paths to a second execution through a real `idemctl serve` (issue 16, items 4, 6, 12):
// spellings of an enforced route share one key, the tenant is read strictly, and a store that
// refuses work before execution answers 503 with nothing executed.
#include <QtTest>

#include <fstream>

#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/raw_exchange.h"
#include "tests/endpoint/serve_process.h"

using namespace idem;
using test::kPayment;
using test::rawExchange;

namespace {

std::string writePolicy() {
  const std::string path = "/tmp/idem-ep-paths-policy-" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << test::kEndpointPolicy;
  return path;
}

std::vector<std::string> keyed(const std::string& key, const std::string& tenant = "acct_1") {
  std::vector<std::string> h{"Content-Type: application/json", "Idempotency-Key: " + key};
  if (!tenant.empty()) h.push_back("Account-Id: " + tenant);
  return h;
}

}  // namespace

class TestEnforcePaths : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<test::ServeProcess> m_serve;

  long long count(const std::string& sql, const std::vector<pg::Param>& params = {}) {
    auto c = m_db->connect();
    return c.exec(sql, params).integer(0, "n");
  }
  long long ledgerRows(const std::string& key) {
    return count("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key = $1", {key});
  }
  long long keyRows(const std::string& key) {
    return count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = $1", {key});
  }
  // New connections of the service see the database's new settings; the old ones are ended.
  void reconnectServe() {
    auto c = m_db->connect();
    c.exec("SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = $1 "
           "AND pid <> pg_backend_pid()",
           {m_db->name()});
  }

 private slots:
  void init() {
    m_db = std::make_unique<test::TestDatabase>("ep_paths");
    m_serve = std::make_unique<test::ServeProcess>(
        std::vector<std::string>{"--db", m_db->conninfo(), "--policy", writePolicy()});
  }
  void cleanup() {
    m_serve.reset();
    m_db.reset();
  }

  void spellingsOfARouteShareOneKey_data() {
    QTest::addColumn<QString>("target");
    QTest::newRow("trailing slash") << "/v1/payments/";
    QTest::newRow("upper case") << "/V1/Payments";
    QTest::newRow("double slash") << "/v1//payments";
    QTest::newRow("leading double slash") << "//v1/payments";
    QTest::newRow("encoded unreserved") << "/v1/%70ayments";
    QTest::newRow("dot segment") << "/v1/./payments";
    QTest::newRow("dot-dot segment") << "/v1/x/../payments";
    QTest::newRow("encoded dot segment") << "/v1/%2e/payments";
  }
  void spellingsOfARouteShareOneKey() {
    QFETCH(QString, target);
    const int port = m_serve->port();
    auto first = rawExchange(port, "POST", "/v1/payments", keyed("k-spell"), kPayment);
    QCOMPARE(first.status, 201);
    auto other = rawExchange(port, "POST", target.toStdString(), keyed("k-spell"), kPayment);
    QVERIFY2(other.status == 201, other.head.c_str());
    QCOMPARE(other.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(other.body, first.body);
    QCOMPARE(ledgerRows("k-spell"), 1LL);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE endpoint = 'POST /v1/payments'"), 1LL);

    // A spelling first is the same key as well: the canonical route is its endpoint.
    auto spelled = rawExchange(port, "POST", target.toStdString(), keyed("k-spell-2"), kPayment);
    QVERIFY2(spelled.status == 201, spelled.head.c_str());
    auto plain = rawExchange(port, "POST", "/v1/payments", keyed("k-spell-2"), kPayment);
    QCOMPARE(plain.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(ledgerRows("k-spell-2"), 1LL);
  }

  void anEncodedSlashNeverRunsTwice() {
    // Idem keeps %2F another path; an HTTP layer that decodes it first (cpp-httplib does)
    // hands over /v1/payments. Either way the key never runs twice.
    QCOMPARE(rawExchange(m_serve->port(), "POST", "/v1/payments", keyed("k-slash"), kPayment).status, 201);
    auto r = rawExchange(m_serve->port(), "POST", "/v1%2Fpayments", keyed("k-slash"), kPayment);
    QVERIFY2(r.header("Idempotent-Replayed") == "true" || (r.status >= 400 && r.status < 500), r.head.c_str());
    QCOMPARE(ledgerRows("k-slash"), 1LL);
  }

  void duplicateTenantHeadersAre400WithNothingStored() {
    auto h = keyed("k-dup", "acct_attacker");
    h.push_back("Account-Id: acct_1");
    auto r = rawExchange(m_serve->port(), "POST", "/v1/payments", h, kPayment);
    QCOMPARE(r.status, 400);
    QVERIFY2(r.body.find("tenant") != std::string::npos, r.body.c_str());
    QCOMPARE(keyRows("k-dup"), 0LL);
    QCOMPARE(ledgerRows("k-dup"), 0LL);
    auto get = rawExchange(m_serve->port(), "GET", "/v1/payments", {"Account-Id: a", "Account-Id: b"});
    QCOMPARE(get.status, 400);
  }

  void missingTenantIs400UnderTheDefaultPolicyChoice() {
    auto r = rawExchange(m_serve->port(), "POST", "/v1/payments", keyed("k-notenant", ""), kPayment);
    QCOMPARE(r.status, 400);
    QVERIFY2(r.body.find("tenant-missing") != std::string::npos, r.body.c_str());
    QCOMPARE(keyRows("k-notenant"), 0LL);
    QCOMPARE(ledgerRows("k-notenant"), 0LL);
    QCOMPARE(rawExchange(m_serve->port(), "GET", "/v1/payments", {}).status, 400);
  }

  void malformedTenantIs400OnEveryRoute_data() {
    QTest::addColumn<QString>("method");
    QTest::addColumn<QString>("target");
    QTest::newRow("list") << "GET" << "/v1/payments";
    QTest::newRow("one") << "GET" << "/v1/payments/pay_1";
    QTest::newRow("post") << "POST" << "/v1/payments";
  }
  void malformedTenantIs400OnEveryRoute() {
    QFETCH(QString, method);
    QFETCH(QString, target);
    std::vector<std::string> h{"Content-Type: application/json", "Idempotency-Key: k-bad-tenant",
                               std::string("Account-Id: \xff")};
    auto r = rawExchange(m_serve->port(), method.toStdString(), target.toStdString(), h,
                         method == "POST" ? kPayment : std::string());
    QVERIFY2(r.status == 400, (r.head + "\n" + r.body).c_str());
    QVERIFY2(r.body.find("tenant-malformed") != std::string::npos, r.body.c_str());
    QCOMPARE(keyRows("k-bad-tenant"), 0LL);
  }

  void readOnlyStoreIs503WithNothingExecuted() {
    QCOMPARE(rawExchange(m_serve->port(), "POST", "/v1/payments", keyed("k-ro-warm"), kPayment).status, 201);
    {
      auto c = m_db->connect();
      c.exec("ALTER DATABASE " + pg::quoteIdentifier(m_db->name()) + " SET default_transaction_read_only = on");
    }
    reconnectServe();
    for (const char* key : {"k-ro-1", "k-ro-2"}) {
      auto r = rawExchange(m_serve->port(), "POST", "/v1/payments", keyed(key), kPayment);
      QVERIFY2(r.status == 503, (r.head + "\n" + r.body).c_str());
      QVERIFY(std::stoi(r.header("Retry-After")) >= 1);
      QVERIFY2(r.body.find("read-only") == std::string::npos, r.body.c_str());  // no PostgreSQL text
      QVERIFY2(r.body.find("store-unavailable") != std::string::npos, r.body.c_str());
    }
    {
      auto c = m_db->connect();
      c.exec("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE");
      c.exec("ALTER DATABASE " + pg::quoteIdentifier(m_db->name()) + " RESET default_transaction_read_only");
    }
    reconnectServe();
    QCOMPARE(keyRows("k-ro-1"), 0LL);
    QCOMPARE(ledgerRows("k-ro-1"), 0LL);
    // Writable again: the same key runs once.
    client::ClientResponse after;
    for (int i = 0; i < 20 && after.status != 201; ++i) {
      after = client::Client("127.0.0.1", m_serve->port()).post("/v1/payments", test::jsonHeaders("k-ro-1"), kPayment);
      if (after.status != 201) QThread::msleep(100);
    }
    QCOMPARE(after.status, 201);
    QCOMPARE(ledgerRows("k-ro-1"), 1LL);
  }

  void statementTimeoutBeforeExecutionIs503() {
    {
      auto c = m_db->connect();
      c.exec("ALTER DATABASE " + pg::quoteIdentifier(m_db->name()) + " SET statement_timeout = '150ms'");
    }
    reconnectServe();
    auto locker = m_db->connect();
    locker.exec("BEGIN");
    locker.exec("LOCK TABLE idem.keys IN ACCESS EXCLUSIVE MODE");
    auto r = rawExchange(m_serve->port(), "POST", "/v1/payments", keyed("k-timeout"), kPayment);
    locker.exec("ROLLBACK");
    QVERIFY2(r.status == 503, (r.head + "\n" + r.body).c_str());
    QVERIFY(std::stoi(r.header("Retry-After")) >= 1);
    QVERIFY2(r.body.find("statement timeout") == std::string::npos, r.body.c_str());
    QCOMPARE(keyRows("k-timeout"), 0LL);
    QCOMPARE(ledgerRows("k-timeout"), 0LL);
    auto again = rawExchange(m_serve->port(), "POST", "/v1/payments", keyed("k-timeout"), kPayment);
    QCOMPARE(again.status, 201);
    QCOMPARE(ledgerRows("k-timeout"), 1LL);
  }
};

QTEST_GUILESS_MAIN(TestEnforcePaths)
#include "tst_enforcepaths.moc"
