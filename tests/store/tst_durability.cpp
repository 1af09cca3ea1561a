// The store's durability as Idem reads it and says it (store::probeDurability), and a tier's
// `durability: synchronous` held against it (enforce::DurabilityGate), on a real primary with a
// real streaming hot standby (pg_basebackup), asynchronous and synchronous.
#include <QtTest>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "core/store/durability.h"
#include "core/store/migrations.h"
#include "tests/support/harness.h"
#include "tests/support/standby.h"
#include "tests/support/testdb.h"

using namespace idem;
using Kind = enforce::Decision::Kind;
using Level = store::Durability::Level;

namespace {

// Two tiers that need synchronous durability (one refuses, one warns) and one that needs nothing.
const char* const kPolicy =
    "{\"docs_url\": \"https://docs.test/idempotency\", \"tiers\": ["
    "{\"name\": \"payments\", \"routes\": [\"POST /v1/payments\"], \"ttl\": \"1h\", \"durability\": \"synchronous\"},"
    "{\"name\": \"refunds\", \"routes\": [\"POST /v1/refunds\"], \"ttl\": \"1h\", \"durability\": \"synchronous\", "
    "\"on_weaker_store\": \"warn\"},"
    "{\"name\": \"notes\", \"routes\": [\"POST /v1/notes\"], \"ttl\": \"1h\"}]}";

void setSynchronousStandby(pg::Connection& admin, bool on) {
  admin.exec(on ? "ALTER SYSTEM SET synchronous_standby_names = '*'" : "ALTER SYSTEM RESET synchronous_standby_names");
  admin.exec("SELECT pg_reload_conf()");
}

store::Durability probeUntil(const std::string& conninfo, Level level) {
  pg::Connection c(conninfo);
  store::Durability d;
  for (int i = 0; i < 100; ++i) {  // a reload reaches the backends a moment later
    d = store::probeDurability(c);
    if (d.level == level) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    c = pg::Connection(conninfo);
  }
  return d;
}

}  // namespace

class TestDurability : public QObject {
  Q_OBJECT

 private slots:
  void aPrimaryWithoutStandbyIsLocal() {
    test::PrivateCluster pc;
    pg::Connection c(pc.conninfo());
    const auto d = store::probeDurability(c);
    QCOMPARE(d.level, Level::Local);
    QCOMPARE(d.standbys, 0);
    QVERIFY(!d.synchronous());
    QVERIFY2(d.meaning().find("no standby") != std::string::npos, d.meaning().c_str());
  }

  void asynchronousThenSynchronousStandby() {
    test::PrivateCluster pc;
    pg::Connection admin(pc.conninfo());
    store::migrate(admin);
    test::Standby standby(pc);
    test::waitForStandbys(admin, 1, "async");

    // Asynchronous: acknowledged before the standby has them, and said so.
    auto d = probeUntil(pc.conninfo(), Level::Asynchronous);
    QCOMPARE(d.level, Level::Asynchronous);
    QCOMPARE(d.standbys, 1);
    QCOMPARE(d.syncStandbys, 0);
    QVERIFY(!d.synchronous());
    // Which standby streams, and how: what an operator reads to know who would be promoted.
    QCOMPARE(d.standbyList.size(), std::size_t{1});
    QCOMPARE(d.standbyList[0].syncState, std::string("async"));
    QVERIFY(!d.standbyList[0].name.empty());
    QVERIFY(!d.server.empty());
    QVERIFY2(d.meaning().find("acknowledged before the standby has them") != std::string::npos, d.meaning().c_str());
    {
      test::Harness h(pc.conninfo(), kPolicy);
      // The refusing tier answers 503 and says why; nothing was claimed.
      auto refused = h.enforcer.begin(test::Harness::post("/v1/payments", "k-1", R"({"a":1})", ""));
      QVERIFY(refused.kind == Kind::Respond);
      QCOMPARE(refused.response.status, 503);
      QVERIFY2(refused.response.body.find("durability-too-weak") != std::string::npos, refused.response.body.c_str());
      QVERIFY2(refused.response.body.find("before the standby has them") != std::string::npos,
               refused.response.body.c_str());
      QCOMPARE(admin.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-1'").integer(0, "n"), 0LL);
      // The warning tier and the tier that asks for nothing run.
      auto warned = h.enforcer.begin(test::Harness::post("/v1/refunds", "k-2", R"({"a":1})", ""));
      QVERIFY(warned.kind == Kind::Execute);
      auto plain = h.enforcer.begin(test::Harness::post("/v1/notes", "k-3", R"({"a":1})", ""));
      QVERIFY(plain.kind == Kind::Execute);
      const auto counts = h.enforcer.durability().counts();
      QCOMPARE(counts.at("payments").refused, 1LL);
      QCOMPARE(counts.at("refunds").servedWeaker, 1LL);
      QVERIFY(counts.find("notes") == counts.end());
    }

    {
      // `idemctl status` says the same, and exits 1 while a tier's setting is not met.
      const std::string policyPath = "/tmp/idem-durability-policy-" + std::to_string(getpid()) + ".json";
      std::ofstream(policyPath) << kPolicy;
      auto removePolicy = qScopeGuard([&] { std::remove(policyPath.c_str()); });
      std::string out;
      QCOMPARE(test::runIdemctl({"status", "--db", pc.conninfo(), "--policy", policyPath, "--format", "json"}, &out), 1);
      QVERIFY2(out.find(R"("level":"asynchronous")") != std::string::npos, out.c_str());
      QVERIFY2(out.find(R"("sync_state":"async")") != std::string::npos, out.c_str());
      QVERIFY2(out.find("tier payments requires synchronous durability") != std::string::npos, out.c_str());
      QCOMPARE(test::runIdemctl({"status", "--db", pc.conninfo()}, &out), 0);
      QVERIFY2(out.find("acknowledged before the standby has them") != std::string::npos, out.c_str());
      QVERIFY2(out.find("(primary)") != std::string::npos && out.find(": async") != std::string::npos, out.c_str());
    }

    // The standby itself: read-only, with how old its data is.
    // Its age is known once it has replayed a commit since it started; the asynchronous standby
    // may not have replayed the writes above yet, so wait for one (CI saw it unreplayed).
    auto onStandby = probeUntil(standby.conninfo(), Level::Standby);
    QCOMPARE(onStandby.level, Level::Standby);
    for (int i = 0; i < 100 && !onStandby.dataAgeS; ++i) {
      admin.exec("SELECT txid_current()");  // a commit to replay
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      onStandby = probeUntil(standby.conninfo(), Level::Standby);
    }
    QVERIFY(onStandby.dataAgeS.has_value());
    QVERIFY2(onStandby.meaning().find("data as of") != std::string::npos, onStandby.meaning().c_str());
    auto unreplayed = onStandby;
    unreplayed.dataAgeS.reset();
    QVERIFY2(unreplayed.meaning().find("age is unknown") != std::string::npos, unreplayed.meaning().c_str());

    // Synchronous: acknowledged only once the standby has them; every tier runs.
    setSynchronousStandby(admin, true);
    test::waitForStandbys(admin, 1, "sync");
    d = probeUntil(pc.conninfo(), Level::Synchronous);
    QCOMPARE(d.level, Level::Synchronous);
    QCOMPARE(d.syncStandbys, 1);
    QVERIFY(!d.stalled());
    QCOMPARE(d.standbyList.size(), std::size_t{1});
    QCOMPARE(d.standbyList[0].syncState, std::string("sync"));
    QVERIFY2(d.meaning().find("only once a synchronous standby has them") != std::string::npos, d.meaning().c_str());
    {
      test::Harness h(pc.conninfo(), kPolicy);
      auto runs = h.enforcer.begin(test::Harness::post("/v1/payments", "k-4", R"({"a":1})", ""));
      QVERIFY(runs.kind == Kind::Execute);
      QCOMPARE(h.enforcer.durability().counts().at("payments").refused, 0LL);
    }

    // The standby gone: still synchronous by configuration, but writes stall, and that is said.
    standby.cluster().stop();
    d = probeUntil(pc.conninfo(), Level::Synchronous);
    for (int i = 0; i < 100 && d.standbys != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      d = probeUntil(pc.conninfo(), Level::Synchronous);
    }
    QVERIFY(d.stalled());
    QVERIFY2(d.meaning().find("none is connected") != std::string::npos, d.meaning().c_str());
    setSynchronousStandby(admin, false);
  }
};

QTEST_GUILESS_MAIN(TestDurability)
#include "tst_durability.moc"
