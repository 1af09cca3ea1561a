// The seed's incident end to end: a payment retried with backoff is replayed inside the key's
// window, and its last retry, after the key expired, is executed again — two ledger rows for one
// key, and `idemctl explain` says why. TTL 2s, the late retry at 3s.
#include <QtTest>

#include "tests/endpoint/endpoint_support.h"

using namespace idem;

namespace {
const char* const kShortTtlPolicy =
    R"({"docs_url":"https://d/i","tenant_header":"Account-Id","tiers":[)"
    R"({"name":"payments","routes":["POST /v1/payments"],"ttl":"2s","lease":"1s","on_expired":"execute",)"
    R"("fingerprint":{"mode":"json"}}]})";
}

class TestIncident : public QObject {
  Q_OBJECT

 private slots:
  void lateRetryAfterExpiryChargesTwice() {
    test::LiveServer s("ep_incident", kShortTtlPolicy);
    auto c = s.client();
    const auto h = test::jsonHeaders("order-4711-charge", "acct_acme");
    const auto t0 = std::chrono::steady_clock::now();
    auto original = c->post("/v1/payments", h, test::kPayment);
    QCOMPARE(original.status, 201);
    for (int backoffMs : {300, 600}) {  // the client's retries inside the window: replayed
      QThread::msleep(static_cast<unsigned long>(backoffMs));
      auto retry = c->post("/v1/payments", h, test::kPayment);
      QCOMPARE(retry.status, 201);
      QCOMPARE(retry.header("Idempotent-Replayed"), std::string("true"));
      QCOMPARE(retry.body, original.body);
    }
    std::this_thread::sleep_until(t0 + std::chrono::seconds(3));
    auto late = c->post("/v1/payments", h, test::kPayment);  // the key expired at 2s
    QCOMPARE(late.status, 201);
    QVERIFY(late.header("Idempotent-Replayed").empty());
    QVERIFY(test::parse(late)["id"] != test::parse(original)["id"]);

    // The channel's side: two charges for one key, generations 1 and 2.
    auto list = c->get("/v1/payments?idempotency_key=order-4711-charge", {{"Account-Id", "acct_acme"}});
    auto data = test::parse(list)["data"];
    QCOMPARE(data.size(), std::size_t(2));
    QCOMPARE(s.count("SELECT count(DISTINCT generation) AS n FROM idem_demo.ledger WHERE idem_key = "
                     "'order-4711-charge'"),
             2LL);
    QVERIFY(s.server->host().flushTrace());  // executions and replays reach the trace in batches
    QCOMPARE(s.count("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'order-4711-charge' AND outcome = "
                     "'executed_after_expiry'"),
             1LL);
    QCOMPARE(s.count("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'order-4711-charge' AND outcome = "
                     "'replayed'"),
             2LL);

    // idemctl explain tells support why.
    std::string out;
    const int rc = test::runIdemctl({"explain", "--db", s.db.conninfo(), "--key", "order-4711-charge", "--scope",
                                     "acct_acme POST /v1/payments", "--format", "json"},
                                    &out);
    QVERIFY2(rc == 0, out.c_str());
    auto x = nlohmann::json::parse(out, nullptr, false);
    QVERIFY2(x.is_object(), out.c_str());
    QCOMPARE(x["executions"].get<int>(), 2);
    QCOMPARE(x["generations"].size(), std::size_t(2));
    const std::string narrative = x["narrative"].get<std::string>();
    QVERIFY2(narrative.find("expir") != std::string::npos, narrative.c_str());
  }
};

QTEST_GUILESS_MAIN(TestIncident)
#include "tst_incident.moc"
