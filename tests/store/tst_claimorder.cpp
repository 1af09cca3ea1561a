// The claim's two orders against a real server: a key this process decided recently is read
// first (a replay in one statement), any other key is claimed first (a new key in one
// statement), unless most keys new to the process lately were retries. Two key stores with
// tables of their own stand for two processes: whichever guesses, every decision is the one the
// other order reaches.
#include <QtTest>
#include <thread>

#include "core/store/keystore.h"
#include "tests/support/testdb.h"

using namespace idem;
using namespace std::chrono_literals;
using store::Decision;

namespace {

store::ClaimRequest request(const std::string& key, const std::string& fingerprint = "fp-1",
                            store::Millis ttl = 24h) {
  store::ClaimRequest q;
  q.scope = {"acct_1", "POST /v1/payments", key};
  q.fingerprint = fingerprint;
  q.tier = "payments";
  q.ttl = ttl;
  q.lease = std::min<store::Millis>(30s, ttl / 5);  // a lease ends well inside the key's life, as policies require
  q.archiveRetention = 24h * 400;
  q.requestId = "req_" + key;
  return q;
}

void complete(store::KeyStore& s, const store::ClaimResult& claimed, const std::string& key) {
  store::CompleteRequest c;
  c.scope = {"acct_1", "POST /v1/payments", key};
  c.leaseToken = claimed.leaseToken;
  c.response.status = 201;
  c.response.body = R"({"id":"pay_)" + key + R"("})";
  QVERIFY(s.complete(c).stored);
}

}  // namespace

class TestClaimOrder : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<store::Pool> m_pool;
  std::unique_ptr<store::RecentKeys> m_recentA, m_recentB;
  std::unique_ptr<store::KeyStore> m_a, m_b;  // two processes on one store

  /// Claims through `s` and says how many statements it took.
  static std::pair<store::ClaimResult, long long> claim(store::KeyStore& s, const store::ClaimRequest& q) {
    const long long before = s.claimRoundTrips();
    auto r = s.claim(q);
    return {r, s.claimRoundTrips() - before};
  }

 private slots:
  void init() {
    m_db = std::make_unique<test::TestDatabase>("claim_order");
    m_pool = std::make_unique<store::Pool>(m_db->conninfo(), 4);
    m_recentA = std::make_unique<store::RecentKeys>(1024);
    m_recentB = std::make_unique<store::RecentKeys>(1024);
    m_a = std::make_unique<store::KeyStore>(*m_pool, *m_recentA);
    m_b = std::make_unique<store::KeyStore>(*m_pool, *m_recentB);
  }
  void cleanup() {
    m_a.reset();
    m_b.reset();
    m_pool.reset();
    m_db.reset();
  }

  void aNewKeyIsOneStatementAndItsRetryHereAnother() {
    auto [first, n1] = claim(*m_a, request("k-1"));
    QVERIFY(first.decision == Decision::Execute);
    QCOMPARE(n1, 1LL);
    complete(*m_a, first, "k-1");
    auto [again, n2] = claim(*m_a, request("k-1"));
    QVERIFY(again.decision == Decision::Replay);
    QCOMPARE(again.stored->body, std::string(R"({"id":"pay_k-1"})"));
    QCOMPARE(n2, 1LL);
    QCOMPARE(m_a->claims(), 2LL);
  }

  void aRetryReachingAnotherProcessCostsOneStatementMoreOnce() {
    auto [first, n1] = claim(*m_a, request("k-2"));
    complete(*m_a, first, "k-2");
    auto [elsewhere, n2] = claim(*m_b, request("k-2"));  // B never saw k-2: claim tried, then read
    QVERIFY(elsewhere.decision == Decision::Replay);
    QCOMPARE(elsewhere.stored->body, std::string(R"({"id":"pay_k-2"})"));
    QCOMPARE(n2, 2LL);
    auto [again, n3] = claim(*m_b, request("k-2"));  // now it has
    QVERIFY(again.decision == Decision::Replay);
    QCOMPARE(n3, 1LL);
    auto c = m_db->connect();
    QCOMPARE(c.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-2'").integer(0, "n"), 1LL);
  }

  void theRareCasesDecideAlikeFromEitherOrder() {
    // In progress elsewhere: 409, payload mismatch: 422, from a process that never saw the key.
    auto [owner, n1] = claim(*m_a, request("k-3"));
    QVERIFY(owner.decision == Decision::Execute);
    auto [busy, n2] = claim(*m_b, request("k-3"));
    QVERIFY(busy.decision == Decision::Conflict);
    QCOMPARE(n2, 3LL);  // claim, read (not replayable), the full decision
    auto [other, n3] = claim(*m_b, request("k-3", "fp-other"));
    QVERIFY(other.decision == Decision::Mismatch);
    QCOMPARE(n3, 2LL);  // B has seen k-3 now: the read first, then the full decision
    complete(*m_a, owner, "k-3");

    // Expired: executed again as generation 2, whichever process sees the retry.
    auto [shortLived, n4] = claim(*m_a, request("k-4", "fp-1", 1s));
    complete(*m_a, shortLived, "k-4");
    std::this_thread::sleep_for(1200ms);
    auto [late, n5] = claim(*m_b, request("k-4", "fp-1", 1s));
    QVERIFY(late.decision == Decision::ExecuteAfterExpiry);
    QCOMPARE(late.generation, 2);
  }

  void aRememberedKeyThatIsGoneIsClaimedAfterTheRead() {
    auto [first, n1] = claim(*m_a, request("k-5"));
    QVERIFY(first.decision == Decision::Execute);
    QVERIFY(m_a->release({"acct_1", "POST /v1/payments", "k-5"}, first.leaseToken, 400, "req_k-5", "bad input"));
    auto [retry, n2] = claim(*m_a, request("k-5"));  // A remembers k-5: reads (no row), then claims
    QVERIFY(retry.decision == Decision::Execute);
    QCOMPARE(retry.generation, 1);
    QCOMPARE(n2, 2LL);
  }

  void aRetryStormReachingAnotherProcessTeachesItToReadFirst() {
    constexpr long long window = store::RecentKeys::kUnseenWindow;
    auto key = [](long long i) { return "storm-" + std::to_string(i); };
    for (long long i = 0; i < 2 * window; ++i) {
      auto [first, n] = claim(*m_a, request(key(i)));
      QCOMPARE(n, 1LL);  // A's own new keys keep it claiming first
      complete(*m_a, first, key(i));
    }
    QVERIFY(!m_recentA->readUnseenFirst());
    // B never saw them (a restarted process, another instance): the first window pays the
    // failed INSERT, then B reads first and a replay is one statement again.
    auto replayAll = [&](long long from, long long to) {
      long long statements = 0;
      for (long long i = from; i < to; ++i) {
        auto [r, n] = claim(*m_b, request(key(i)));
        if (r.decision != Decision::Replay) return -1LL;
        if (r.stored->body != R"({"id":"pay_)" + key(i) + R"("})") return -1LL;
        statements += n;
      }
      return statements;
    };
    QCOMPARE(replayAll(0, window), 2 * window);
    QVERIFY(m_recentB->readUnseenFirst());
    QCOMPARE(replayAll(window, 2 * window), window);
    // The storm is over and new keys come: read first costs them a miss for one window, and B
    // claims first again. Each is still executed once.
    long long statements = 0;
    for (long long i = 2 * window; i < 3 * window; ++i) {
      auto [r, n] = claim(*m_b, request(key(i)));
      QVERIFY(r.decision == Decision::Execute);
      QCOMPARE(r.generation, 1);
      statements += n;
    }
    QCOMPARE(statements, 2 * window);
    QVERIFY(!m_recentB->readUnseenFirst());
    auto [fresh, n] = claim(*m_b, request(key(3 * window)));
    QVERIFY(fresh.decision == Decision::Execute);
    QCOMPARE(n, 1LL);
    auto c = m_db->connect();
    QCOMPARE(c.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key LIKE 'storm-%'").integer(0, "n"),
             3 * window + 1);
  }

  void theLessonNeedsMoreThanHalfOfAWindow() {
    store::RecentKeys recent(0);  // learning does not depend on the table
    constexpr long long window = store::RecentKeys::kUnseenWindow;
    for (long long i = 0; i < window; ++i) recent.learnUnseen(i % 2 == 0);  // exactly half
    QVERIFY(!recent.readUnseenFirst());
    for (long long i = 0; i < window - 1; ++i) recent.learnUnseen(true);
    QVERIFY(!recent.readUnseenFirst());  // the window is not over yet
    recent.learnUnseen(false);
    QVERIFY(recent.readUnseenFirst());  // 127 of 128
    for (long long i = 0; i < window; ++i) recent.learnUnseen(i < window / 2 + 1);
    QVERIFY(recent.readUnseenFirst());  // 65 of 128
    for (long long i = 0; i < window; ++i) recent.learnUnseen(i < window / 2);
    QVERIFY(!recent.readUnseenFirst());
  }

  void recentKeysKeepsScopesApart() {
    store::RecentKeys recent(64);
    recent.remember("acct_1", "POST /v1/payments", "k");
    QVERIFY(recent.contains("acct_1", "POST /v1/payments", "k"));
    QVERIFY(!recent.contains("acct_2", "POST /v1/payments", "k"));
    QVERIFY(!recent.contains("acct_1", "POST /v1/refunds", "k"));
    QVERIFY(!recent.contains("acct_1POST /v1/payments", "", "k"));  // parts are not concatenated
    store::RecentKeys none(0);
    none.remember("acct_1", "POST /v1/payments", "k");
    QVERIFY(!none.contains("acct_1", "POST /v1/payments", "k"));
  }
};

QTEST_GUILESS_MAIN(TestClaimOrder)
#include "tst_claimorder.moc"
