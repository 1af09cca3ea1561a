// The sweeper against a real PostgreSQL: what it archives, what it leaves, what it purges,
// batch limits, and several sweepers at once (SKIP LOCKED: each key archived exactly once).
#include <QtTest>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "core/explain/explain.h"
#include "core/explain/format.h"
#include "core/explain/loader.h"
#include "core/store/sweeper.h"
#include "tests/support/testdb.h"

using namespace idem;
using namespace std::chrono_literals;

namespace {

// A key row relative to the database clock: expires_at = now() + expiresIn (negative = expired).
void insertKey(pg::Connection& c, const std::string& key, const std::string& tier, const std::string& state,
               const std::string& expiresIn, const std::string& leaseIn = {}, const std::string& tenant = "acct_1") {
  c.exec(
      "INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, lease_until,"
      "                       resp_status, resource_ref, created_at, expires_at)"
      " VALUES ($1, 'POST /v1/payments', $2, 3, $3, '\\x0102'::bytea, $4,"
      "         now() + $5::interval, CASE WHEN $4 = 'done' THEN 201 END, CASE WHEN $4 = 'done' THEN 'pay_' || $2 END,"
      "         now() - interval '2 days', now() + $6::interval)",
      {tenant, key, tier, state, leaseIn.empty() ? pg::Param::null() : pg::Param(leaseIn), expiresIn});
}

long long scalar(pg::Connection& c, const std::string& sql, const std::vector<pg::Param>& params = {}) {
  return c.exec(sql, params).integer(0, "n");
}

store::Retentions retentions() {
  store::Retentions r;
  r.tiers = {{"payments", std::chrono::hours(24 * 400), std::nullopt},
             {"orders", std::chrono::hours(24 * 7), std::nullopt}};
  r.fallback = std::chrono::hours(24 * 30);
  r.source = "test";
  return r;
}

}  // namespace

class TestSweeper : public QObject {
  Q_OBJECT

 private slots:
  void archivesExpiredKeysWithTheirTiersRetention() {
    test::TestDatabase db("sweeper_archive");
    auto c = db.connect();
    insertKey(c, "k_pay", "payments", "done", "-1 hour");
    insertKey(c, "k_ord", "orders", "done", "-1 second");
    insertKey(c, "k_old_tier", "retired", "done", "-3 days");
    insertKey(c, "k_live1", "payments", "done", "1 hour");
    insertKey(c, "k_live2", "orders", "done", "10 seconds");

    store::SweepOptions o;
    o.retentions = retentions();
    auto report = store::sweep(c, o);
    QCOMPARE(report.archived, 3LL);
    QVERIFY(report.complete);

    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.keys"), 2LL);
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.keys WHERE idem_key IN ('k_live1', 'k_live2')"), 2LL);
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive WHERE archived_by = 'sweeper'"), 3LL);
    // Everything kept: generation, state, status, resource, fingerprint, times.
    auto r = c.exec(
        "SELECT generation, state, resp_status, resource_ref, fingerprint = '\\x0102'::bytea AS fp_ok,"
        "       expires_at < archived_at AS expired_before, archived_at = now() AS archived_now,"
        "       (purge_after - archived_at)::text AS retention"
        "  FROM idem.key_archive ORDER BY idem_key");
    QCOMPARE(r.rows(), 3);
    for (int i = 0; i < 3; ++i) {
      QCOMPARE(r.integer(i, "generation"), 3LL);
      QCOMPARE(r.str(i, "state"), std::string("done"));
      QCOMPARE(r.integer(i, "resp_status"), 201LL);
      QVERIFY(r.boolean(i, "fp_ok"));
      QVERIFY(r.boolean(i, "expired_before"));
    }
    // Ordered by key: k_old_tier (fallback 30 d), k_ord (7 d), k_pay (400 d).
    QCOMPARE(r.str(0, "resource_ref"), std::string("pay_k_old_tier"));
    auto retention = c.exec(
        "SELECT idem_key, purge_after - archived_at = interval '30 days' AS d30,"
        "       purge_after - archived_at = interval '7 days' AS d7,"
        "       purge_after - archived_at = interval '400 days' AS d400 FROM idem.key_archive ORDER BY idem_key");
    QVERIFY(retention.boolean(0, "d30"));
    QVERIFY(retention.boolean(1, "d7"));
    QVERIFY(retention.boolean(2, "d400"));

    // Nothing left to do: a second run changes nothing.
    auto again = store::sweep(c, o);
    QCOMPARE(again.archived, 0LL);
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive"), 3LL);
  }

  void processingWithAValidLeaseIsLeftAlone() {
    test::TestDatabase db("sweeper_lease");
    auto c = db.connect();
    insertKey(c, "k_running", "payments", "processing", "-1 minute", "20 seconds");
    insertKey(c, "k_dead", "payments", "processing", "-1 minute", "-5 seconds");
    insertKey(c, "k_no_lease", "payments", "processing", "-1 minute");
    insertKey(c, "k_unexpired_dead", "payments", "processing", "1 hour", "-5 seconds");

    store::SweepOptions o;
    o.retentions = retentions();
    QCOMPARE(store::sweep(c, o).archived, 2LL);
    auto live = c.exec("SELECT idem_key FROM idem.keys ORDER BY idem_key");
    QCOMPARE(live.rows(), 2);
    QCOMPARE(live.str(0, "idem_key"), std::string("k_running"));
    QCOMPARE(live.str(1, "idem_key"), std::string("k_unexpired_dead"));
    // A dead executor's row is archived as it was (processing): explain shows it as in doubt.
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive WHERE state = 'processing'"), 2LL);
  }

  void purgesArchiveAndEventsPastRetention() {
    test::TestDatabase db("sweeper_purge");
    auto c = db.connect();
    const char* archive =
        "INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, fingerprint, state,"
        "                              created_at, expires_at, archived_at, archived_by, purge_after)"
        " VALUES ('t', 'POST /v1/payments', $1, 1, 'payments', '\\x01'::bytea, 'done', now() - interval '500 days',"
        "         now() - interval '499 days', now() - interval '499 days', 'sweeper', now() + $2::interval)";
    c.exec(archive, {"k_past", "-1 day"});
    c.exec(archive, {"k_just_past", "-1 second"});
    c.exec(archive, {"k_kept", "1 day"});
    const char* event =
        "INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, outcome)"
        " VALUES (now() - $2::interval, 't', 'POST /v1/payments', $1, 1, 'executed')";
    c.exec(event, {"k_past", "500 days"});       // generation purged with it: goes
    c.exec(event, {"k_kept", "500 days"});       // generation still archived: stays
    c.exec(event, {"k_gone", "30 days"});        // younger than the longest retention: stays
    c.exec(event, {"k_gone", "401 days"});       // older than 400 d, nothing stored: goes

    store::SweepOptions o;
    o.retentions = retentions();  // longest: 400 d
    auto report = store::sweep(c, o);
    QCOMPARE(report.purged, 2LL);
    QCOMPARE(report.eventsPurged, 2LL);
    auto kept = c.exec("SELECT idem_key FROM idem.key_archive");
    QCOMPARE(kept.rows(), 1);
    QCOMPARE(kept.str(0, "idem_key"), std::string("k_kept"));
    auto events = c.exec("SELECT idem_key, now() - at < interval '31 days' AS recent FROM idem.events ORDER BY idem_key");
    QCOMPARE(events.rows(), 2);
    QCOMPARE(events.str(0, "idem_key"), std::string("k_gone"));
    QVERIFY(events.boolean(0, "recent"));
    QCOMPARE(events.str(1, "idem_key"), std::string("k_kept"));
  }

  void batchLimitIsHonoured() {
    test::TestDatabase db("sweeper_batch");
    auto c = db.connect();
    c.exec(
        "INSERT INTO idem.keys (tenant, endpoint, idem_key, tier, fingerprint, state, resp_status, expires_at)"
        " SELECT 't', 'POST /v1/payments', 'k' || i, 'payments', '\\x01'::bytea, 'done', 201,"
        "        now() - i * interval '1 second' FROM generate_series(1, 25) i");
    const auto r = retentions();
    QCOMPARE(store::sweepArchiveBatch(c, 10, r), 10);
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.keys"), 15LL);
    // Oldest first: the ten longest expired went.
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive WHERE idem_key IN"
                       " (SELECT 'k' || i FROM generate_series(16, 25) i)"),
             10LL);
    QCOMPARE(store::sweepArchiveBatch(c, 10, r), 10);
    QCOMPARE(store::sweepArchiveBatch(c, 10, r), 5);
    QCOMPARE(store::sweepArchiveBatch(c, 10, r), 0);

    c.exec(
        "INSERT INTO idem.keys (tenant, endpoint, idem_key, tier, fingerprint, state, resp_status, expires_at)"
        " SELECT 't', 'POST /v1/orders', 'k' || i, 'orders', '\\x01'::bytea, 'done', 201,"
        "        now() - interval '1 minute' FROM generate_series(1, 25) i");
    store::SweepOptions o;
    o.batch = 10;
    o.retentions = r;
    o.purgeArchive = false;
    o.purgeEvents = false;
    auto report = store::sweep(c, o);
    QCOMPARE(report.archived, 25LL);
    // 10 + 10 + 5, then an empty batch that says so.
    QCOMPARE(report.batches, 3);
  }

  // A key of a tier with cross_key marks its row as its request's latest execution (migration
  // 0027); archiving the row takes the mark with it, so the same request may be marked again.
  void archivingAKeyTakesItsRequestsMarkWithIt() {
    test::TestDatabase db("sweeper_same_request");
    auto c = db.connect();
    const std::string insertMarked =
        "INSERT INTO idem.keys (tenant, endpoint, idem_key, tier, fingerprint, state, resp_status, expires_at,"
        " same_request_latest) VALUES ('t', 'POST /v1/payments', $1, 'payments', '\\x0102'::bytea, 'done', 201,"
        " now() + $2::interval, true)";
    c.exec(insertMarked, {"k_old", "-1 minute"});
    // One row per request holds the mark: a second one is refused while the first is live.
    bool refused = false;
    try {
      c.exec(insertMarked, {"k_twin", "1 hour"});
    } catch (const pg::QueryError& e) {
      refused = e.sqlstate() == "23505";
    }
    QVERIFY(refused);
    store::SweepOptions o;
    o.retentions = retentions();
    QCOMPARE(store::sweep(c, o).archived, 1LL);
    c.exec(insertMarked, {"k_new", "1 hour"});
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.keys WHERE same_request_latest"), 1LL);
  }

  void lockedRowsAreSkippedNotWaitedFor() {
    test::TestDatabase db("sweeper_skip");
    auto holder = db.connect();
    auto c = db.connect();
    for (int i = 0; i < 6; ++i) insertKey(c, "k" + std::to_string(i), "payments", "done", "-1 hour");
    // Another sweeper (or a claim archiving by reuse) holds two rows mid-transaction.
    holder.exec("BEGIN");
    holder.exec("SELECT 1 FROM idem.keys WHERE idem_key IN ('k1', 'k4') FOR UPDATE");
    c.exec("SET statement_timeout = '5s'");  // a sweeper that waited would fail here
    QCOMPARE(store::sweepArchiveBatch(c, 100, retentions()), 4);
    holder.exec("COMMIT");
    QCOMPARE(store::sweepArchiveBatch(c, 100, retentions()), 2);
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive"), 6LL);
  }

  void twoSweepersArchiveEachKeyExactlyOnce() {
    test::TestDatabase db("sweeper_parallel");
    auto c = db.connect();
    constexpr int kKeys = 2000;
    c.exec(
        "INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status,"
        "                       resource_ref, expires_at)"
        " SELECT 'acct_' || (i % 7), 'POST /v1/payments', 'key_' || i, 1 + i % 3, 'payments', '\\x01'::bytea,"
        "        'done', 201, 'pay_' || i, now() - (i % 50) * interval '1 second'"
        "   FROM generate_series(1, $1::integer) i",
        {kKeys});
    const std::string fingerprintBefore =
        c.exec("SELECT md5(string_agg(tenant || endpoint || idem_key || generation || resource_ref, ','"
               "           ORDER BY tenant, idem_key)) AS h FROM idem.keys")
            .str(0, "h");

    std::array<store::SweepReport, 2> reports;
    std::array<std::string, 2> errors;
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        try {
          pg::Connection own(db.conninfo());
          store::SweepOptions o;
          o.batch = 37;
          o.retentions = retentions();
          // Keep sweeping until the table is empty: a short batch may only mean the other
          // sweeper held the rest.
          for (int round = 0; round < 100; ++round) {
            auto r = store::sweep(own, o);
            reports[static_cast<std::size_t>(t)].archived += r.archived;
            reports[static_cast<std::size_t>(t)].batches += r.batches;
            if (own.exec("SELECT count(*) AS n FROM idem.keys").integer(0, "n") == 0) break;
          }
        } catch (const std::exception& e) {
          errors[static_cast<std::size_t>(t)] = e.what();
        }
      });
    }
    for (auto& th : threads) th.join();
    QVERIFY2(errors[0].empty(), errors[0].c_str());
    QVERIFY2(errors[1].empty(), errors[1].c_str());

    QCOMPARE(reports[0].archived + reports[1].archived, static_cast<long long>(kKeys));
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.keys"), 0LL);
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive"), static_cast<long long>(kKeys));
    QCOMPARE(scalar(c, "SELECT count(DISTINCT (tenant, endpoint, idem_key, generation)) AS n FROM idem.key_archive"),
             static_cast<long long>(kKeys));
    const std::string fingerprintAfter =
        c.exec("SELECT md5(string_agg(tenant || endpoint || idem_key || generation || resource_ref, ','"
               "           ORDER BY tenant, idem_key)) AS h FROM idem.key_archive")
            .str(0, "h");
    QCOMPARE(fingerprintAfter, fingerprintBefore);  // nothing lost, nothing changed
    qInfo("sweeper A archived %lld in %d batches, sweeper B %lld in %d batches", reports[0].archived,
          reports[0].batches, reports[1].archived, reports[1].batches);
  }

  void stopFlagEndsTheRunWithWorkLeft() {
    test::TestDatabase db("sweeper_stop");
    auto c = db.connect();
    insertKey(c, "k", "payments", "done", "-1 hour");
    std::atomic<bool> stop{true};
    store::SweepOptions o;
    o.retentions = retentions();
    o.stop = &stop;
    auto report = store::sweep(c, o);
    QCOMPARE(report.archived, 0LL);
    QCOMPARE(report.batches, 0);
    QVERIFY(!report.complete);
  }

  void dropsArchivedBodiesPastTheirTiersBodyRetention() {
    test::TestDatabase db("sweeper_bodies");
    auto c = db.connect();
    const char* archive =
        "INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status,"
        "                              resp_headers, resp_body, created_at, expires_at, archived_at, archived_by,"
        "                              purge_after)"
        " VALUES ('t', 'POST /v1/payments', $1, 1, $2, '\\x01'::bytea, 'done', 201, '[]'::jsonb,"
        "         convert_to('{\"card\":\"4242\"}', 'UTF8'), now() - $3::interval - interval '1 day',"
        "         now() - $3::interval, now() - $3::interval, 'sweeper', now() + interval '300 days')";
    c.exec(archive, {"k_old", "payments", "31 days"});    // past 30 d: body goes, row stays
    c.exec(archive, {"k_young", "payments", "29 days"});  // within 30 d: kept
    c.exec(archive, {"k_orders", "orders", "31 days"});   // orders name no body retention: kept
    for (int i = 0; i < 25; ++i)                          // more than one batch
      c.exec(archive, {"k_bulk_" + std::to_string(i), "payments", "40 days"});

    store::SweepOptions o;
    o.batch = 10;
    o.retentions = retentions();
    o.retentions.tiers[0].body = std::chrono::hours(24 * 30);
    auto report = store::sweep(c, o);
    QCOMPARE(report.bodiesDropped, 26LL);
    QCOMPARE(report.purged, 0LL);  // the rows stay for the audit
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive"), 28LL);
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive WHERE resp_body IS NULL"
                       " AND body_dropped_at > now() - interval '1 minute' AND resp_status = 201"),
             26LL);
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive WHERE resp_body IS NOT NULL"
                       " AND body_dropped_at IS NULL AND idem_key IN ('k_young', 'k_orders')"),
             2LL);
    // Run again: nothing left to drop, and a dropped body keeps the time it went.
    c.exec("UPDATE idem.key_archive SET body_dropped_at = body_dropped_at - interval '1 hour' WHERE idem_key = 'k_old'");
    QCOMPARE(store::sweep(c, o).bodiesDropped, 0LL);
    QCOMPARE(scalar(c, "SELECT count(*) AS n FROM idem.key_archive WHERE idem_key = 'k_old'"
                       " AND body_dropped_at < now() - interval '59 minutes'"),
             1LL);
    // The explanation says the body is gone.
    auto x = explain::explain(explain::loadByKey(c, "k_old"));
    QVERIFY(x.history.generations.at(0).bodyDropped);
    QVERIFY2(x.narrative.find("Its stored response body was dropped at ") != std::string::npos, x.narrative.c_str());
    QVERIFY(!explain::toJson(x)["generations"][0]["body_dropped_at"].is_null());
  }

  void bodyRetentionComesFromThePolicy() {
    auto r = store::retentionsFromPolicy(
        R"({"tiers":[{"name":"payments","archive_retention":"400d","body_retention":"30d"},{"name":"orders"}]})", "p.json");
    QVERIFY(r.tiers[0].body);
    QCOMPARE(r.tiers[0].body->count(), store::Millis(std::chrono::hours(24 * 30)).count());
    QVERIFY(!r.tiers[1].body);
    try {
      (void)store::retentionsFromPolicy(R"({"tiers":[{"name":"payments","body_retention":"soon"}]})", "p.json");
      QFAIL("a bad duration must be an error");
    } catch (const store::RetentionError& e) {
      QVERIFY2(std::string(e.what()).find("p.json: tiers[0].body_retention") != std::string::npos, e.what());
    }
  }

  void retentionsComeFromThePolicyInForce() {
    test::TestDatabase db("sweeper_policy");
    auto c = db.connect();
    auto none = store::retentionsInForce(c);
    QVERIFY(none.tiers.empty());
    QCOMPARE(none.fallback.count(), store::kDefaultArchiveRetention.count());

    const char* insert = "INSERT INTO idem.policies (sha256, document, effective_at) VALUES ($1, $2::jsonb, $3)";
    const char* choose = "INSERT INTO idem.policy_choices (version) VALUES ($1)";
    c.exec(insert, {"a", R"({"tiers":[{"name":"payments","archive_retention":"30d"}]})", "2026-01-01T00:00:00Z"});
    c.exec(insert, {"b",
                    R"({"tiers":[{"name":"payments","archive_retention":"400d"},{"name":"orders","archive_retention":"36h"},)"
                    R"({"name":"search"}]})",
                    "2026-02-01T00:00:00Z"});
    // Recorded is not in force: nothing is chosen yet.
    QVERIFY(store::retentionsInForce(c).tiers.empty());
    c.exec(choose, {2});
    auto r = store::retentionsInForce(c);
    QCOMPARE(static_cast<int>(r.tiers.size()), 3);
    QCOMPARE(r.tiers[0].tier, std::string("payments"));
    QCOMPARE(r.tiers[0].retention.count(), store::Millis(std::chrono::hours(24 * 400)).count());
    QCOMPARE(r.tiers[1].retention.count(), store::Millis(std::chrono::hours(36)).count());
    QCOMPARE(r.tiers[2].retention.count(), store::kDefaultArchiveRetention.count());  // the policy file's default
    QVERIFY2(r.source.find("policy version 2") != std::string::npos, r.source.c_str());
    QVERIFY(r.skipped.empty());

    // A newer row nobody chose changes nothing; a chosen one the sweeper cannot read is skipped,
    // said why, and the choice before it stays in force.
    c.exec(insert, {"c", R"({"tiers":[{"name":"payments","archive_retention":"forever"}]})", "2026-03-01T00:00:00Z"});
    QVERIFY2(store::retentionsInForce(c).source.find("policy version 2") != std::string::npos, "unchosen row followed");
    c.exec(choose, {3});
    r = store::retentionsInForce(c);
    QVERIFY2(r.source.find("policy version 2") != std::string::npos, r.source.c_str());
    QCOMPARE(static_cast<int>(r.skipped.size()), 1);
    QVERIFY2(r.skipped[0].find("policy version 3") != std::string::npos, r.skipped[0].c_str());
    QVERIFY2(r.skipped[0].find("tiers[0].archive_retention") != std::string::npos, r.skipped[0].c_str());

    // A second service's choice: a tier both name keeps the longer retention.
    c.exec("INSERT INTO idem.policy_choices (service, version) VALUES ('search', 1)");
    r = store::retentionsInForce(c);
    QCOMPARE(r.tiers[0].tier, std::string("payments"));
    QCOMPARE(r.tiers[0].retention.count(), store::Millis(std::chrono::hours(24 * 400)).count());
    QVERIFY2(r.source.find("policy version 1 for service search") != std::string::npos, r.source.c_str());
  }

  void cliSweepsWithThePolicyFileOrTheStore() {
    test::TestDatabase db("sweeper_cli");
    {
      auto c = db.connect();
      insertKey(c, "k1", "payments", "done", "-1 hour");
      insertKey(c, "k2", "payments", "done", "-2 hours");
      insertKey(c, "k3", "payments", "done", "1 hour");
    }
    std::string out;
    QCOMPARE(test::runIdemctl({"sweep", "--db", db.conninfo(), "--batch", "1"}, &out), 0);
    QVERIFY2(out.find("archived 2 expired keys") != std::string::npos, out.c_str());
    QVERIFY2(out.find("built-in default") != std::string::npos, out.c_str());

    const std::string path = QDir::tempPath().toStdString() + "/idem_sweeper_policy_" +
                             std::to_string(QCoreApplication::applicationPid()) + ".json";
    {
      std::ofstream f(path);
      // (No raw string here: moc misreads a "//" inside one.)
      f << "{\n"
           "  // comments are allowed in policy files\n"
           "  \"docs_url\": \"https://api.example.com/idempotency\",\n"
           "  \"tenant_header\": \"Account-Id\",\n"
           "  \"tiers\": [\n"
           "    { \"name\": \"payments\", \"routes\": [\"POST /v1/payments\"], \"key_required\": true,\n"
           "      \"ttl\": \"24h\", \"lease\": \"30s\", \"on_expired\": \"execute\", \"on_conflict\": \"409\",\n"
           "      \"cache\": \"after-start\", \"fingerprint\": { \"mode\": \"json\" }, \"archive_retention\": \"90d\" }\n"
           "  ]\n"
           "}\n";
    }
    {
      auto c = db.connect();
      insertKey(c, "k4", "payments", "done", "-1 minute");
    }
    QCOMPARE(test::runIdemctl({"sweep", "--db", db.conninfo(), "--policy", path}, &out), 0);
    QVERIFY2(out.find("archived 1 expired key,") != std::string::npos, out.c_str());
    QVERIFY2(out.find("payments 90d") != std::string::npos, out.c_str());
    {
      auto c = db.connect();
      QVERIFY(c.exec("SELECT purge_after - archived_at = interval '90 days' AS ok FROM idem.key_archive"
                     " WHERE idem_key = 'k4'")
                  .boolean(0, "ok"));
    }
    std::remove(path.c_str());

    QCOMPARE(test::runIdemctl({"sweep", "--db", db.conninfo(), "--batch", "0"}, &out), 2);
    QVERIFY2(out.find("--batch") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"sweep", "--db", db.conninfo(), "--policy", "/nonexistent/policy.json"}, &out), 2);
    QCOMPARE(test::runIdemctl({"sweep", "--db", "host=/nonexistent-socket-dir port=1 dbname=x connect_timeout=2"}, &out),
             3);
  }
};

QTEST_GUILESS_MAIN(TestSweeper)
#include "tst_sweeper.moc"
