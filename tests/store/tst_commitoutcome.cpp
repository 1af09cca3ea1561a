// A completion whose COMMIT the server carried out but whose answer never came back (the
// connection died after the commit: PostgreSQL stopped or a backend terminated while the commit
// waited for a synchronous standby, a failover, a cut link). complete() retries it; the retry must
// recognise its own committed completion, not take it for a takeover. Found by the fault
// campaign (tests/faults, `pg_restart` with a synchronous standby): the endpoint answered 409
// "its result was not committed" for payments that were committed, and later retries replayed
// their 201. A client that stops retrying on that 409, or believes it and pays with a new key,
// is charged twice.
//
// Deterministic here: with synchronous_standby_names naming a standby that never comes, a
// commit is written locally and then waits; terminating that backend ends the wait with the
// transaction committed and the client told only that its connection is gone.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/store/migrations.h"
#include "tests/support/harness.h"
#include "tests/support/testdb.h"

using namespace idem;
using Kind = enforce::Decision::Kind;

class TestCommitOutcome : public QObject {
  Q_OBJECT

  // synchronous_standby_names is cluster-wide: a private cluster, not the suites' shared one.
  static void waitForStandby(pg::Connection& admin, bool on) {
    admin.exec(on ? "ALTER SYSTEM SET synchronous_standby_names = 'nobody'" : "ALTER SYSTEM RESET synchronous_standby_names");
    admin.exec("SELECT pg_reload_conf()");
    // The checkpointer applies the setting when it handles the reload signal, a moment later.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }

  /// The process id of a backend whose commit waits for the synchronous standby.
  static long long syncRepWaiter(pg::Connection& admin) {
    for (int i = 0; i < 200; ++i) {
      auto r = admin.exec("SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND (query ILIKE '%complete%' OR query = 'COMMIT')");
      if (r.rows() > 0) return r.integer(0, "pid");
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return 0;
  }

 private slots:
  void committedCompletionWhoseAnswerWasLost_data() {
    QTest::addColumn<bool>("sideStatement");
    QTest::newRow("ledger row") << true;  // a side statement in the completion's transaction
    QTest::newRow("alone") << false;
  }

  void committedCompletionWhoseAnswerWasLost() {
    QFETCH(bool, sideStatement);
    test::PrivateCluster pc;
    pg::Connection admin(pc.conninfo());
    store::migrate(admin);
    admin.exec("CREATE TABLE ledger (key text)");
    test::Harness h(pc.conninfo());
    auto d = h.enforcer.begin(test::Harness::post("/v1/payments", "k-commit-lost", R"({"a":1})"));
    QVERIFY(d.kind == Kind::Execute);

    waitForStandby(admin, true);
    enforce::CompleteOptions options;
    if (sideStatement) options.sameTransaction.push_back({"INSERT INTO ledger VALUES ($1)", {std::string("k-commit-lost")}});
    enforce::Response answer;
    std::thread completing([&] {
      answer = h.enforcer.complete(*d.ticket, enforce::Response{201, {{"Content-Type", "application/json"}}, R"({"id":"pay_1"})"},
                                   options);
    });
    const long long pid = syncRepWaiter(admin);
    // With a timeout, pg_terminate_backend waits until the backend has exited: until then its
    // commit, already written locally, is not visible to other sessions.
    if (pid != 0) admin.exec("SELECT pg_terminate_backend($1, 10000)", {std::to_string(pid)});
    waitForStandby(admin, false);
    completing.join();
    QVERIFY2(pid != 0, "the completion never waited for the standby");

    // The completion committed: the key is done with this response (and its ledger row is there).
    QCOMPARE(admin.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-commit-lost' AND state = 'done' "
                        "AND resp_status = 201").integer(0, "n"),
             1LL);
    if (sideStatement) QCOMPARE(admin.exec("SELECT count(*) AS n FROM ledger").integer(0, "n"), 1LL);
    // So the caller is told what happened — not 409 "its result was not committed" — and the
    // trace records no lost lease for it.
    // Found by the fault campaign: the retry took the refusal of its own committed completion
    // (IDL01 / no row) for a takeover. A done row now keeps its lease token (migration 0016).
    QCOMPARE(answer.status, 201);
    QCOMPARE(answer.body, std::string(R"({"id":"pay_1"})"));
    h.trace.flush();
    QCOMPARE(admin.exec("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'k-commit-lost' AND outcome = 'lease_lost'")
                 .integer(0, "n"),
             0LL);
    auto retry = h.enforcer.begin(test::Harness::post("/v1/payments", "k-commit-lost", R"({"a":1})"));
    QVERIFY(retry.kind == Kind::Respond);
    QCOMPARE(retry.response.status, 201);
  }

  // The completion with its side statements committed on the server, then the store went away
  // before any attempt got an answer: every retry fails. What happened is not known here, so
  // the 503 must not say "nothing was executed" — a retry with the same key gets the stored
  // 201. Found in the fault campaign's logs ("rolled back, nothing executed" for a payment
  // replayed as 201 seconds later).
  void completionWhoseEveryAttemptFailedSaysTheOutcomeIsUnknown() {
    test::PrivateCluster pc;
    pg::Connection admin(pc.conninfo());
    store::migrate(admin);
    admin.exec("CREATE TABLE ledger (key text)");
    test::Harness h(pc.conninfo());
    h.enforcer.setCompletionRetry({std::chrono::milliseconds(1500), std::chrono::milliseconds(25),
                                   std::chrono::milliseconds(200)});
    auto d = h.enforcer.begin(test::Harness::post("/v1/payments", "k-unknown", R"({"a":1})"));
    QVERIFY(d.kind == Kind::Execute);
    waitForStandby(admin, true);
    enforce::CompleteOptions options;
    options.sameTransaction.push_back({"INSERT INTO ledger VALUES ($1)", {std::string("k-unknown")}});
    enforce::Response answer;
    std::thread completing([&] {
      answer = h.enforcer.complete(*d.ticket, enforce::Response{201, {{"Content-Type", "application/json"}}, R"({"id":"pay_3"})"},
                                   options);
    });
    auto joinAll = qScopeGuard([&] {
      if (completing.joinable()) completing.join();
    });
    const long long pid = syncRepWaiter(admin);
    QVERIFY2(pid != 0, "the completion never waited for the standby");
    // A fast stop ends the backend waiting for the standby: committed locally, never answered.
    pc.cluster().stop();
    completing.join();
    QCOMPARE(answer.status, 503);
    QVERIFY2(answer.body.find("nothing was executed") == std::string::npos, answer.body.c_str());
    QVERIFY2(answer.body.find("not known") != std::string::npos, answer.body.c_str());
    pc.cluster().start();
    pg::Connection after(pc.conninfo());
    after.exec("ALTER SYSTEM RESET synchronous_standby_names");
    after.exec("SELECT pg_reload_conf()");
    // It had committed: the ledger row and the done key are there, and a retry replays the 201.
    QCOMPARE(after.exec("SELECT count(*) AS n FROM ledger").integer(0, "n"), 1LL);
    QCOMPARE(after.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-unknown' AND state = 'done'")
                 .integer(0, "n"),
             1LL);
  }

  // The same interrupted commit seen from a retry: the completion is on the primary only, its
  // synchronous standby never confirmed it (PostgreSQL never acknowledged the commit), yet a
  // replay acknowledges it. A failover before the standby catches up then loses a payment the
  // client was told succeeded. Found by the fault campaign with --replication sync
  // (lost_acknowledged 1 in `./run faults --seconds 120`: the primary stopped while completions
  // waited for the standby, a replay served one after the restart, a failover followed within
  // the standby's reconnect interval). Now the replay's own commit of a WAL record waits for the
  // standby first (kAwaitDurableSql), so the 201 comes only once the standby has the row.
  void replayWaitsForTheSynchronousStandby() {
    test::PrivateCluster pc;
    pg::Connection admin(pc.conninfo());
    store::migrate(admin);
    test::Harness h(pc.conninfo());
    auto d = h.enforcer.begin(test::Harness::post("/v1/payments", "k-not-durable", R"({"a":1})"));
    QVERIFY(d.kind == Kind::Execute);
    waitForStandby(admin, true);
    std::thread completing([&] {
      (void)h.enforcer.complete(*d.ticket, enforce::Response{201, {{"Content-Type", "application/json"}}, R"({"id":"pay_2"})"});
    });
    enforce::Decision retry;
    std::atomic<bool> answered{false};
    std::thread retrying;
    // A failed check returns early: let whatever waits for the standby go on, then join.
    auto joinAll = qScopeGuard([&] {
      waitForStandby(admin, false);
      if (retrying.joinable()) retrying.join();
      if (completing.joinable()) completing.join();
    });
    const long long pid = syncRepWaiter(admin);
    // With a timeout, pg_terminate_backend waits until the backend has exited: until then its
    // commit, already written locally, is not visible to other sessions.
    if (pid != 0) admin.exec("SELECT pg_terminate_backend($1, 10000)", {std::to_string(pid)});
    QVERIFY2(pid != 0, "the completion never waited for the standby");
    // Committed on the primary only; the standby is still away.
    QCOMPARE(admin.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-not-durable' AND state = 'done'")
                 .integer(0, "n"),
             1LL);
    retrying = std::thread([&] {
      retry = h.enforcer.begin(test::Harness::post("/v1/payments", "k-not-durable", R"({"a":1})"));
      answered = true;
    });
    std::this_thread::sleep_for(std::chrono::seconds(2));
    const bool answeredWhileAway = answered;
    waitForStandby(admin, false);  // the standby "comes back": whatever waited for it may go on
    retrying.join();
    completing.join();
    QVERIFY(retry.kind == Kind::Respond);
    // Acknowledged only once the standby has it: a 503, or an answer that waited for the
    // standby — not a 201 while it was away.
    QVERIFY2(!(answeredWhileAway && retry.response.status == 201),
             "a replay of a commit the standby never confirmed was answered 201 while the standby was away");
  }
};

QTEST_GUILESS_MAIN(TestCommitOutcome)
#include "tst_commitoutcome.moc"
