// The replay cache's own bounds (core/enforce/replaycache.h), which no store is needed to see:
// memory stays within its entry and byte limits (least recently used dropped first, counted), an
// answer too large is not kept, an entry never outlives the key's remaining life less the margin
// nor its max age, and an entry answers only its own scope and payload. What it means against a
// real store (purge, expiry by the database's clock, trace) is tests/proxy/tst_replaycache.cpp.
#include <QtTest>
#include <thread>

#include "core/enforce/replaycache.h"

using namespace idem;
using enforce::ReplayCache;
using enforce::ReplayCacheOptions;

namespace {

store::ClaimResult replayOf(std::string body, long long lifeMs) {
  store::ClaimResult r;
  r.decision = store::Decision::Replay;
  r.generation = 1;
  r.now = 1'000'000;
  r.expiresAt = r.now + lifeMs;
  r.stored = store::StoredResponse{201, {{"Content-Type", "application/json"}}, std::move(body)};
  return r;
}

store::Scope scope(int i, const std::string& tenant = "acme") { return {tenant, "POST /v1/charges", "k-" + std::to_string(i)}; }

}  // namespace

class TestReplayCacheBounds : public QObject {
  Q_OBJECT

 private slots:
  void entriesStayWithinTheirBoundAndTheOldestGoFirst() {
    ReplayCache cache(ReplayCacheOptions{std::chrono::seconds(60), std::chrono::milliseconds(250), 32, 1u << 20});
    for (int i = 0; i < 1000; ++i) cache.put(scope(i), "fp", replayOf("{}", 3'600'000), ReplayCache::Clock::now());
    const auto s = cache.stats();
    QVERIFY(s.entries <= 32);
    QVERIFY(s.entries >= 16);  // every shard keeps at least its share
    QCOMPARE(s.evictions, 1000LL - static_cast<long long>(s.entries));
    QVERIFY(cache.find(scope(999), "fp").has_value());  // the newest stays
    QVERIFY(!cache.find(scope(0), "fp").has_value());   // the oldest went
  }

  void bytesStayWithinTheirBound() {
    const std::size_t maxBytes = 256 * 1024;
    ReplayCache cache(ReplayCacheOptions{std::chrono::seconds(60), std::chrono::milliseconds(250), 100000, maxBytes});
    for (int i = 0; i < 2000; ++i)
      cache.put(scope(i), "fp", replayOf(std::string(1000, 'x'), 3'600'000), ReplayCache::Clock::now());
    QVERIFY(cache.stats().bytes <= maxBytes);
    QVERIFY(cache.stats().evictions > 0);
    // One answer above 1/16 of the bound is not kept at all.
    cache.put(scope(5000), "fp", replayOf(std::string(maxBytes / 8, 'x'), 3'600'000), ReplayCache::Clock::now());
    QVERIFY(!cache.find(scope(5000), "fp").has_value());
  }

  void anEntryNeverOutlivesTheKeyLessTheMargin() {
    ReplayCache cache(ReplayCacheOptions{std::chrono::seconds(60), std::chrono::milliseconds(250), 100, 1u << 20});
    // 200 ms of life left is inside the 250 ms margin: not kept.
    cache.put(scope(1), "fp", replayOf("{}", 200), ReplayCache::Clock::now());
    QVERIFY(!cache.find(scope(1), "fp").has_value());
    // 300 ms left, counted from a read sent 100 ms ago: gone by now.
    cache.put(scope(2), "fp", replayOf("{}", 300), ReplayCache::Clock::now() - std::chrono::milliseconds(100));
    QVERIFY(!cache.find(scope(2), "fp").has_value());
    // Plenty left: kept, with the key's expiry and a database time that moves on from the read's.
    const auto sent = ReplayCache::Clock::now() - std::chrono::milliseconds(40);
    cache.put(scope(3), "fp", replayOf("{}", 3'600'000), sent);
    const auto hit = cache.find(scope(3), "fp");
    QVERIFY(hit.has_value());
    QCOMPARE(hit->expiresAt, 1'000'000LL + 3'600'000LL);
    QVERIFY(hit->dbNow >= 1'000'000LL + 40);
  }

  void anEntryNeverOutlivesItsMaxAge() {
    ReplayCache cache(ReplayCacheOptions{std::chrono::seconds(2), std::chrono::milliseconds(250), 100, 1u << 20});
    cache.put(scope(1), "fp", replayOf("{}", 3'600'000), ReplayCache::Clock::now() - std::chrono::milliseconds(2100));
    QCOMPARE(cache.stats().entries, std::size_t{0});  // its max age had passed: never kept
    // Read a second ago: kept for about one more second, then gone.
    cache.put(scope(2), "fp", replayOf("{}", 3'600'000), ReplayCache::Clock::now() - std::chrono::seconds(1));
    QCOMPARE(cache.stats().entries, std::size_t{1});
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    QVERIFY(!cache.find(scope(2), "fp").has_value());
    QCOMPARE(cache.stats().expired, 1LL);
  }

  void onlyItsOwnScopeAndPayload() {
    ReplayCache cache(ReplayCacheOptions{std::chrono::seconds(60), std::chrono::milliseconds(250), 100, 1u << 20});
    cache.put(scope(1, "acme"), "fp", replayOf("acme's", 3'600'000), ReplayCache::Clock::now());
    QVERIFY(!cache.find(scope(1, "globex"), "fp").has_value());
    QVERIFY(!cache.find({"acme", "POST /v1/refunds", "k-1"}, "fp").has_value());
    QVERIFY(!cache.find(scope(1, "acme"), "another payload").has_value());
    const auto hit = cache.find(scope(1, "acme"), "fp");
    QVERIFY(hit.has_value());
    QCOMPARE(hit->response->body, std::string("acme's"));
    cache.erase(scope(1, "acme"));
    QVERIFY(!cache.find(scope(1, "acme"), "fp").has_value());
    QCOMPARE(cache.stats().hits, 1LL);
  }

  void offKeepsNothing() {
    ReplayCache cache(ReplayCacheOptions{});
    QVERIFY(!cache.enabled());
    cache.put(scope(1), "fp", replayOf("{}", 3'600'000), ReplayCache::Clock::now());
    QVERIFY(!cache.find(scope(1), "fp").has_value());
    QCOMPARE(cache.stats().entries, std::size_t{0});
  }
};

QTEST_GUILESS_MAIN(TestReplayCacheBounds)
#include "tst_replaycachebounds.moc"
