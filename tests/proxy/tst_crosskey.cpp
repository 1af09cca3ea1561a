// Duplicates across keys through a real `idemctl proxy` before the sample service, whose ledger
// counts its own executions (issue 32; docs/policy.md, "Duplicates across keys"): the same body
// under a second key is executed and flagged (observe), held until confirmed (hold), refused
// (reject); and eight hedged copies sent at once under eight keys execute once. (The conformance
// kit against the same proxy: conform_tst_againstidem.)
#include <QtTest>
#include <future>
#include <nlohmann/json.hpp>

#include "tests/proxy/proxy_support.h"

using namespace idem;
using test::charge;

namespace {
long long suspected(const std::string& metrics, const std::string& route, const std::string& mode) {
  const std::string series = "idem_suspected_duplicates_total{route=\"" + route + "\",mode=\"" + mode + "\"} ";
  const auto at = metrics.find(series);
  return at == std::string::npos ? 0 : std::stoll(metrics.substr(at + series.size()));
}
const http::Headers kConfirm{{"Idempotency-Duplicate-Confirmed", "?1"}};
}  // namespace

class TestCrossKey : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ProxyRig> m_rig;

  std::string metrics() const {
    return client::Client("127.0.0.1", m_rig->adminPort()).get("/metrics").body;
  }
  long long eventsSoon(const std::string& key, const std::string& outcome, long long want) const {
    long long n = 0;
    for (int i = 0; i < 100 && (n = m_rig->events(key, outcome)) < want; ++i) QTest::qWait(50);
    return n;
  }

 private slots:
  void initTestCase() { m_rig = std::make_unique<test::ProxyRig>("px_crosskey"); }
  void cleanupTestCase() { m_rig.reset(); }

  void observeExecutesBothAndFlagsTheSecond() {
    auto c = m_rig->client();
    const std::string body = R"({"amount":5000,"currency":"eur","to":"acct_9"})";
    QCOMPARE(c->post("/v1/transfers", charge("tr-1"), body).status, 201);
    QCOMPARE(c->post("/v1/transfers", charge("tr-2"), body).status, 201);
    QCOMPARE(m_rig->upstream.executions("tr-1"), 1);
    QCOMPARE(m_rig->upstream.executions("tr-2"), 1);
    QCOMPARE(eventsSoon("tr-2", "duplicate_observed", 1), 1LL);
    QCOMPARE(suspected(metrics(), "POST /v1/transfers", "observe"), 1LL);
  }

  void holdRunsNothingUntilTheClientConfirms() {
    auto c = m_rig->client();
    const std::string body = R"({"amount":7000,"currency":"eur","to":"acct_7"})";
    QCOMPARE(c->post("/v1/payouts", charge("po-1"), body).status, 201);
    const auto held = c->post("/v1/payouts", charge("po-2"), body);
    QCOMPARE(held.status, 409);
    const auto problem = nlohmann::json::parse(held.body);
    QCOMPARE(problem.value("type", ""), std::string("https://docs.test/idempotency#suspected-duplicate"));
    QVERIFY2(problem.value("detail", "").find("po-1") != std::string::npos, held.body.c_str());
    QCOMPARE(m_rig->upstream.executions("po-2"), 0);
    const auto confirmed = c->post("/v1/payouts", charge("po-2", kConfirm), body);
    QCOMPARE(confirmed.status, 201);
    QCOMPARE(m_rig->upstream.executions("po-2"), 1);
    QCOMPARE(m_rig->upstream.executions("po-1"), 1);
    QCOMPARE(eventsSoon("po-2", "duplicate_confirmed", 1), 1LL);
    QCOMPARE(m_rig->events("po-2", "duplicate_held"), 1LL);
  }

  void rejectRefusesEvenAConfirmedCopy() {
    auto c = m_rig->client();
    const std::string body = R"({"amount":120,"currency":"eur","charge":"ch_1"})";
    QCOMPARE(c->post("/v1/refunds", charge("rf-1"), body).status, 201);
    QCOMPARE(c->post("/v1/refunds", charge("rf-2"), body).status, 409);
    QCOMPARE(c->post("/v1/refunds", charge("rf-2", kConfirm), body).status, 409);
    QCOMPARE(m_rig->upstream.executions("rf-2"), 0);
    QCOMPARE(suspected(metrics(), "POST /v1/refunds", "reject"), 2LL);
  }

  // Hedged requests: eight copies under eight keys, at once, to a service that takes 300 ms.
  void hedgedCopiesExecuteOnce() {
    const std::string body = R"({"amount":4200,"currency":"eur","to":"acct_hedge"})";
    std::vector<std::future<client::ClientResponse>> copies;
    for (int i = 0; i < 8; ++i)
      copies.push_back(std::async(std::launch::async, [&, i] {
        return client::Client("127.0.0.1", m_rig->proxy->port())
            .post("/v1/payouts", charge("hedge-" + std::to_string(i), {{"X-Test-Sleep-Ms", "300"}}), body);
      }));
    int ran = 0, held = 0, executions = 0;
    for (int i = 0; i < 8; ++i) {
      const auto r = copies[static_cast<std::size_t>(i)].get();
      ran += r.status == 201 ? 1 : 0;
      held += r.status == 409 ? 1 : 0;
      executions += m_rig->upstream.executions("hedge-" + std::to_string(i));
    }
    QCOMPARE(ran, 1);
    QCOMPARE(held, 7);
    QCOMPARE(executions, 1);
  }
};

QTEST_GUILESS_MAIN(TestCrossKey)
#include "tst_crosskey.moc"
