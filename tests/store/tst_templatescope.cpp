// A route template's key scope (issue 31, item 1; docs/policy.md, "Routes"): one key belongs to
// the template, and the request's path is part of the request, so the same key on another
// order's path is a 422 for reuse, never a second operation. Exact routes keep their fingerprint.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "core/fingerprint/fingerprint.h"
#include "tests/support/harness.h"
#include "tests/support/testdb.h"

using namespace idem;
using test::header;

namespace {
// Not a raw string: moc reads raw strings as ordinary ones and would lose the test class.
const char* const kPolicy =
    "{\"docs_url\": \"https://docs.test/idempotency\", \"tiers\": ["
    // mode none: only the key is compared, so the path alone tells the two orders apart
    "{\"name\": \"capture\", \"routes\": [\"POST /v1/orders/{id}/capture\"], \"ttl\": \"1h\","
    " \"fingerprint\": {\"mode\": \"none\"}},"
    "{\"name\": \"payments\", \"routes\": [\"POST /v1/payments\"], \"ttl\": \"1h\"}]}";
}  // namespace

class TestTemplateScope : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<test::Harness> m_h;

  long long count(const std::string& sql, const std::vector<pg::Param>& params = {}) {
    return m_db->connect().exec(sql, params).integer(0, "n");
  }

 private slots:
  void init() {
    m_db = std::make_unique<test::TestDatabase>("templatescope");
    m_h = std::make_unique<test::Harness>(m_db->conninfo(), kPolicy);
  }
  void cleanup() {
    m_h.reset();
    m_db.reset();
  }

  void sameKeyOnAnotherPathOfTheTemplateIs422() {
    int executions = 0;
    const auto first = m_h->roundTrip(test::Harness::post("/v1/orders/123/capture", "cap-1", "{}"), 201, &executions);
    QCOMPARE(first.status, 201);
    QCOMPARE(executions, 1);

    // A retry, in any spelling of the same path, is the same request: replayed.
    const auto replay =
        m_h->roundTrip(test::Harness::post("/V1/orders/123/capture/", "cap-1", "{}"), 201, &executions);
    QCOMPARE(replay.status, 201);
    QCOMPARE(header(replay, "Idempotent-Replayed"), std::string("true"));
    QCOMPARE(executions, 1);

    // The same key on another order: reuse for a different request.
    const auto other = m_h->roundTrip(test::Harness::post("/v1/orders/124/capture", "cap-1", "{}"), 201, &executions);
    QCOMPARE(other.status, 422);
    QCOMPARE(executions, 1);
    const auto problem = nlohmann::json::parse(other.body);
    QCOMPARE(problem.at("type").get<std::string>(), std::string("https://docs.test/idempotency#payload-mismatch"));
    QVERIFY2(problem.at("detail").get<std::string>().find("another path of the route POST /v1/orders/{id}/capture") !=
                 std::string::npos,
             other.body.c_str());

    // One key row, scoped by the template.
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'cap-1'"), 1LL);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'cap-1' AND endpoint = $1",
                   {std::string("POST /v1/orders/{id}/capture")}),
             1LL);

    // Another key on the other order is a new operation.
    const auto fresh = m_h->roundTrip(test::Harness::post("/v1/orders/124/capture", "cap-2", "{}"), 201, &executions);
    QCOMPARE(fresh.status, 201);
    QCOMPARE(executions, 2);
  }

  void exactRoutesKeepThePlainFingerprint() {
    const std::string body = R"({"amount": 5, "currency": "EUR"})";
    QCOMPARE(m_h->roundTrip(test::Harness::post("/v1/payments", "pay-1", body)).status, 201);
    const std::string expected = fp::toHex(fp::compute(m_h->policy.tiers[1].fingerprint, body, {}));
    auto c = m_db->connect();
    QCOMPARE(c.exec("SELECT encode(fingerprint, 'hex') AS f FROM idem.keys WHERE idem_key = 'pay-1'").str(0, "f"), expected);
  }
};

QTEST_GUILESS_MAIN(TestTemplateScope)
#include "tst_templatescope.moc"
