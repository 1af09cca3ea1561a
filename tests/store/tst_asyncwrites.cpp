// The write path an event loop drives (core/store/asynckeybatches.h, asyncconnection.h) against a
// real server: claims and completions handed over without a thread waiting go to the store in
// batches, every key keeps its own answer (claimed, not claimed, stored, lease lost, its own
// error), a broken connection is survived the way the blocking path survives it, an unreachable
// store answers every job with Unavailable instead of hanging, and stopping answers what waits.
// A batch is made deterministic by handing every job over before the loop runs: the first opens
// a connection, the others queue behind it and go together once it is up.
#include <QtTest>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <set>

#include "core/store/asynckeybatches.h"
#include "tests/store/keyrequests.h"
#include "tests/support/testdb.h"

using namespace idem;
using namespace std::chrono_literals;
using store::Decision;

namespace {

store::ClaimRequest request(const std::string& key, const std::string& fingerprint = "fp-1") {
  return test::paymentClaim(key, fingerprint);
}

store::CompleteRequest completion(const std::string& key, const std::string& token) {
  return test::paymentCompletion(key, token);
}

/// One job's answer as its callback saw it.
template <typename Result>
struct Answer {
  bool answered = false;
  std::optional<Result> result;
  std::string error;     // the exception's message
  std::string sqlstate;  // a QueryError's
  bool unavailable = false;
  void take(std::optional<Result> r, std::exception_ptr e) {
    QVERIFY2(!answered, "a job was answered twice");
    answered = true;
    result = std::move(r);
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const pg::QueryError& q) {
      error = q.what();
      sqlstate = q.sqlstate();
    } catch (const pg::Unavailable& u) {
      error = u.what();
      unavailable = true;
    } catch (const std::exception& x) {
      error = x.what();
    }
  }
};

}  // namespace

class TestAsyncWrites : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;

  /// Claims every request through `batches` (which runs on `loop`), handed over before the loop runs.
  static std::vector<Answer<store::ClaimResult>> claimAll(const std::vector<store::ClaimRequest>& requests,
                                                          boost::asio::io_context& loop,
                                                          store::AsyncKeyBatches& batches) {
    std::vector<Answer<store::ClaimResult>> answers(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i)
      batches.claimFresh(requests[i], [&answers, i](auto r, auto e) { answers[i].take(std::move(r), e); });
    loop.restart();
    loop.run();
    return answers;
  }

  /// The same through a batches object of their own.
  std::vector<Answer<store::ClaimResult>> claimAll(const std::vector<store::ClaimRequest>& requests) {
    boost::asio::io_context loop;
    store::AsyncKeyBatches batches(loop.get_executor(), m_db->conninfo());
    return claimAll(requests, loop, batches);
  }

  long long count(const std::string& sql, const std::vector<pg::Param>& params = {}) {
    auto c = m_db->connect();
    return c.exec(sql, params).integer(0, "n");
  }

 private slots:
  void init() { m_db = std::make_unique<test::TestDatabase>("async_writes", test::Schema::Store); }
  void cleanup() { m_db.reset(); }

  // One claim, then its completion: the key is claimed as new (generation 1, leased), its
  // response stored under that lease; the row says so. The same key claimed again is not new.
  void aClaimAndItsCompletionGoThrough() {
    boost::asio::io_context loop;
    store::AsyncKeyBatches batches(loop.get_executor(), m_db->conninfo());
    Answer<store::ClaimResult> claimed;
    Answer<store::CompleteResult> stored;
    Answer<store::ClaimResult> again;
    batches.claimFresh(request("one"), [&](auto r, auto e) {
      claimed.take(std::move(r), e);
      if (!claimed.result) return;
      batches.complete(completion("one", claimed.result->leaseToken), [&](auto r2, auto e2) {
        stored.take(std::move(r2), e2);
        batches.claimFresh(request("one"), [&](auto r3, auto e3) { again.take(std::move(r3), e3); });
      });
    });
    loop.run();
    QVERIFY2(claimed.answered && claimed.error.empty(), claimed.error.c_str());
    QVERIFY(claimed.result.has_value());
    QVERIFY(claimed.result->decision == Decision::Execute);
    QCOMPARE(claimed.result->generation, 1);
    QVERIFY(!claimed.result->leaseToken.empty());
    QVERIFY(claimed.result->leaseUntil.has_value() && claimed.result->expiresAt.has_value());
    QVERIFY2(stored.answered && stored.error.empty(), stored.error.c_str());
    QVERIFY(stored.result && stored.result->stored);
    QCOMPARE(stored.result->generation, 1);
    QVERIFY(again.answered && again.error.empty());
    QVERIFY2(!again.result, "a key with a row was claimed as new");
    auto c = m_db->connect();
    auto row = c.exec("SELECT state, resp_status, resp_body, resource_ref FROM idem.keys WHERE idem_key = 'one'");
    QCOMPARE(row.rows(), 1);
    QCOMPARE(row.str(0, "state"), std::string("done"));
    QCOMPARE(row.integer(0, "resp_status"), 201LL);
    QCOMPARE(row.bytes(0, "resp_body"), std::string(R"({"id":"pay_one"})"));
    QCOMPARE(row.str(0, "resource_ref"), std::string("pay_one"));
  }

  // Claims handed over together go in one statement, and each gets its own answer: new keys are
  // claimed, a key with a live row is not (it decides alone), the same key twice is claimed once.
  void claimsHandedOverTogetherGoInOneStatementEachWithItsOwnAnswer() {
    (void)claimAll({request("live")});
    std::vector<store::ClaimRequest> requests;
    for (int i = 0; i < 12; ++i) requests.push_back(request("k-" + std::to_string(i)));
    requests.push_back(request("live"));
    requests.push_back(request("twice"));
    requests.push_back(request("twice"));
    boost::asio::io_context loop;
    store::AsyncKeyBatches batches(loop.get_executor(), m_db->conninfo());
    auto answers = claimAll(requests, loop, batches);
    std::set<std::string> tokens;
    for (int i = 0; i < 12; ++i) {
      QVERIFY2(answers[i].error.empty(), answers[i].error.c_str());
      QVERIFY(answers[i].result && answers[i].result->decision == Decision::Execute);
      tokens.insert(answers[i].result->leaseToken);
    }
    QCOMPARE(tokens.size(), std::size_t{12});  // each key its own lease
    QVERIFY(answers[12].answered && answers[12].error.empty());
    QVERIFY2(!answers[12].result, "a key with a live row was claimed as new");
    QVERIFY(answers[13].answered && answers[14].answered);
    QCOMPARE(int(answers[13].result.has_value()) + int(answers[14].result.has_value()), 1);
    const auto stats = batches.stats();
    QCOMPARE(stats.claimedKeys, 15LL);
    QCOMPARE(stats.claimBatches, 1LL);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key LIKE 'k-%' AND state = 'processing'"), 12LL);
  }

  // A key the server rejects (not UTF-8) in a batch: the statement fails and is split down to
  // that key, which alone gets the error; the others are claimed.
  void aPoisonedClaimFailsOnlyItsOwnKey() {
    std::vector<store::ClaimRequest> requests;
    for (int i = 0; i < 8; ++i) requests.push_back(request("p-" + std::to_string(i)));
    requests[5].scope.key = std::string("bad-\xff\xfe");
    auto answers = claimAll(requests);
    for (std::size_t i = 0; i < requests.size(); ++i) {
      QVERIFY(answers[i].answered);
      if (i == 5) {
        QCOMPARE(answers[i].sqlstate, std::string("22021"));  // invalid byte sequence
        QVERIFY(!answers[i].result);
        continue;
      }
      QVERIFY2(answers[i].error.empty(), answers[i].error.c_str());
      QVERIFY(answers[i].result && answers[i].result->decision == Decision::Execute);
    }
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key LIKE 'p-%'"), 7LL);
  }

  // Completions handed over together: one statement stores each key's own response; a completion
  // under a token that does not hold the key stores nothing; one the server rejects fails alone.
  void completionsTogetherStoreEachKeysOwnResponse() {
    std::vector<store::ClaimRequest> claims;
    for (int i = 0; i < 10; ++i) claims.push_back(request("c-" + std::to_string(i)));
    auto claimed = claimAll(claims);
    std::vector<store::CompleteRequest> requests;
    for (int i = 0; i < 10; ++i) {
      QVERIFY(claimed[i].result);
      requests.push_back(completion("c-" + std::to_string(i), claimed[i].result->leaseToken));
    }
    requests[3].leaseToken = "00000000-0000-4000-8000-000000000000";  // not the holder's
    requests[7].resourceRef = std::string("pay-\xff");                // not UTF-8: rejected
    boost::asio::io_context loop;
    store::AsyncKeyBatches batches(loop.get_executor(), m_db->conninfo());
    std::vector<Answer<store::CompleteResult>> answers(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i)
      batches.complete(requests[i], [&answers, i](auto r, auto e) { answers[i].take(std::move(r), e); });
    loop.run();
    auto c = m_db->connect();
    for (std::size_t i = 0; i < requests.size(); ++i) {
      QVERIFY(answers[i].answered);
      auto row = c.exec("SELECT state, resp_body FROM idem.keys WHERE idem_key = $1", {requests[i].scope.key});
      if (i == 7) {
        QCOMPARE(answers[i].sqlstate, std::string("22021"));
        QCOMPARE(row.str(0, "state"), std::string("processing"));
        continue;
      }
      QVERIFY2(answers[i].error.empty(), answers[i].error.c_str());
      QVERIFY(answers[i].result.has_value() == (i != 3));
      QCOMPARE(row.str(0, "state"), std::string(i == 3 ? "processing" : "done"));
      if (i != 3) QCOMPARE(row.bytes(0, "resp_body"), requests[i].response.body);
    }
  }

  // Requests driven by their callbacks alone (claim, then complete, then the next key), as a
  // server on an event loop drives them: what a batch's callbacks hand over goes in the next
  // statement together, so with 32 in flight the statements carry many keys each.
  void whatABatchsCallbacksHandOverRidesTogether() {
    constexpr int kClients = 32, kRounds = 5;
    boost::asio::io_context loop;
    store::AsyncKeyBatches batches(loop.get_executor(), m_db->conninfo(), store::WriteBatching{1});
    int completed = 0;
    std::string firstError;
    std::function<void(int, int)> next = [&](int client, int round) {
      if (round == kRounds) return;
      const std::string key = "r-" + std::to_string(client) + "-" + std::to_string(round);
      batches.claimFresh(request(key), [&, key, client, round](auto r, auto e) {
        if (e || !r) {
          if (firstError.empty()) firstError = "claim of " + key + " failed";
          return;
        }
        batches.complete(completion(key, r->leaseToken), [&, key, client, round](auto s, auto e2) {
          if (e2 || !s || !s->stored) {
            if (firstError.empty()) firstError = "completion of " + key + " failed";
            return;
          }
          ++completed;
          next(client, round + 1);
        });
      });
    };
    for (int i = 0; i < kClients; ++i) boost::asio::post(loop, [&, i] { next(i, 0); });
    loop.run();
    QVERIFY2(firstError.empty(), firstError.c_str());
    QCOMPARE(completed, kClients * kRounds);
    const auto s = batches.stats();
    QCOMPARE(s.claimedKeys, static_cast<long long>(kClients * kRounds));
    QCOMPARE(s.completedKeys, static_cast<long long>(kClients * kRounds));
    // One in flight per lane: a batch is everything that queued meanwhile. Perfect batching would
    // be 32 keys a statement; a thread per request at this count made ~4.
    QVERIFY2(s.completedKeys >= 8 * s.completionBatches,
             qPrintable(QString("%1 completions in %2 statements").arg(s.completedKeys).arg(s.completionBatches)));
    QVERIFY2(s.claimedKeys >= 8 * s.claimBatches,
             qPrintable(QString("%1 claims in %2 statements").arg(s.claimedKeys).arg(s.claimBatches)));
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key LIKE 'r-%' AND state = 'done'"),
             static_cast<long long>(kClients * kRounds));
  }

  // The server ends the connections (a restart, a failover, an idle timeout): a claim sent on a
  // dead kept connection is resent once on a new one and claimed (safe: a claim nobody heard of
  // returns no row the second time); a completion is not resent — its caller gets Unavailable and
  // the key stays processing, as on the blocking path.
  void aBrokenConnectionIsSurvivedAsTheBlockingPathDoes() {
    const std::string conninfo = m_db->conninfo() + " application_name=idem_async_test";
    boost::asio::io_context loop;
    store::AsyncKeyBatches batches(loop.get_executor(), conninfo);
    auto killConnections = [&] {
      auto admin = m_db->connect();
      admin.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'idem_async_test'");
      for (int i = 0; i < 200; ++i) {
        auto left = admin.exec("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'idem_async_test'");
        if (left.integer(0, "n") == 0) return true;
        std::this_thread::sleep_for(10ms);
      }
      return false;
    };
    Answer<store::ClaimResult> first;
    batches.claimFresh(request("before"), [&](auto r, auto e) { first.take(std::move(r), e); });
    loop.run();
    QVERIFY(first.result);
    QVERIFY(killConnections());

    loop.restart();
    Answer<store::ClaimResult> second;
    batches.claimFresh(request("after"), [&](auto r, auto e) { second.take(std::move(r), e); });
    loop.run();
    QVERIFY2(second.error.empty(), second.error.c_str());
    QVERIFY(second.result && second.result->decision == Decision::Execute);

    QVERIFY(killConnections());
    loop.restart();
    Answer<store::CompleteResult> stored;
    batches.complete(completion("after", second.result->leaseToken), [&](auto r, auto e) { stored.take(std::move(r), e); });
    loop.run();
    QVERIFY(stored.answered);
    QVERIFY2(stored.unavailable, stored.error.c_str());
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'after' AND state = 'processing'"), 1LL);

    // And the next completion of it goes through on a new connection.
    loop.restart();
    Answer<store::CompleteResult> retried;
    batches.complete(completion("after", second.result->leaseToken), [&](auto r, auto e) { retried.take(std::move(r), e); });
    loop.run();
    QVERIFY2(retried.error.empty(), retried.error.c_str());
    QVERIFY(retried.result && retried.result->stored);
  }

  // Nothing listens where the store should be: every job is answered Unavailable, none hangs.
  void anUnreachableStoreAnswersEveryJobUnavailable() {
    const std::string conninfo =
        "host=127.0.0.1 port=" + std::to_string(test::freeLoopbackPort()) + " dbname=x user=x connect_timeout=2";
    boost::asio::io_context loop;
    store::AsyncKeyBatches batches(loop.get_executor(), conninfo);
    std::vector<Answer<store::ClaimResult>> claims(5);
    std::vector<Answer<store::CompleteResult>> completions(3);
    for (std::size_t i = 0; i < claims.size(); ++i)
      batches.claimFresh(request("u-" + std::to_string(i)), [&claims, i](auto r, auto e) { claims[i].take(std::move(r), e); });
    for (std::size_t i = 0; i < completions.size(); ++i)
      batches.complete(completion("u-" + std::to_string(i), "00000000-0000-4000-8000-000000000000"),
                       [&completions, i](auto r, auto e) { completions[i].take(std::move(r), e); });
    loop.run();
    for (const auto& a : claims) {
      QVERIFY(a.answered);
      QVERIFY2(a.unavailable, a.error.c_str());
      QVERIFY(a.error.find("cannot connect") != std::string::npos);
    }
    for (const auto& a : completions) QVERIFY(a.answered && a.unavailable);
  }

  // Stopping answers what waits with Unavailable, and what comes after at once; nothing is
  // claimed behind the caller's back.
  void stoppingAnswersWhatWaits() {
    boost::asio::io_context loop;
    store::AsyncKeyBatches batches(loop.get_executor(), m_db->conninfo());
    std::vector<Answer<store::ClaimResult>> answers(4);
    for (std::size_t i = 0; i < answers.size(); ++i)
      batches.claimFresh(request("s-" + std::to_string(i)), [&answers, i](auto r, auto e) { answers[i].take(std::move(r), e); });
    batches.stop();
    Answer<store::ClaimResult> late;
    batches.claimFresh(request("s-late"), [&](auto r, auto e) { late.take(std::move(r), e); });
    loop.run();
    for (const auto& a : answers) {
      QVERIFY(a.answered);
      QVERIFY2(a.unavailable, a.error.c_str());
    }
    QVERIFY(late.answered && late.unavailable);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key LIKE 's-%'"), 0LL);
  }
};

QTEST_GUILESS_MAIN(TestAsyncWrites)
#include "tst_asyncwrites.moc"
