// A retry storm against the endpoint: every replay is counted in the trace, but identical
// replays within one trace batch fold into one row; with folding off (serve --trace-fold 0)
// every decision is a row of its own.
#include <QtTest>

#include "tests/endpoint/endpoint_support.h"

using namespace idem;

namespace {

constexpr int kReplays = 200;

struct Counts {
  long long rows = 0, decisions = 0, folded = 0;
};

/// Executes one payment, replays it kReplays times, and waits until the trace holds every replay.
Counts storm(std::size_t foldAfter) {
  test::TestDatabase db("trace_fold_endpoint");
  endpoint::ServerOptions o;
  o.conninfo = db.conninfo();
  o.policy = policy::parsePolicy(test::kEndpointPolicy, "endpoint-test-policy.json");
  o.threads = 8;
  o.traceFlushInterval = std::chrono::milliseconds(200);  // one window holds many replays, even on a busy CI machine
  o.traceFoldAfter = foldAfter;
  endpoint::Server server(std::move(o));
  server.start();
  client::Client client("127.0.0.1", server.port());
  const auto first = client.post("/v1/payments", test::jsonHeaders("k-storm"), test::kPayment);
  if (first.status != 201) return {};
  for (int i = 0; i < kReplays; ++i) {
    const auto r = client.post("/v1/payments", test::jsonHeaders("k-storm"), test::kPayment);
    if (r.status != 201 || r.header("Idempotent-Replayed") != "true") return {};
  }
  auto c = db.connect();
  Counts counts;
  for (int attempt = 0; attempt < 100 && counts.decisions < kReplays; ++attempt) {
    QTest::qWait(50);
    auto r = c.exec("SELECT count(*) AS rows, coalesce(sum(repeats), 0) AS decisions,"
                    " count(*) FILTER (WHERE repeats > 1) AS folded"
                    " FROM idem.events WHERE idem_key = 'k-storm' AND outcome = 'replayed'");
    counts = {r.integer(0, "rows"), r.integer(0, "decisions"), r.integer(0, "folded")};
  }
  return counts;
}

}  // namespace

class TestTraceFold : public QObject {
  Q_OBJECT

 private slots:
  void aStormFoldsButEveryReplayIsCounted() {
    const Counts c = storm(3);
    QCOMPARE(c.decisions, static_cast<long long>(kReplays));
    QVERIFY2(c.folded >= 1, std::to_string(c.rows).c_str());
    QVERIFY2(c.rows < kReplays / 2, std::to_string(c.rows).c_str());
  }

  void withFoldingOffEveryDecisionIsARow() {
    const Counts c = storm(0);
    QCOMPARE(c.decisions, static_cast<long long>(kReplays));
    QCOMPARE(c.rows, static_cast<long long>(kReplays));
    QCOMPARE(c.folded, 0LL);
  }

  void serveRejectsABadFoldCount() {
    for (const char* bad : {"-1", "many", ""}) {
      std::string out;
      QCOMPARE(test::runIdemctl({"serve", "--trace-fold", bad}, &out), 2);
      QVERIFY2(out.find("--trace-fold") != std::string::npos, out.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestTraceFold)
#include "tst_tracefold.moc"
