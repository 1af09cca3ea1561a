// A lost lease through the gate (docs/behaviour.md, "Outcome labels"; docs/design.md, "What the
// ticket's end says wins"), for both shapes of an execution: while a keyed request runs, its
// lease runs out (its renewals paused, as a stalled process's would be) and a retry takes the key
// over and runs. The original's answer then is not the key's: it is labelled `lease_lost`, it is
// passed on to its client (nothing of it was committed as the key's), the trace says
// lease_lost, and later retries replay what the taker stored.
#include <QtTest>
#include <future>

#include "tests/gate/gate_support.h"

using namespace idem;

class TstLeaseLost : public QObject {
  Q_OBJECT

  std::unique_ptr<test::GatePair> m_pair;

 private slots:
  void initTestCase() { m_pair = std::make_unique<test::GatePair>("gate_leaselost"); }
  void cleanupTestCase() { m_pair.reset(); }
  void initTestCase_data() { test::GatePair::addShapes(); }

  void aTakenOverKeyIsLabelledLeaseLost() {
    auto& s = m_pair->server();
    const std::string key = test::GatePair::key("lost");
    enforce::LeaseKeeper& leases = s.server->host().enforcer().leases();
    leases.setPaused(true);
    const auto resume = qScopeGuard([&] {
      leases.setPaused(false);
      s.execution->release();
    });
    http::Headers held = test::keyed(key);
    held.emplace_back("X-Hold", "1");
    auto original = std::async(std::launch::async, [&] { return s.post("/v1/charges", held); });
    QTRY_COMPARE(s.execution->held(), std::size_t(1));

    // The lease runs out (as a stalled process's does) and a retry takes the key over.
    auto c = m_pair->db.connect();
    c.exec("UPDATE idem.keys SET lease_until = now() - interval '1 second' WHERE idem_key = $1", {key});
    const auto taker = s.post("/v1/charges", test::keyed(key));
    QCOMPARE(taker.status, 201);
    QVERIFY(taker.header("Idempotent-Replayed").empty());
    QCOMPARE(s.requests("charges", "lease_takeover", 201), 1LL);

    leases.setPaused(false);
    s.execution->release();
    const auto lost = original.get();
    // Its own answer, passed on with the key's headers; not what the key stores.
    QCOMPARE(lost.status, 201);
    QCOMPARE(lost.header("Idempotency-Key"), "\"" + key + "\"");
    QCOMPARE(nlohmann::json::parse(lost.body)["request"].get<std::string>(), lost.header("Request-Id"));
    QCOMPARE(s.requests("charges", "lease_lost", 201), 1LL);
    QTRY_COMPARE(s.logLine(lost.header("Request-Id")).value("outcome", ""), std::string("lease_lost"));

    // The key is the taker's: a retry replays its answer, and nothing runs a third time.
    const auto replay = s.post("/v1/charges", test::keyed(key));
    QCOMPARE(replay.status, 201);
    QCOMPARE(replay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(replay.body, taker.body);
    QTRY_COMPARE(c.exec("SELECT count(*) AS n FROM idem.events WHERE idem_key = $1 AND outcome = 'lease_lost'", {key})
                     .integer(0, "n"),
                 1LL);
    QCOMPARE(c.exec("SELECT count(*) AS n FROM idem.events WHERE idem_key = $1 AND outcome = 'lease_takeover'", {key})
                 .integer(0, "n"),
             1LL);
  }
};

QTEST_GUILESS_MAIN(TstLeaseLost)
#include "tst_leaselost.moc"
