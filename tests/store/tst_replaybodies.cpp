// Large stored answers read for replays, against a real server (issue 28 #10): a body over
// 256 KiB comes on its own statement after its bytes are taken from the replay budget, a replay
// that does not fit is refused without reading the body, the budget's bytes come back when the
// last copy of the hold goes, and a store connection that carried a large body is closed rather
// than pooled (libpq never shrinks the buffers it grew for it).
#include <QtTest>
#include <future>
#include <optional>
#include <thread>
#include <vector>

#include "core/store/keystore.h"
#include "core/store/replaybodies.h"
#include "tests/support/testdb.h"

using namespace idem;
using namespace std::chrono_literals;
using store::Decision;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

store::ClaimRequest request(const std::string& key) {
  store::ClaimRequest q;
  q.scope = {"acct_1", "POST /v1/exports", key};
  q.fingerprint = "fp-1";
  q.tier = "exports";
  q.ttl = 1h;
  q.lease = 30s;
  q.archiveRetention = 24h;
  q.requestId = "req_" + key;
  return q;
}

// A body that names its key all along, so one key's answer cannot pass for another's.
std::string bodyOf(const std::string& key, std::size_t bytes) {
  std::string body;
  while (body.size() < bytes) body += key + ":" + std::to_string(body.size()) + ";";
  body.resize(bytes);
  return body;
}

}  // namespace

class TestReplayBodies : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<store::Pool> m_pool;
  std::unique_ptr<store::RecentKeys> m_recent;
  std::unique_ptr<store::ReplayBodies> m_bodies;
  std::unique_ptr<store::KeyStore> m_store;

  // Claims, completes with `body`, and gives the connections that carried it a chance to close.
  void storeAnswer(const std::string& key, const std::string& body) {
    const auto claimed = m_store->claim(request(key));
    QVERIFY(claimed.decision == Decision::Execute);
    store::CompleteRequest c;
    c.scope = request(key).scope;
    c.leaseToken = claimed.leaseToken;
    c.response.status = 201;
    c.response.body = body;
    QVERIFY(m_store->complete(c).stored);
  }

 private slots:
  void init() {
    m_db = std::make_unique<test::TestDatabase>("replay_bodies");
    m_pool = std::make_unique<store::Pool>(m_db->conninfo(), 4);
    m_recent = std::make_unique<store::RecentKeys>(1024);
    // 4 MiB: large bodies may hold 3 MiB of it; one read slot.
    m_bodies = std::make_unique<store::ReplayBodies>(store::ReplayBodyOptions{4 * kMiB, 1, 2000ms});
    m_store = std::make_unique<store::KeyStore>(*m_pool, *m_recent);
    m_store->setReplayBodies(m_bodies.get());
  }
  void cleanup() {
    m_store.reset();
    m_bodies.reset();
    m_pool.reset();
    m_db.reset();
  }

  // A body up to 256 KiB comes with the decision and holds nothing of the budget here (the
  // enforcer takes its share); a larger one is read on its own and holds its bytes.
  void smallBodiesInlineLargeOnesUnderTheBudget() {
    const std::string small = bodyOf("small", store::kInlineReplayBody);
    const std::string large = bodyOf("large", 1 * kMiB + 17);
    storeAnswer("small", small);
    storeAnswer("large", large);

    const auto s = m_store->claim(request("small"));
    QVERIFY(s.decision == Decision::Replay);
    QVERIFY(s.stored && s.stored->body == small);
    QVERIFY(!s.bodyHold);
    QCOMPARE(m_bodies->stats().largeBodies, 0LL);

    auto l = m_store->claim(request("large"));
    QVERIFY(l.decision == Decision::Replay);
    QVERIFY(l.stored && l.stored->body == large);
    QVERIFY(l.bodyHold);
    QCOMPARE(m_bodies->stats().bytes, large.size());
    QCOMPARE(m_bodies->stats().largeBodies, 1LL);
    l = {};
    QCOMPARE(m_bodies->stats().bytes, std::size_t{0});
  }

  // Two 1.25 MiB bodies fit the 3 MiB large bodies may use; the third is refused before it is read
  // (no body, the key untouched), and is replayed once a hold is dropped.
  void aReplayThatDoesNotFitIsRefusedUntilRoomComes() {
    const std::string body = bodyOf("big", kMiB + kMiB / 4);
    storeAnswer("big", body);
    auto first = m_store->claim(request("big"));
    auto second = m_store->claim(request("big"));
    QVERIFY(first.bodyHold && second.bodyHold);
    auto third = m_store->claim(request("big"));
    QVERIFY(third.decision == Decision::Replay);
    QVERIFY(third.bodyRefused);
    QVERIFY(!third.stored);
    QVERIFY(!third.bodyHold);
    QCOMPARE(m_bodies->stats().refused, 1LL);
    QCOMPARE(m_bodies->stats().bytes, 2 * body.size());

    first = {};
    const auto fourth = m_store->claim(request("big"));
    QVERIFY(!fourth.bodyRefused);
    QVERIFY(fourth.stored && fourth.stored->body == body);
  }

  // A body larger than the share large bodies may use still goes when nothing else is held.
  void aBodyOverTheShareGoesAlone() {
    const std::string body = bodyOf("huge", 3 * kMiB + kMiB / 2);
    storeAnswer("huge", body);
    auto alone = m_store->claim(request("huge"));
    QVERIFY(alone.stored && alone.stored->body == body);
    const auto meanwhile = m_store->claim(request("huge"));
    QVERIFY(meanwhile.bodyRefused);
    alone = {};
    QVERIFY(m_store->claim(request("huge")).stored);
  }

  // The body is read after the decision: a key purged in between (an operator's DELETE) is
  // decided afresh, never replayed with an empty body. The test holds the one read slot so the
  // claim waits between its two statements.
  void aKeyPurgedBeforeItsBodyIsReadIsDecidedAgain() {
    storeAnswer("gone", bodyOf("gone", kMiB));
    std::optional<store::ReplayBodies::ReadSlot> held(std::in_place, *m_bodies);
    QVERIFY(held->held());
    auto claim = std::async(std::launch::async, [this] { return m_store->claim(request("gone")); });
    for (int i = 0; i < 100 && m_bodies->stats().bytes == 0; ++i) std::this_thread::sleep_for(10ms);
    QCOMPARE(m_bodies->stats().bytes, kMiB);  // decided "replay", its bytes taken, waiting for the slot
    auto db = m_db->connect();
    QCOMPARE(db.exec("DELETE FROM idem.keys WHERE idem_key = 'gone'").affected(), 1LL);
    held.reset();
    const auto result = claim.get();
    QVERIFY(result.decision == Decision::Execute);
    QVERIFY(!result.stored && !result.bodyHold);
    QCOMPARE(m_bodies->stats().bytes, std::size_t{0});
  }

  // A wait for a read slot holds a handler thread: four wait per slot, a fifth replay is refused
  // at once instead of joining them; the four get their bodies once the slot frees.
  void waitsForAReadSlotAreBounded() {
    const std::string body = bodyOf("wait", kMiB);
    storeAnswer("wait", body);
    store::ReplayBodies roomy(store::ReplayBodyOptions{64 * kMiB, 1, 5000ms});
    m_store->setReplayBodies(&roomy);
    std::optional<store::ReplayBodies::ReadSlot> held(std::in_place, roomy);
    std::vector<std::future<store::ClaimResult>> waiting;
    waiting.reserve(store::ReplayBodies::kWaitersPerSlot);
    for (int i = 0; i < store::ReplayBodies::kWaitersPerSlot; ++i)
      waiting.push_back(std::async(std::launch::async, [this] { return m_store->claim(request("wait")); }));
    for (int i = 0; i < 300 && roomy.stats().waiting < store::ReplayBodies::kWaitersPerSlot; ++i)
      std::this_thread::sleep_for(10ms);
    QCOMPARE(roomy.stats().waiting, store::ReplayBodies::kWaitersPerSlot);
    const auto fifth = m_store->claim(request("wait"));
    QVERIFY(fifth.bodyRefused && !fifth.stored);
    QCOMPARE(roomy.stats().refused, 1LL);
    held.reset();
    for (auto& w : waiting) {
      const auto r = w.get();
      QVERIFY(r.stored && r.stored->body == body);
    }
    m_store->setReplayBodies(m_bodies.get());
  }

  // libpq grows its buffers to a statement's largest row and never shrinks them: a connection
  // that carried more than 1 MiB is closed when it goes back, one that carried less is kept.
  void aConnectionThatCarriedALargeBodyIsClosed() {
    store::Pool pool(m_db->conninfo(), 2);
    {
      auto lease = pool.acquire();
      (void)lease.conn().exec("SELECT repeat('x', 1000) AS v");
    }
    QCOMPARE(pool.stats().idle, 1);
    {
      auto lease = pool.acquire();
      (void)lease.conn().exec("SELECT repeat('x', 2 * 1024 * 1024) AS v");
    }
    QCOMPARE(pool.stats().size, 0);
    {
      auto lease = pool.acquire();
      (void)lease.conn().exec("SELECT $1::text AS v", {std::string(2 * kMiB, 'y')});
    }
    QCOMPARE(pool.stats().size, 0);
  }
};

QTEST_GUILESS_MAIN(TestReplayBodies)
#include "tst_replaybodies.moc"
