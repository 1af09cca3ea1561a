// on_conflict "wait:<d>" holds no thread (issue 28, scenario 1's second half): retries of a key
// whose original is still running wait on a timer of the event loop, each new look at the store
// a short hop to a handler thread. With 4 handler threads and 12 waiters, a new key on another
// route, a plain request and /healthz answer while the original is still held; then every waiter gets the
// original's answer as a replay and it ran once. Waiters are bounded per key and in all: beyond
// that, the ordinary 409 at once. Both shapes of an execution (the proxy's, serve's).
#include <QtTest>
#include <future>

#include "tests/gate/gate_support.h"

using namespace idem;

namespace {
constexpr int kThreads = 4;
constexpr int kWaiters = 12;  // three times the handler threads

using Answer = std::future<client::ClientResponse>;

Answer postAsync(const test::GateServer& s, const std::string& path, const http::Headers& headers) {
  return std::async(std::launch::async, [&s, path, headers] {
    return client::Client("127.0.0.1", s.server->port(), std::chrono::seconds(40)).post(path, headers, R"({"amount":1})");
  });
}

http::Headers held(const std::string& key) {
  http::Headers h = test::keyed(key);
  h.emplace_back("X-Hold", "1");
  return h;
}

bool answeredWithin(Answer& a, std::chrono::seconds bound) { return a.wait_for(bound) == std::future_status::ready; }
}  // namespace

class TstConflictWait : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;

 private slots:
  void initTestCase() { m_db = std::make_unique<test::TestDatabase>("gate_conflictwait"); }
  void cleanupTestCase() { m_db.reset(); }

  void waitersHoldNoThread_data() { addShapes(); }
  void waitersHoldNoThread() {
    QFETCH(bool, onLoop);
    test::GateServer s(*m_db, shape(onLoop), kThreads);
    // A failed check returns early: the held original must still be answered, or the server
    // never stops.
    const auto answerHeld = qScopeGuard([&] { s.execution->release(); });
    const std::string key = std::string("wait-") + (onLoop ? "loop" : "handlers");

    Answer original = postAsync(s, "/v1/waits", held(key));
    QTRY_COMPARE(s.execution->held(), std::size_t(1));
    std::vector<Answer> waiters;
    for (int i = 0; i < kWaiters; ++i) waiters.push_back(postAsync(s, "/v1/waits", test::keyed(key)));
    QTRY_COMPARE(s.sample("\nidem_conflict_waiters "), static_cast<long long>(kWaiters));

    // While every waiter waits and the original is still held: a new key on another route (its
    // claim needs a handler thread), a plain request (serve's shape runs it on one) and /healthz
    // on the admin listener all answer.
    Answer other = postAsync(s, "/v1/charges", test::keyed(key + "-other"));
    QVERIFY2(answeredWithin(other, std::chrono::seconds(10)), "a new key waited behind the waiters");
    QCOMPARE(other.get().status, 201);
    Answer plain = postAsync(s, "/v1/plain", test::keyed(""));
    QVERIFY2(answeredWithin(plain, std::chrono::seconds(10)), "a plain request waited behind the waiters");
    QCOMPARE(plain.get().status, 201);
    QCOMPARE(client::Client("127.0.0.1", s.server->adminPort()).get("/healthz").status, 200);
    QCOMPARE(s.execution->held(), std::size_t(1));  // all of it before the original's answer
    for (auto& w : waiters) QVERIFY(w.wait_for(std::chrono::seconds(0)) != std::future_status::ready);

    s.execution->release();
    const auto first = original.get();
    QCOMPARE(first.status, 201);
    for (auto& w : waiters) {
      const auto r = w.get();
      QCOMPARE(r.status, 201);
      QCOMPARE(r.header("Idempotent-Replayed"), std::string("true"));
      QCOMPARE(r.body, first.body);
    }
    QCOMPARE(s.execution->calls(), 3);  // the original, the other key, the plain one: no waiter ran
    QCOMPARE(s.requests("waits", "replayed", 201), static_cast<long long>(kWaiters));
    QCOMPARE(s.sample("\nidem_conflict_waiters "), 0LL);
    // Traced as replays that waited (latency and detail), as before; a storm of identical rows
    // is folded into one with a count (repeats).
    auto c = m_db->connect();
    QTRY_COMPARE(c.exec("SELECT coalesce(sum(repeats), 0) AS n FROM idem.events WHERE idem_key = $1 "
                        "AND outcome = 'replayed' AND detail = 'replayed after waiting for the original'",
                        {key})
                     .integer(0, "n"),
                 static_cast<long long>(kWaiters));
  }

  void waitersAreBounded_data() { addShapes(); }
  void waitersAreBounded() {
    QFETCH(bool, onLoop);
    // Two per key, three in all: the third waiter of a key, and the fourth of the server, are
    // answered the ordinary 409 at once.
    test::GateServer s(*m_db, shape(onLoop), kThreads, [](gate::Host& host) {
      host.enforcer().setConflictWaitBounds({.perKey = 2, .total = 3});
    });
    // A failed check returns early: the held original must still be answered, or the server
    // never stops.
    const auto answerHeld = qScopeGuard([&] { s.execution->release(); });
    const std::string a = std::string("bound-a-") + (onLoop ? "loop" : "handlers");
    const std::string b = std::string("bound-b-") + (onLoop ? "loop" : "handlers");
    Answer originalA = postAsync(s, "/v1/waits", held(a));
    Answer originalB = postAsync(s, "/v1/waits", held(b));
    QTRY_COMPARE(s.execution->held(), std::size_t(2));

    std::vector<Answer> waiting;
    waiting.push_back(postAsync(s, "/v1/waits", test::keyed(a)));
    waiting.push_back(postAsync(s, "/v1/waits", test::keyed(a)));
    QTRY_COMPARE(s.sample("\nidem_conflict_waiters "), 2LL);
    const auto thirdOfA = s.post("/v1/waits", test::keyed(a));
    QCOMPARE(thirdOfA.status, 409);
    QVERIFY(!thirdOfA.header("Retry-After").empty());
    QCOMPARE(test::problemOf(thirdOfA)["type"], "https://docs.test/idempotency#request-in-progress");
    // Why it was not let wait is the operator's: in its access log line, never in the answer.
    QTRY_COMPARE(s.logLine(thirdOfA.header("Request-Id")).value("outcome", ""), std::string("conflict"));
    const std::string why = s.logLine(thirdOfA.header("Request-Id")).value("detail", "");
    QVERIFY2(why.starts_with("not waited: "), why.c_str());
    QVERIFY(thirdOfA.body.find("not waited") == std::string::npos);

    waiting.push_back(postAsync(s, "/v1/waits", test::keyed(b)));
    QTRY_COMPARE(s.sample("\nidem_conflict_waiters "), 3LL);
    const auto fourth = s.post("/v1/waits", test::keyed(b));
    QCOMPARE(fourth.status, 409);
    QVERIFY(!fourth.header("Retry-After").empty());
    QCOMPARE(s.sample("\nidem_conflict_waits_refused_total "), 2LL);
    QCOMPARE(s.execution->held(), std::size_t(2));  // both refusals came before the originals' answers

    s.execution->release();
    QCOMPARE(originalA.get().status, 201);
    QCOMPARE(originalB.get().status, 201);
    for (auto& w : waiting) {
      const auto r = w.get();
      QCOMPARE(r.status, 201);
      QCOMPARE(r.header("Idempotent-Replayed"), std::string("true"));
    }
    QCOMPARE(s.execution->calls(), 2);
  }

  void aWaitRunsOutInto409_data() { addShapes(); }
  void aWaitRunsOutInto409() {
    QFETCH(bool, onLoop);
    test::GateServer s(*m_db, shape(onLoop), kThreads);
    // A failed check returns early: the held original must still be answered, or the server
    // never stops.
    const auto answerHeld = qScopeGuard([&] { s.execution->release(); });
    const std::string key = std::string("runout-") + (onLoop ? "loop" : "handlers");
    Answer original = postAsync(s, "/v1/waits", held(key));
    QTRY_COMPARE(s.execution->held(), std::size_t(1));
    // The tier waits 15 s: past it, the waiter gets the 409 while the original is still held.
    Answer waiter = postAsync(s, "/v1/waits", test::keyed(key));
    QVERIFY(answeredWithin(waiter, std::chrono::seconds(25)));
    const auto r = waiter.get();
    QCOMPARE(r.status, 409);
    QVERIFY(!r.header("Retry-After").empty());
    QCOMPARE(s.execution->held(), std::size_t(1));
    QCOMPARE(s.sample("\nidem_conflict_waiters "), 0LL);
    s.execution->release();
    QCOMPARE(original.get().status, 201);
  }

  void stoppingEndsTheWaits_data() { addShapes(); }
  void stoppingEndsTheWaits() {
    QFETCH(bool, onLoop);
    auto s = std::make_unique<test::GateServer>(*m_db, shape(onLoop), kThreads);
    // A failed check returns early: the held original must still be answered, or the server
    // never stops.
    const auto answerHeld = qScopeGuard([&] { s->execution->release(); });
    const std::string key = std::string("stop-") + (onLoop ? "loop" : "handlers");
    Answer original = postAsync(*s, "/v1/waits", held(key));
    QTRY_COMPARE(s->execution->held(), std::size_t(1));
    std::vector<Answer> waiters;
    for (int i = 0; i < 3; ++i) waiters.push_back(postAsync(*s, "/v1/waits", test::keyed(key)));
    QTRY_COMPARE(s->sample("\nidem_conflict_waiters "), 3LL);
    // Stopping answers the waiters (409: retry elsewhere or later) instead of keeping the
    // server up for the rest of their 15 s; the held original is answered when released.
    auto stopped = std::async(std::launch::async, [&s] {
      s->server->stop();
      s->server->wait();
    });
    for (auto& w : waiters) {
      QVERIFY2(answeredWithin(w, std::chrono::seconds(10)), "a waiter kept the stopping server up");
      QCOMPARE(w.get().status, 409);
    }
    s->execution->release();
    stopped.get();
    QCOMPARE(original.get().status, 201);
  }

 private:
  static void addShapes() {
    QTest::addColumn<bool>("onLoop");
    QTest::newRow("loop") << true;
    QTest::newRow("handlers") << false;
  }
  static gate::Execution::Thread shape(bool onLoop) {
    return onLoop ? gate::Execution::Thread::Loop : gate::Execution::Thread::Handlers;
  }
};

QTEST_GUILESS_MAIN(TstConflictWait)
#include "tst_conflictwait.moc"
