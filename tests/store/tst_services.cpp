// Several services on one store (docs/store.md, "Services"): the service is part of a key's
// identity in every statement, each service's keys are swept under its own policy's retentions,
// each service's tiers come from its own policy, and a store from before schema 25 keeps its
// keys (they become the "default" service's and still replay).
#include <QtTest>

#include <thread>

#include "core/policy/policy.h"
#include "core/store/keystore.h"
#include "core/store/migrations.h"
#include "core/store/policystore.h"
#include "core/store/sweeper.h"
#include "core/tiers/tiers.h"
#include "tests/support/testdb.h"

using namespace idem;
using namespace std::chrono_literals;

namespace {

store::ClaimRequest claimOf(const std::string& service, const std::string& key, const std::string& fingerprint) {
  store::ClaimRequest q;
  q.scope = {"acct_1", "POST /v1/orders", key, service};
  q.fingerprint = fingerprint;
  q.tier = "orders";
  q.ttl = 1h;
  q.lease = 30s;
  q.archiveRetention = 24h;
  q.requestId = "req-" + service;
  return q;
}

store::CompleteRequest completionOf(const store::ClaimRequest& q, const store::ClaimResult& claimed,
                                    const std::string& body) {
  store::CompleteRequest c;
  c.scope = q.scope;
  c.leaseToken = claimed.leaseToken;
  c.response = {201, {{"Content-Type", "application/json"}}, body};
  c.requestId = q.requestId;
  return c;
}

long long scalar(pg::Connection& c, const std::string& sql, const std::vector<pg::Param>& params = {}) {
  return c.exec(sql, params).integer(0, "n");
}

/// A policy with one tier, "orders", whose archived generations are kept `retention`.
policy::Policy ordersPolicy(const std::string& retention, const std::string& extraTier = {}) {
  std::string tiers = R"({ "name": "orders", "routes": ["POST /v1/orders"], "ttl": "1h", "archive_retention": ")" +
                      retention + R"(" })";
  if (!extraTier.empty())
    tiers += R"(, { "name": ")" + extraTier + R"(", "routes": ["POST /v1/)" + extraTier + R"("], "ttl": "1h" })";
  // The URL is outside the raw strings: moc would read its "//" as a comment.
  return policy::parsePolicy(R"({ "docs_url": ")" + std::string("https://docs.test/orders") + R"(", "tiers": [)" +
                                 tiers + "] }",
                             "test policy " + retention);
}

}  // namespace

class TestServices : public QObject {
  Q_OBJECT

 private slots:
  void theSameKeyInTwoServicesIsTwoKeys() {
    test::TestDatabase db("services_keys", test::Schema::Store);
    store::Pool pool(db.conninfo(), 4);
    // A table of its own, so neither service's claim is read first because the other's was seen.
    store::RecentKeys recent;
    store::KeyStore keys(pool, recent);

    const auto a = claimOf("alpha", "k1", "fp-a");
    const auto b = claimOf("beta", "k1", "fp-b");  // another payload: in one service this would be a 422
    const auto claimedA = keys.claim(a);
    QCOMPARE(claimedA.decision, store::Decision::Execute);
    const auto claimedB = keys.claim(b);
    QCOMPARE(claimedB.decision, store::Decision::Execute);  // not beta's retry of alpha's key
    QVERIFY(keys.complete(completionOf(a, claimedA, "alpha's answer")).stored);
    QVERIFY(keys.complete(completionOf(b, claimedB, "beta's answer")).stored);

    // Each retry replays its own service's answer, through both the read and idem.claim.
    const auto replayA = keys.claim(a);
    QCOMPARE(replayA.decision, store::Decision::Replay);
    QCOMPARE(replayA.stored->body, std::string("alpha's answer"));
    const auto replayB = keys.claim(b);
    QCOMPARE(replayB.decision, store::Decision::Replay);
    QCOMPARE(replayB.stored->body, std::string("beta's answer"));
    // Alpha's payload under beta: beta's key with another payload (422), never alpha's answer.
    auto crossed = claimOf("beta", "k1", "fp-a");
    QCOMPARE(keys.claim(crossed).decision, store::Decision::Mismatch);

    auto c = db.connect();
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k1'"), 2LL);
    QCOMPARE(c.exec("SELECT string_agg(service || '=' || convert_from(resp_body, 'UTF8'), ',' ORDER BY service) AS s "
                    "FROM idem.keys")
                 .str(0, "s"),
             std::string("alpha=alpha's answer,beta=beta's answer"));

    // Releasing and renewing name the service too: beta's lease token does nothing to alpha's key.
    auto again = claimOf("gamma", "k2", "fp");
    const auto claimedGamma = keys.claim(again);
    QCOMPARE(claimedGamma.decision, store::Decision::Execute);
    auto wrongService = again.scope;
    wrongService.service = "delta";
    QVERIFY(!keys.release(wrongService, claimedGamma.leaseToken, 500, "r", "test"));
    QVERIFY(keys.renewLeases({{wrongService, claimedGamma.leaseToken, 30s}}).empty());
    QCOMPARE(keys.renewLeases({{again.scope, claimedGamma.leaseToken, 30s}}).size(), std::size_t(1));
    QVERIFY(keys.release(again.scope, claimedGamma.leaseToken, 500, "r", "test"));
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.events WHERE outcome = 'released' AND service = 'gamma'"), 1LL);
  }

  void eachServicesKeysAreSweptByItsOwnPolicy() {
    test::TestDatabase db("services_sweep", test::Schema::Store);
    auto c = db.connect();
    // Both services name their tier "orders"; alpha keeps archived generations 1 s, beta 30 days.
    store::activatePolicy(c, ordersPolicy("1s"), "alpha");
    store::activatePolicy(c, ordersPolicy("30d"), "beta");
    for (const char* service : {"alpha", "beta"})
      c.exec("INSERT INTO idem.keys (tenant, endpoint, idem_key, service, tier, fingerprint, state, resp_status, "
             "expires_at) VALUES ('acct_1', 'POST /v1/orders', 'k-old', $1, 'orders', '\\x01', 'done', 201, "
             "now() - interval '1 minute')",
             {std::string(service)});

    store::SweepOptions options;
    options.retentions = store::retentionsInForce(c);
    QCOMPARE(options.retentions.tiers.size(), std::size_t(2));
    auto first = store::sweep(c, options);
    QCOMPARE(first.archived, 2LL);
    const auto kept = [&](const char* service) {
      return c.exec("SELECT extract(epoch FROM purge_after - archived_at)::bigint AS n FROM idem.key_archive "
                    "WHERE service = $1",
                    {std::string(service)})
          .integer(0, "n");
    };
    QCOMPARE(kept("alpha"), 1LL);
    QCOMPARE(kept("beta"), 30LL * 24 * 3600);

    // Once alpha's second has passed, one sweep purges alpha's archived generation and keeps beta's.
    std::this_thread::sleep_for(1200ms);
    auto second = store::sweep(c, options);
    QCOMPARE(second.purged, 1LL);
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive WHERE service = 'alpha'"), 0LL);
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive WHERE service = 'beta'"), 1LL);
  }

  void eachServiceKeepsItsOwnTiers() {
    test::TestDatabase db("services_tiers", test::Schema::Store);
    auto c = db.connect();
    // The first service's policy stays in force for it when a second one starts with another.
    QVERIFY(store::recordPolicy(c, ordersPolicy("30d", "refunds"), store::kDefaultLockTimeout, "alpha") > 0);
    QVERIFY(store::recordPolicy(c, ordersPolicy("30d", "shipments"), store::kDefaultLockTimeout, "beta") > 0);

    tiers::Options options;
    options.service = "alpha";
    const auto alpha = tiers::analyse(c, options);
    QCOMPARE(alpha.service, std::string("alpha"));
    QVERIFY(alpha.tier("refunds"));
    QVERIFY(!alpha.tier("shipments"));
    options.service = "beta";
    const auto beta = tiers::analyse(c, options);
    QVERIFY(beta.tier("shipments"));
    QVERIFY(!beta.tier("refunds"));
    QVERIFY(alpha.policyVersion != beta.policyVersion);
    // A service that never chose a policy has none (not another service's).
    options.service = "gamma";
    QVERIFY_THROWS_EXCEPTION(tiers::NoPolicy, (void)tiers::analyse(c, options));
  }

  void aStoreFromBeforeServicesKeepsItsKeys() {
    test::TestDatabase db("services_upgrade", test::Schema::None);
    auto c = db.connect();
    // The schema as the last binary without services left it (every migration before 25)...
    c.script("CREATE SCHEMA idem; CREATE TABLE idem.schema_migrations (version integer PRIMARY KEY, name text "
             "NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
    for (const auto& m : store::knownMigrations()) {
      if (m.version >= 25) continue;
      c.script(m.sql);
      c.exec("INSERT INTO idem.schema_migrations (version, name) VALUES ($1, $2)", {m.version, m.name});
    }
    // ...with a done key written by its statements (no service column yet).
    c.exec("INSERT INTO idem.keys (tenant, endpoint, idem_key, tier, fingerprint, state, resp_status, resp_headers, "
           "resp_body, expires_at) VALUES ('acct_1', 'POST /v1/orders', 'k-before', 'orders', 'fp'::bytea, 'done', "
           "201, '[]'::jsonb, 'the answer'::bytea, now() + interval '1 hour')");
    QVERIFY(store::appliedSchemaVersion(c) < 25);

    const auto report = store::migrate(c);
    QCOMPARE(report.to, store::expectedSchemaVersion());
    QCOMPARE(c.exec("SELECT service FROM idem.keys WHERE idem_key = 'k-before'").str(0, "service"),
             std::string(store::kDefaultService));

    // The default service's retry replays it; another service's same key is a new key.
    store::Pool pool(db.conninfo(), 2);
    store::RecentKeys recent;
    store::KeyStore keys(pool, recent);
    auto retry = claimOf(store::kDefaultService, "k-before", "fp");
    const auto replay = keys.claim(retry);
    QCOMPARE(replay.decision, store::Decision::Replay);
    QCOMPARE(replay.stored->body, std::string("the answer"));
    QCOMPARE(keys.claim(claimOf("alpha", "k-before", "fp")).decision, store::Decision::Execute);
    // A binary of the older schema, calling idem.claim without a service, decides in "default".
    QCOMPARE(c.exec("SELECT decision FROM idem.claim('acct_1', 'POST /v1/orders', 'k-before', 'fp'::bytea, 'orders', "
                    "NULL, '1 hour', '30 seconds', 'execute', 'r', '1 day')")
                 .str(0, "decision"),
             std::string("replay"));
  }

  void badServiceNamesAreRefusedWithTheReason() {
    QVERIFY(store::serviceNameProblem("orders-api.v2_eu").empty());
    QVERIFY(store::serviceNameProblem("").find("empty") != std::string::npos);
    QVERIFY(store::serviceNameProblem("Orders").find("'O' at position 1") != std::string::npos);
    QVERIFY(store::serviceNameProblem("a b").find("' ' at position 2") != std::string::npos);
    QVERIFY(store::serviceNameProblem(std::string(64, 'a')).find("at most 63") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestServices)
#include "tst_services.moc"
