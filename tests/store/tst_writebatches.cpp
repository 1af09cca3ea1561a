// The batched write path against a real server (core/store/keybatches.h): claims and
// completions that queue while a statement is in flight go to the store together, and every key
// still gets its own answer — its claim, conflict or mismatch, its own lease and response — and
// a key that makes the statement fail fails alone. A batch is made deterministic by holding the
// statement in flight on a row lock until the others have queued behind it.
#include <QtTest>
#include <functional>
#include <set>
#include <thread>

#include "core/store/keystore.h"
#include "tests/store/keyrequests.h"
#include "tests/support/testdb.h"

using namespace idem;
using namespace std::chrono_literals;
using store::Decision;

namespace {

const std::string& kEndpoint = test::kPaymentsEndpoint;

store::ClaimRequest request(const std::string& key, const std::string& fingerprint = "fp-1") {
  return test::paymentClaim(key, fingerprint);
}

store::CompleteRequest completion(const std::string& key, const std::string& token) {
  return test::paymentCompletion(key, token);
}

/// Waits (up to 10 s) until `done` holds; false if it never did.
bool waitFor(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

/// What one thread got: a result or the error's SQLSTATE.
template <typename Result>
struct Outcome {
  std::optional<Result> result;
  std::string sqlstate;
  bool failed = false;
};

}  // namespace

class TestWriteBatches : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<store::Pool> m_pool;
  std::unique_ptr<store::RecentKeys> m_recent;
  std::unique_ptr<store::KeyStore> m_store;

  /// How many statements of this database wait on a lock: batches held in flight.
  long long statementsWaitingOnLocks() {
    auto c = m_db->connect();
    auto r = c.exec("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'");
    return r.integer(0, "n");
  }

  static constexpr int kHeld = static_cast<int>(store::kWriteBatchesInFlight);

  /// The blocker's open transaction holds a row for each of the keys held-0 … held-N: a claim
  /// of one waits until it ends.
  void holdFreshKeys(pg::Connection& blocker) {
    blocker.exec("BEGIN");
    blocker.exec("INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, "
                 "lease_token, lease_until, request_id, expires_at) SELECT 'acct_1', $1, 'held-' || g, 1, "
                 "'payments', '\\x00', 'processing', gen_random_uuid(), now() + interval '30 seconds', "
                 "'req_blocker', now() + interval '1 day' FROM generate_series(1, $2) g",
                 {kEndpoint, kHeld});
  }

  /// Claims of the held keys, one thread each: every batch slot in flight, held.
  std::vector<std::function<void()>> heldClaims() {
    std::vector<std::function<void()>> out;
    for (int i = 1; i <= kHeld; ++i)
      out.emplace_back([this, i] { (void)m_store->claim(request("held-" + std::to_string(i))); });
    return out;
  }

  /// Runs `first` (one job per batch slot, each held by `blocker` on a lock), then `rest` on
  /// threads of their own once every slot is held; releases the locks when all of them queued
  /// behind. Returns once every thread is done.
  void heldBatch(pg::Connection& blocker, const std::vector<std::function<void()>>& first,
                 const std::vector<std::function<void()>>& rest, const std::function<long long()>& queued) {
    std::vector<std::thread> threads;
    for (const auto& f : first) threads.emplace_back(f);
    const bool held = waitFor([&] { return statementsWaitingOnLocks() == static_cast<long long>(first.size()); });
    for (const auto& r : rest) threads.emplace_back(r);
    const bool allQueued = held && waitFor([&] { return queued() == static_cast<long long>(rest.size()); });
    blocker.exec("ROLLBACK");  // every thread can finish now; they are joined before any verdict
    for (auto& t : threads) t.join();
    QVERIFY2(held, "the first statements never waited on the locks");
    QVERIFY2(allQueued, "the other requests never queued behind the statement in flight");
  }

  /// Claims every request on a thread of its own, all queued behind the held batch slots so that
  /// they go to the store in one statement; each request's result, in order.
  std::vector<Outcome<store::ClaimResult>> claimInOneBatch(pg::Connection& blocker,
                                                           const std::vector<store::ClaimRequest>& requests) {
    std::vector<Outcome<store::ClaimResult>> outcomes(requests.size());
    std::vector<std::function<void()>> rest;
    for (std::size_t i = 0; i < requests.size(); ++i)
      rest.emplace_back([&, i] { outcomes[i].result = m_store->claim(requests[i]); });
    heldBatch(blocker, heldClaims(), rest, [&] { return m_store->writeBatches().claimsWaiting; });
    return outcomes;
  }

 private slots:
  void init() {
    m_db = std::make_unique<test::TestDatabase>("write_batches");
    m_pool = std::make_unique<store::Pool>(m_db->conninfo(), 24);
    m_recent = std::make_unique<store::RecentKeys>(1024);
    m_store = std::make_unique<store::KeyStore>(*m_pool, *m_recent);
    // A fresh store starts with every slot (its lanes adapt only under sustained load): the held
    // cases below hold them all.
    QCOMPARE(m_store->writeBatches().claimSlots, static_cast<long long>(kHeld));
    QCOMPARE(m_store->writeBatches().completionSlots, static_cast<long long>(kHeld));
  }
  void cleanup() {
    m_store.reset();
    m_pool.reset();
    m_db.reset();
  }

  // Sixteen requests queue behind one claim: distinct keys, one key asked three times with the
  // same payload and once with another. One statement carries them all; each gets its own answer.
  void concurrentClaimsGoInOneStatementAndEachGetsItsOwnAnswer() {
    auto blocker = m_db->connect();
    holdFreshKeys(blocker);

    std::vector<store::ClaimRequest> requests;
    for (int i = 0; i < 12; ++i) requests.push_back(request("distinct-" + std::to_string(i)));
    for (int i = 0; i < 3; ++i) requests.push_back(request("shared"));
    requests.push_back(request("shared", "fp-other"));
    const auto outcomes = claimInOneBatch(blocker, requests);
    if (QTest::currentTestFailed()) return;

    // The held keys were freed by the rollback, each claimed by its own statement; the sixteen
    // others went in one statement.
    auto c = m_db->connect();
    QCOMPARE(c.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key LIKE 'held-%'").integer(0, "n"),
             static_cast<long long>(kHeld));
    const auto stats = m_store->writeBatches();
    QCOMPARE(stats.claimBatches, kHeld + 1LL);
    QCOMPARE(stats.claimedKeys, kHeld + 16LL);

    std::set<std::string> tokens;
    for (int i = 0; i < 12; ++i) {
      QVERIFY(outcomes[i].result.has_value());
      const auto& r = *outcomes[i].result;
      QVERIFY2(r.decision == Decision::Execute, store::decisionName(r.decision));
      QCOMPARE(r.generation, 1);
      QVERIFY(!r.leaseToken.empty());
      tokens.insert(r.leaseToken);
    }
    QCOMPARE(tokens.size(), std::size_t{12});  // a lease of its own each
    int executed = 0, conflicts = 0, mismatches = 0;
    for (std::size_t i = 12; i < requests.size(); ++i) {
      const auto d = outcomes[i].result->decision;
      executed += d == Decision::Execute;
      conflicts += d == Decision::Conflict;
      mismatches += d == Decision::Mismatch;
    }
    // Never two executions of one key. The other payload is a mismatch unless it was the one
    // that claimed the key; then the three same-payload requests are.
    QCOMPARE(executed, 1);
    const bool otherClaimed = outcomes.back().result->decision == Decision::Execute;
    QCOMPARE(mismatches, otherClaimed ? 3 : 1);
    QCOMPARE(conflicts, otherClaimed ? 0 : 2);

    // Each row holds its own request's lease and request id: no answer went to another key.
    for (int i = 0; i < 12; ++i) {
      auto row = c.exec("SELECT lease_token::text AS token, request_id FROM idem.keys WHERE idem_key = $1",
                        {requests[i].scope.key});
      QCOMPARE(row.rows(), 1);
      QCOMPARE(row.str(0, "token"), outcomes[i].result->leaseToken);
      QCOMPARE(row.str(0, "request_id"), requests[i].requestId);
    }
  }

  // Eight hedged copies of one request under eight keys, on a tier with cross_key, in one claim
  // statement (migration 0027): the first marks its row as the request's latest execution, the
  // others meet the mark in the same INSERT and decide alone — hold: one runs, seven are held
  // naming it; observe: all run, each after the first naming an earlier one, and one row ends
  // up holding the mark.
  void hedgedCopiesInOneBatchMeetEachOther_data() {
    QTest::addColumn<bool>("hold");
    QTest::newRow("hold") << true;
    QTest::newRow("observe") << false;
  }
  void hedgedCopiesInOneBatchMeetEachOther() {
    QFETCH(bool, hold);
    auto blocker = m_db->connect();
    holdFreshKeys(blocker);
    std::vector<store::ClaimRequest> requests;
    for (int i = 0; i < 8; ++i) {
      requests.push_back(request("hedged-" + std::to_string(i), "fp-hedged"));
      requests.back().crossKey = store::CrossKeyCheck{60s, hold, false, false};
    }
    const auto outcomes = claimInOneBatch(blocker, requests);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(m_store->writeBatches().claimBatches, kHeld + 1LL);  // the eight went in one statement

    std::set<std::string> executedKeys;
    int held = 0, matched = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      QVERIFY(outcomes[i].result.has_value());
      const auto& r = *outcomes[i].result;
      if (r.decision == Decision::Execute) executedKeys.insert(requests[i].scope.key);
      else QVERIFY2(r.decision == Decision::Duplicate, store::decisionName(r.decision));
      held += r.decision == Decision::Duplicate;
      if (r.match) {
        ++matched;
        QVERIFY(r.match->key != requests[i].scope.key);
        QVERIFY(r.match->key.starts_with("hedged-"));
      }
    }
    QCOMPARE(executedKeys.size(), std::size_t{hold ? 1u : 8u});
    QCOMPARE(held, hold ? 7 : 0);
    QCOMPARE(matched, 7);  // everyone but the first saw an earlier copy
    auto c = m_db->connect();
    auto marked = c.exec("SELECT idem_key FROM idem.keys WHERE same_request_latest AND idem_key LIKE 'hedged-%'");
    QCOMPARE(marked.rows(), 1);
    if (hold) QCOMPARE(marked.str(0, "idem_key"), *executedKeys.begin());  // held copies claimed nothing
    QCOMPARE(c.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key LIKE 'hedged-%'").integer(0, "n"),
             hold ? 1LL : 8LL);
  }

  // A key the server rejects (its bytes are not UTF-8) in a batch of eight: the statement fails,
  // is split, and only that key's claim fails; the seven others are claimed.
  void aPoisonedClaimFailsOnlyItsOwnKey() {
    auto blocker = m_db->connect();
    holdFreshKeys(blocker);
    std::vector<store::ClaimRequest> requests;
    for (int i = 0; i < 8; ++i) requests.push_back(request("k-" + std::to_string(i)));
    requests[5].scope.key = std::string("bad-\xff\xfe");
    std::vector<Outcome<store::ClaimResult>> outcomes(requests.size());
    std::vector<std::function<void()>> rest;
    for (std::size_t i = 0; i < requests.size(); ++i)
      rest.emplace_back([&, i] {
        try {
          outcomes[i].result = m_store->claim(requests[i]);
        } catch (const pg::QueryError& e) {
          outcomes[i].failed = true;
          outcomes[i].sqlstate = e.sqlstate();
        }
      });
    heldBatch(blocker, heldClaims(), rest, [&] { return m_store->writeBatches().claimsWaiting; });
    if (QTest::currentTestFailed()) return;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (i == 5) {
        QVERIFY(outcomes[i].failed);
        QCOMPARE(outcomes[i].sqlstate, std::string("22021"));  // invalid byte sequence
        continue;
      }
      QVERIFY2(!outcomes[i].failed, outcomes[i].sqlstate.c_str());
      QVERIFY(outcomes[i].result->decision == Decision::Execute);
    }
    auto c = m_db->connect();
    QCOMPARE(c.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key LIKE 'k-%'").integer(0, "n"), 7LL);
    // The held keys' batches, then one of the eight (whose statement failed and was split
    // within that batch, down to the poisoned key).
    QCOMPARE(m_store->writeBatches().claimBatches, kHeld + 1LL);
  }

  // Completions queued behind one: one statement stores each key's own response; a completion
  // whose lease was taken over stores nothing and is traced as lease_lost; a completion the
  // server rejects fails alone.
  void concurrentCompletionsStoreEachKeysOwnResponse() {
    std::vector<std::string> keys;
    std::vector<std::string> tokens;
    for (int i = 0; i < 10; ++i) {
      keys.push_back("c-" + std::to_string(i));
      tokens.push_back(m_store->claim(request(keys.back())).leaseToken);
    }
    std::vector<std::string> heldTokens;
    for (int i = 0; i < kHeld; ++i) heldTokens.push_back(m_store->claim(request("c-held-" + std::to_string(i))).leaseToken);
    auto blocker = m_db->connect();
    blocker.exec("BEGIN");
    blocker.exec("SELECT 1 FROM idem.keys WHERE idem_key LIKE 'c-held-%' FOR UPDATE");

    std::vector<store::CompleteRequest> requests;
    for (int i = 0; i < 10; ++i) requests.push_back(completion(keys[i], tokens[i]));
    requests[3].leaseToken = "00000000-0000-4000-8000-000000000000";  // not the holder's: a lost lease
    requests[7].resourceRef = std::string("pay-\xff");                // not UTF-8: the server rejects it
    std::vector<Outcome<store::CompleteResult>> outcomes(requests.size());
    std::vector<std::function<void()>> rest;
    for (std::size_t i = 0; i < requests.size(); ++i)
      rest.emplace_back([&, i] {
        try {
          outcomes[i].result = m_store->complete(requests[i]);
        } catch (const pg::QueryError& e) {
          outcomes[i].failed = true;
          outcomes[i].sqlstate = e.sqlstate();
        }
      });
    const long long batchesBefore = m_store->writeBatches().completionBatches;
    std::vector<store::CompleteResult> heldResults(kHeld);
    std::vector<std::function<void()>> held;
    for (int i = 0; i < kHeld; ++i)
      held.emplace_back([&, i] { heldResults[i] = m_store->complete(completion("c-held-" + std::to_string(i), heldTokens[i])); });
    heldBatch(blocker, held, rest, [&] { return m_store->writeBatches().completionsWaiting; });
    if (QTest::currentTestFailed()) return;
    for (const auto& r : heldResults) QVERIFY(r.stored);
    // The held ones, then the ten together (their statement failed on the poisoned key and was
    // split in halves within that batch).
    QCOMPARE(m_store->writeBatches().completionBatches - batchesBefore, kHeld + 1LL);

    auto c = m_db->connect();
    for (std::size_t i = 0; i < requests.size(); ++i) {
      auto row = c.exec("SELECT state, resp_body, resource_ref FROM idem.keys WHERE idem_key = $1", {keys[i]});
      if (i == 7) {
        QVERIFY(outcomes[i].failed);
        QCOMPARE(outcomes[i].sqlstate, std::string("22021"));
        QCOMPARE(row.str(0, "state"), std::string("processing"));
        continue;
      }
      QVERIFY2(!outcomes[i].failed, outcomes[i].sqlstate.c_str());
      if (i == 3) {
        QVERIFY(!outcomes[i].result->stored);
        QCOMPARE(row.str(0, "state"), std::string("processing"));
        QCOMPARE(c.exec("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'c-3' AND outcome = 'lease_lost'")
                     .integer(0, "n"),
                 1LL);
        continue;
      }
      QVERIFY(outcomes[i].result->stored);
      QCOMPARE(outcomes[i].result->generation, 1);
      QCOMPARE(row.str(0, "state"), std::string("done"));
      QCOMPARE(row.bytes(0, "resp_body"), requests[i].response.body);
      QCOMPARE(row.str(0, "resource_ref"), *requests[i].resourceRef);
    }
    // A completed key replays its own response.
    auto replay = m_store->claim(request(keys[0]));
    QVERIFY(replay.decision == Decision::Replay);
    QCOMPARE(replay.stored->body, requests[0].response.body);
  }

  // A lone client never waits for company: every claim and completion is a batch of one.
  void aLoneClientSendsOneStatementPerWrite() {
    for (int i = 0; i < 5; ++i) {
      auto claimed = m_store->claim(request("alone-" + std::to_string(i)));
      QVERIFY(claimed.decision == Decision::Execute);
      QVERIFY(m_store->complete(completion("alone-" + std::to_string(i), claimed.leaseToken)).stored);
    }
    const auto s = m_store->writeBatches();
    QCOMPARE(s.claimBatches, 5LL);
    QCOMPARE(s.claimedKeys, 5LL);
    QCOMPARE(s.completionBatches, 5LL);
    QCOMPARE(s.completedKeys, 5LL);
  }

  // A lease renewal locks its keys in the order the completion batches lock them (by key), not in
  // the order of their leases or the order the keeper hands them over in: the two never wait on
  // each other's rows in a cycle (a deadlock PostgreSQL breaks only after deadlock_timeout, failing
  // one of them). "b" is claimed first, so its lease ends first; seen from outside, while the
  // renewal waits on "b" it already holds "a". (Migration 0025's idem.renew_leases walked the
  // in-flight index, lease order: it waited on "b" holding nothing.)
  void aLeaseRenewalLocksKeysInTheBatchesOrder() {
    const auto b = m_store->claim(request("b"));
    std::this_thread::sleep_for(5ms);  // "a"'s lease ends later
    const auto a = m_store->claim(request("a"));
    QVERIFY(a.decision == Decision::Execute && b.decision == Decision::Execute);
    // Enough other rows that the renewal's plan walks its keys as given, through the primary key.
    auto filler = m_db->connect();
    filler.exec("INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, "
                "request_id, expires_at) SELECT 'acct_1', $1, 'other-' || g, 1, 'payments', '\\x00', 'done', "
                "'req_filler', now() + interval '1 day' FROM generate_series(1, 5000) g",
                {kEndpoint});
    filler.exec("ANALYZE idem.keys");

    auto blocker = m_db->connect();
    blocker.exec("BEGIN");
    blocker.exec("SELECT 1 FROM idem.keys WHERE idem_key = 'b' FOR UPDATE");
    std::vector<std::string> renewed;
    std::thread renewal([&] {
      renewed = m_store->renewLeases({{request("b").scope, b.leaseToken, 30s}, {request("a").scope, a.leaseToken, 30s}});
    });
    const bool waiting = waitFor([&] { return statementsWaitingOnLocks() == 1; });
    std::string probe;
    try {
      auto other = m_db->connect();
      other.exec("SELECT 1 FROM idem.keys WHERE idem_key = 'a' FOR UPDATE NOWAIT");
      probe = "a was free";
    } catch (const pg::QueryError& e) {
      probe = e.sqlstate();
    }
    blocker.exec("ROLLBACK");
    renewal.join();
    QVERIFY2(waiting, "the renewal never waited on the locked key");
    QCOMPARE(probe, std::string("55P03"));  // lock_not_available: the renewal took "a" before "b"
    QCOMPARE(renewed.size(), std::size_t(2));
  }
};

QTEST_GUILESS_MAIN(TestWriteBatches)
#include "tst_writebatches.moc"
