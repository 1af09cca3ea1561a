// The policy the sweeper and the console follow is one the operator chose (issue 28, scenario
// 6): idem_service records the policy it runs with, but a row it appends — 1 ms retentions, a
// document no sweeper can read, a second service's or a staging serve's policy — changes
// neither what the sweeper purges nor what the console shows. Only the admin or the owner
// chooses (`idemctl policy activate`); a chosen document the sweeper cannot read is skipped with
// a warning, never a reason to stop sweeping. Real login roles on a real PostgreSQL.
#include <QtTest>
#include <fstream>

#include "core/store/policystore.h"
#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/login_role.h"
#include "tests/endpoint/serve_process.h"

using namespace idem;
using test::sqlstateOf;

namespace {

// webhooks: expires after 1 s and is then refused (on_expired reject) for as long as the
// archive remembers the generation: 400 days by default.
const char* const kPolicy =
    R"({"docs_url":"https://d/i","tenant_header":"Account-Id","tiers":[)"
    R"({"name":"payments","routes":["POST /v1/payments"],"ttl":"1h","lease":"30s"},)"
    R"({"name":"webhooks","routes":["POST /v1/webhooks/ack"],"ttl":"1s","lease":"200ms","on_expired":"reject"}]})";

// What a second service (or a staging serve) runs with: the same tiers, short retentions.
const char* const kOtherPolicy =
    R"({"docs_url":"https://d/i","tenant_header":"Account-Id","tiers":[)"
    R"({"name":"payments","routes":["POST /v1/payments"],"ttl":"1h","lease":"30s"},)"
    R"({"name":"webhooks","routes":["POST /v1/webhooks/ack"],"ttl":"1s","lease":"200ms","on_expired":"reject",)"
    R"("archive_retention":"1d","body_retention":"1d"}]})";

std::string writeFile(const std::string& name, const char* text) {
  const std::string path = "/tmp/idem-choice-" + name + "-" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << text;
  return path;
}

long long scalar(pg::Connection& c, const std::string& sql) { return c.exec(sql).integer(0, "n"); }

constexpr const char* kDenied = "42501";

}  // namespace

class TestPolicyChoice : public QObject {
  Q_OBJECT

 private slots:
  void serviceRowsDoNotSteerTheSweeper() {
    test::TestDatabase db("ep_choice");
    test::LoginRole service(db, "idem_service");
    test::LoginRole admin(db, "idem_admin");
    const std::string policy = writeFile("policy", kPolicy);
    auto store = db.connect();

    // The operator's first start (the owner) chooses its policy: nothing was chosen yet.
    {
      test::ServeProcess owner({"--db", db.conninfo(), "--policy", policy});
      owner.kill(SIGTERM);
      QCOMPARE(owner.wait(), 0);
    }
    const long long chosen = scalar(store, "SELECT max(version) AS n FROM idem.policies");

    test::ServeProcess serve({"--db", service.conninfo, "--policy", policy});
    client::Client c("127.0.0.1", serve.port());
    const std::string ack = R"({"event":"evt_1"})";
    QCOMPARE(c.post("/v1/webhooks/ack", test::jsonHeaders("wh-1"), ack).status, 200);
    QThread::msleep(1300);
    QCOMPARE(c.post("/v1/webhooks/ack", test::jsonHeaders("wh-1"), ack).status, 422);

    // The service appends a policy with 1 ms retentions: the newest row, but nobody chose it.
    pg::Connection asService(service.conninfo);
    asService.exec("INSERT INTO idem.policies (sha256, document, source) VALUES ('evil', $1::jsonb, 'service')",
                   {R"({"tiers":[{"name":"webhooks","archive_retention":"1ms","body_retention":"1ms"}]})"});
    std::string out;
    QThread::msleep(50);
    QCOMPARE(test::runIdemctl({"sweep", "--db", admin.conninfo}, &out), 0);
    QVERIFY2(out.find("retention: policy version " + std::to_string(chosen) + " in the store") != std::string::npos,
             out.c_str());
    QVERIFY2(out.find("archived 1 expired key") != std::string::npos, out.c_str());
    QThread::msleep(50);
    QCOMPARE(test::runIdemctl({"sweep", "--db", admin.conninfo}, &out), 0);
    QCOMPARE(scalar(store,
                    "SELECT count(*) AS n FROM idem.key_archive WHERE idem_key = 'wh-1' "
                    "AND resp_body IS NOT NULL AND body_dropped_at IS NULL"),
             1LL);
    // So the expired key stays refused: it does not execute again.
    QCOMPARE(c.post("/v1/webhooks/ack", test::jsonHeaders("wh-1"), ack).status, 422);

    // A junk row the service appends stops no sweep.
    asService.exec("INSERT INTO idem.policies (sha256, document, source) VALUES ('junk', $1::jsonb, 'service')",
                   {R"({"tiers":[{"name":"webhooks","archive_retention":"forever"}]})"});
    const long long junk = scalar(store, "SELECT max(version) AS n FROM idem.policies");
    QCOMPARE(test::runIdemctl({"sweep", "--db", admin.conninfo}, &out), 0);

    // The service cannot choose, by SQL or by idemctl.
    QCOMPARE(sqlstateOf(service.conninfo,
                        "INSERT INTO idem.policy_choices (version) VALUES (" + std::to_string(junk - 1) + ")"),
             std::string(kDenied));
    QCOMPARE(test::runIdemctl({"policy", "activate", std::to_string(junk - 1), "--db", service.conninfo}, &out), 1);
    QVERIFY2(out.find("takes the admin") != std::string::npos, out.c_str());

    // A second service, and a staging serve run by the owner, start with another policy: the
    // policy in force stays the chosen one, and each says so.
    const std::string other = writeFile("other", kOtherPolicy);
    const std::string errPath = "/tmp/idem-choice-err-" + std::to_string(getpid());
    for (const std::string& who : {service.conninfo, db.conninfo()}) {
      test::ServeProcess second({"--db", who, "--policy", other}, errPath);
      second.kill(SIGTERM);
      QCOMPARE(second.wait(), 0);
      std::ifstream in(errPath);
      const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      QVERIFY2(err.find("the sweeper and the console follow version " + std::to_string(chosen)) != std::string::npos,
               err.c_str());
      QCOMPARE(store::policyInForce(store)->version, static_cast<int>(chosen));
    }
    const long long otherVersion = scalar(store, "SELECT version AS n FROM idem.policies WHERE source LIKE '%other%'");

    // The admin chooses: a document no sweeper could follow is refused at the door ...
    QCOMPARE(test::runIdemctl({"policy", "activate", std::to_string(junk), "--db", admin.conninfo}, &out), 2);
    QVERIFY2(out.find("policy version " + std::to_string(junk) + ": ") != std::string::npos, out.c_str());
    QCOMPARE(store::policyInForce(store)->version, static_cast<int>(chosen));
    // ... a recorded one is taken, and the sweeper follows it.
    QCOMPARE(test::runIdemctl({"policy", "activate", other, "--db", admin.conninfo}, &out), 0);
    QCOMPARE(store::policyInForce(store)->version, static_cast<int>(otherVersion));
    QCOMPARE(scalar(store, "SELECT count(*) AS n FROM idem.policies WHERE source LIKE '%other%'"), 1LL);  // reused
    QCOMPARE(test::runIdemctl({"sweep", "--db", admin.conninfo}, &out), 0);
    QVERIFY2(out.find("policy version " + std::to_string(otherVersion) + " in the store") != std::string::npos,
             out.c_str());

    // A chosen document the sweeper cannot read (chosen by the owner past idemctl's check) is
    // skipped with a warning; the choice before it stays in force and the sweep runs.
    store.exec("INSERT INTO idem.policy_choices (version) VALUES ($1)", {junk});
    QCOMPARE(test::runIdemctl({"sweep", "--db", admin.conninfo}, &out), 0);
    QVERIFY2(out.find("warning: policy version " + std::to_string(junk)) != std::string::npos, out.c_str());
    QVERIFY2(out.find("skipped, the choice before it stays in force") != std::string::npos, out.c_str());
    QVERIFY2(out.find("retention: policy version " + std::to_string(otherVersion)) != std::string::npos, out.c_str());
    QCOMPARE(store::policyInForce(store)->version, static_cast<int>(otherVersion));

    QCOMPARE(test::runIdemctl({"policy", "list", "--db", admin.conninfo}, &out), 0);
    QVERIFY2(out.find("): version " + std::to_string(junk)) != std::string::npos, out.c_str());  // skipped (why)
    QVERIFY2(out.find("in force: version " + std::to_string(otherVersion)) != std::string::npos, out.c_str());
    serve.kill(SIGTERM);
    QCOMPARE(serve.wait(), 0);
  }

  void aServiceAloneChoosesNothing() {
    // A store whose first enforcer is the service: nothing is in force until the admin
    // chooses; the sweeper keeps everything for the built-in 400 days meanwhile.
    test::TestDatabase db("ep_choice_none");
    test::LoginRole service(db, "idem_service");
    const std::string policy = writeFile("alone", kPolicy);
    {
      test::ServeProcess serve({"--db", service.conninfo, "--policy", policy});
      serve.kill(SIGTERM);
      QCOMPARE(serve.wait(), 0);
    }
    auto store = db.connect();
    QVERIFY(!store::policyInForce(store));
    std::string out;
    QCOMPARE(test::runIdemctl({"sweep", "--db", db.conninfo()}, &out), 0);
    QVERIFY2(out.find("built-in default (no policy chosen") != std::string::npos, out.c_str());
  }
};

QTEST_GUILESS_MAIN(TestPolicyChoice)
#include "tst_policychoice.moc"
