// Fault profiles (issue 20): with --allow-fault-injection, /faults/<profile>[/op-<id>]/... answers
// by the profile, executes nothing, and records every attempt (idem_demo.fault_attempts) for
// `idemctl measure`, which reads them back per client and fault and fits a policy.
#include <QtTest>

#include "core/faultrig/faultlog.h"
#include "tests/endpoint/endpoint_support.h"

using namespace idem;

namespace {

http::Headers headersFor(const std::string& key, const std::string& agent) {
  auto h = test::jsonHeaders(key);
  h.emplace_back("User-Agent", agent);
  return h;
}

long long attempts(const test::LiveServer& s, const std::string& where, const std::vector<pg::Param>& params = {}) {
  return s.count("SELECT count(*) AS n FROM idem_demo.fault_attempts WHERE " + where, params);
}

// One client's schedule written as the endpoint would: op i's attempts at the given offsets
// (seconds) from base, each answered at once.
void record(pg::Connection& conn, const std::string& agent, const std::string& profile, int ops,
            const std::vector<double>& offsets, bool changeKey = false) {
  const long long base = 1'700'000'000'000'000LL;
  for (int i = 0; i < ops; ++i) {
    for (std::size_t n = 0; n < offsets.size(); ++n) {
      faultrig::FaultAttempt a;
      a.arrivedUs = base + i * 100'000'000LL + static_cast<long long>(offsets[n] * 1e6);
      a.endedUs = a.arrivedUs + 1000;
      a.profile = profile;
      a.operation = profile + "-" + std::to_string(i);
      a.key = "k" + std::to_string(i) + (changeKey ? "-" + std::to_string(n) : "");
      a.userAgent = agent;
      a.method = "POST";
      a.path = "/v1/payments";
      a.outcome = profile.substr(0, 3);
      faultrig::insertFaultAttempt(conn, a);
    }
  }
}

}  // namespace

class TestFaultProfiles : public QObject {
  Q_OBJECT

 private slots:
  void statusProfilesAnswerAndRecordEveryAttempt() {
    test::LiveServer s("ep_faultprof_status");
    auto c = s.client();
    const auto r503 =
        c->post("/faults/503-retry-after-2/op-a/v1/payments", headersFor("fk-1", "tst/1"), test::kPayment);
    QCOMPARE(r503.status, 503);
    QCOMPARE(r503.header("Retry-After"), std::string("2"));
    const auto r409 = c->post("/faults/409/op-a/v1/payments", headersFor("fk-1", "tst/1"), test::kPayment);
    QCOMPARE(r409.status, 409);
    QCOMPARE(r409.header("Retry-After"), std::string());
    const auto r500 = c->post("/faults/500/v1/payments", headersFor("fk-2", "tst/1"), test::kPayment);
    QCOMPARE(r500.status, 500);
    // Nothing was enforced or executed: no key, no ledger row.
    QCOMPARE(s.keyRows("fk-1"), 0LL);
    QCOMPARE(s.ledgerRows("fk-1"), 0LL);
    // Written off the event loop: wait for the three rows.
    QTRY_COMPARE_WITH_TIMEOUT(attempts(s, "user_agent = 'tst/1'"), 3LL, 10000);
    QCOMPARE(attempts(s,
                      "profile = '503-retry-after-2' AND operation = 'a' AND idem_key = 'fk-1' AND "
                      "outcome = '503' AND retry_after = '2' AND path = '/v1/payments' AND ended_at >= arrived_at"),
             1LL);
    QCOMPARE(attempts(s, "profile = '409' AND operation = 'a' AND outcome = '409' AND retry_after IS NULL"), 1LL);
    QCOMPARE(attempts(s, "profile = '500' AND operation IS NULL AND idem_key = 'fk-2'"), 1LL);
  }

  void unknownProfileIsRefusedWithTheSyntax() {
    test::LiveServer s("ep_faultprof_bad");
    auto c = s.client();
    for (const char* path :
         {"/faults/418/v1/payments", "/faults/503-retry-after-x/v1/payments",
          "/faults/503-retry-after-999999/v1/payments", "/faults/op-/v1/payments", "/faults/500/op-/v1/payments"}) {
      const auto r = c->post(path, headersFor("fk-bad", "tst/bad"), test::kPayment);
      QCOMPARE(r.status, 400);
      QVERIFY2(r.body.find("reset, hang") != std::string::npos || r.body.find("op-") != std::string::npos,
               r.body.c_str());
    }
    QCOMPARE(s.keyRows("fk-bad"), 0LL);
  }

  void resetProfileResetsTheConnection() {
    test::LiveServer s("ep_faultprof_reset");
    const auto r = s.client()->post("/faults/reset/op-r/v1/payments", headersFor("fk-r", "tst/reset"), test::kPayment);
    QCOMPARE(r.status, 0);  // no HTTP answer at all
    QVERIFY(!r.error.empty());
    QTRY_COMPARE_WITH_TIMEOUT(attempts(s, "user_agent = 'tst/reset' AND outcome = 'reset'"), 1LL, 10000);
  }

  // No answer until the client gives up; when it does is recorded as the attempt's end.
  void hangHoldsUntilTheClientGivesUp() {
    test::LiveServer s("ep_faultprof_hang");
    client::Client c("127.0.0.1", s.server->port(), std::chrono::milliseconds(300));
    const auto r = c.post("/faults/hang/op-h/v1/payments", headersFor("fk-h", "tst/hang"), test::kPayment);
    QCOMPARE(r.status, 0);
    QTRY_COMPARE_WITH_TIMEOUT(attempts(s, "user_agent = 'tst/hang' AND outcome = 'hang'"), 1LL, 10000);
    // The client waited 300 ms before it closed, so the server cannot have seen it leave sooner.
    QCOMPARE(attempts(s, "user_agent = 'tst/hang' AND ended_at - arrived_at >= interval '250 milliseconds'"), 1LL);
  }

  void withoutTheFlagThereAreNoFaultRoutes() {
    test::LiveServer s("ep_faultprof_off", test::kEndpointPolicy, /*allowFaults=*/false);
    const auto r = s.client()->post("/faults/500/v1/payments", headersFor("fk-off", "tst/off"), test::kPayment);
    QCOMPARE(r.status, 404);
    QCOMPARE(attempts(s, "true"), 0LL);
  }

  // idemctl measure over a known schedule: 0.5 s then 1 s sleeps on 500, Retry-After 2 s
  // obeyed on 503: exponential 0.5 s x2, 3 attempts, Retry-After as a floor.
  void measureReadsAndFitsTheSchedule() {
    test::TestDatabase db("ep_faultprof_measure");
    {
      auto conn = db.connect();
      record(conn, "synthetic/1", "500", 8, {0, 0.5, 1.5});
      record(conn, "synthetic/1", "503-retry-after-2", 8, {0, 2.0, 4.0});
      record(conn, "rotating/1", "500", 4, {0, 1.0}, /*changeKey=*/true);
    }
    std::string out;
    QCOMPARE(test::runIdemctl({"measure", "--db", db.conninfo(), "--format", "json"}, &out), 0);
    const auto doc = nlohmann::json::parse(out);
    const auto& clients = doc.at("clients");
    QCOMPARE(clients.size(), std::size_t{2});
    const auto& rotating = clients[0];
    QCOMPARE(rotating["user_agent"].get<std::string>(), std::string("rotating/1"));
    QCOMPARE(rotating["faults"][0]["same_key"].get<bool>(), false);
    const auto& c = clients[1];
    QCOMPARE(c["user_agent"].get<std::string>(), std::string("synthetic/1"));
    const auto& f500 = c["faults"][0];
    QCOMPARE(f500["profile"].get<std::string>(), std::string("500"));
    QCOMPARE(f500["operations"].get<int>(), 8);
    QCOMPARE(f500["attempts"]["p50"].get<double>(), 3.0);
    QCOMPARE(f500["same_key"].get<bool>(), true);
    QCOMPARE(f500["retries"][1]["gap_s"]["p50"].get<double>(), 1.0);
    QCOMPARE(f500["retries"][1]["offset_s"]["max"].get<double>(), 1.5);
    QCOMPARE(c["faults"][1]["retry_after_honoured"].get<bool>(), true);
    const auto& fit = c["fitted_policy"];
    QCOMPARE(fit["max_attempts"].get<int>(), 3);
    QCOMPARE(fit["backoff"].get<std::string>(), std::string("exponential"));
    QCOMPARE(fit["jitter"].get<std::string>(), std::string("none"));
    QCOMPARE(fit["multiplier"].get<double>(), 2.0);
    QCOMPARE(fit["retry_after"].get<std::string>(), std::string("max"));
    QCOMPARE(fit["retry_on"], nlohmann::json::array({"5xx"}));  // 500 and 503 both retried
    // The fitted policy loads as a simulator policy ("policy A or B").
    std::string simOut;
    const std::string config = nlohmann::json{{"clients", {{"operations", 100}}}, {"policy", fit}}.dump();
    const std::string path = QDir::temp().filePath("measure-fit.json").toStdString();
    QFile file(QString::fromStdString(path));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(config.c_str());
    file.close();
    QCOMPARE(test::runIdemctl({"simulate", "--config", path, "--format", "json"}, &simOut), 0);

    // --since: a window that excludes the 2023 rows, and a malformed value.
    QCOMPARE(test::runIdemctl({"measure", "--db", db.conninfo(), "--since", "1h"}, &out), 0);
    QVERIFY2(out.find("no attempts recorded") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"measure", "--db", db.conninfo(), "--since", "yesterday-ish"}, &out), 2);
  }
};

QTEST_GUILESS_MAIN(TestFaultProfiles)
#include "tst_faultprofiles.moc"
