// The key store reads its results by column name, resolved and type-checked once per result:
// a store of another shape (a schema older or newer than the binary, a column of another type)
// is a clear error naming the column, never bytes read as something they are not. And the
// completion with side effects refuses a lost lease as a whole (the side effects roll back).
#include <QtTest>

#include "core/store/keystore.h"
#include "core/store/pool.h"
#include "core/store/recentkeys.h"
#include "tests/support/testdb.h"

using namespace idem;
using namespace std::chrono_literals;

namespace {

store::ClaimRequest request(const std::string& key, const std::string& fingerprint = "fp-1") {
  store::ClaimRequest q;
  q.scope = {"acct_1", "POST /v1/payments", key};
  q.fingerprint = fingerprint;
  q.tier = "payments";
  q.ttl = 24h;
  q.lease = 30s;
  q.archiveRetention = 24h * 400;
  q.requestId = "req_" + key;
  return q;
}

store::CompleteRequest completion(const std::string& key, const std::string& leaseToken) {
  store::CompleteRequest c;
  c.scope = {"acct_1", "POST /v1/payments", key};
  c.leaseToken = leaseToken;
  c.response.status = 201;
  c.response.headers = {{"content-type", "application/json"}, {"location", "/v1/payments/pay_1"}};
  c.response.body = R"({"id":"pay_1"})";
  c.requestId = "req_" + key;
  return c;
}

}  // namespace

class TestKeyColumns : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<store::Pool> m_pool;
  std::unique_ptr<store::RecentKeys> m_recent;
  std::unique_ptr<store::KeyStore> m_store;

  /// A key claimed and completed: its repeat is a replay.
  void storeDoneKey(const std::string& key) {
    auto claimed = m_store->claim(request(key));
    QCOMPARE(claimed.decision, store::Decision::Execute);
    QVERIFY(m_store->complete(completion(key, claimed.leaseToken)).stored);
  }

 private slots:
  void init() {
    m_db = std::make_unique<test::TestDatabase>("key_columns");
    m_pool = std::make_unique<store::Pool>(m_db->conninfo(), 2);
    m_recent = std::make_unique<store::RecentKeys>(1024);
    m_store = std::make_unique<store::KeyStore>(*m_pool, *m_recent);
  }
  void cleanup() {
    m_store.reset();
    m_recent.reset();
    m_pool.reset();
    m_db.reset();
  }

  void replayReadsTheStoredResponse() {
    storeDoneKey("k1");
    auto again = m_store->claim(request("k1"));
    QCOMPARE(again.decision, store::Decision::Replay);
    QVERIFY(again.stored);
    QCOMPARE(again.stored->status, 201);
    QCOMPARE(again.stored->headers, completion("k1", "").response.headers);
    QCOMPARE(again.stored->body, std::string(R"({"id":"pay_1"})"));
  }

  // The stored headers as json, not jsonb: jsonb's binary form starts with a version byte the
  // reader strips, json's does not. Read by position, the first byte of the headers went and the
  // replay came back without its headers.
  void aColumnOfAnotherTypeIsAClearError() {
    storeDoneKey("k1");
    {
      auto c = m_db->connect();
      c.exec("ALTER TABLE idem.keys ALTER COLUMN resp_headers TYPE json USING resp_headers::json");
    }
    try {
      auto r = m_store->claim(request("k1"));
      QFAIL(qPrintable(QStringLiteral("no error; the replay's headers read as %1 pairs")
                           .arg(r.stored ? r.stored->headers.size() : 0)));
    } catch (const pg::QueryError& e) {
      const std::string what = e.what();
      QVERIFY2(what.find("resp_headers") != std::string::npos, e.what());
      QVERIFY2(what.find("jsonb") != std::string::npos, e.what());
      QCOMPARE(e.sqlstate(), std::string("42804"));
    }
  }

  // idem.claim of another shape (here without retry_after_ms, as a schema not this binary's
  // might have it): the full decision names the missing column instead of failing somewhere
  // inside the library. The signature is the one the library calls (schema 25: with the service).
  void aMissingColumnIsAClearError() {
    storeDoneKey("k1");
    {
      auto c = m_db->connect();
      c.script(R"sql(
        ALTER FUNCTION idem.claim(text, text, text, bytea, text, integer, interval, interval, text, text, interval,
                                  text)
          RENAME TO claim_now;
        CREATE FUNCTION idem.claim(p_tenant text, p_endpoint text, p_key text, p_fingerprint bytea,
            p_tier text, p_policy_version integer, p_ttl interval, p_lease interval, p_on_expired text,
            p_request_id text, p_archive_retention interval, p_service text)
        RETURNS TABLE (decision text, generation integer, expires_at timestamptz, lease_token uuid,
                       lease_until timestamptz, resp_status integer, resp_headers jsonb, resp_body bytea)
        LANGUAGE sql AS $$
          SELECT c.decision, c.generation, c.expires_at, c.lease_token, c.lease_until, c.resp_status,
                 c.resp_headers, c.resp_body
            FROM idem.claim_now(p_tenant, p_endpoint, p_key, p_fingerprint, p_tier, p_policy_version, p_ttl,
                                p_lease, p_on_expired, p_request_id, p_archive_retention, p_service) c
        $$;)sql");
    }
    try {
      (void)m_store->claim(request("k1", "fp-other"));  // another payload: the full decision
      QFAIL("no error");
    } catch (const pg::QueryError& e) {
      QVERIFY2(std::string(e.what()).find("retry_after_ms") != std::string::npos, e.what());
      QCOMPARE(e.sqlstate(), std::string("42703"));
    }
  }

  void binaryBooleansAreParsed() {
    auto c = m_db->connect();
    auto r = c.execPrepared("bools", "SELECT true AS yes, false AS no, 'true'::text AS word", {},
                            /*binaryResults=*/true);
    QCOMPARE(r.binBoolAt(0, r.column("yes", pg::Type::Bool)), true);
    QCOMPARE(r.binBoolAt(0, r.column("no", pg::Type::Bool)), false);
    QVERIFY_THROWS_EXCEPTION(pg::QueryError, (void)r.column("word", pg::Type::Bool));
    QVERIFY_THROWS_EXCEPTION(pg::QueryError, (void)r.column("maybe", pg::Type::Bool));
  }

  // The completion with side effects, its lease lost: nothing of it stands, and the trace says so.
  void aLostLeaseRollsBackTheSideEffects() {
    auto claimed = m_store->claim(request("k2"));
    QCOMPARE(claimed.decision, store::Decision::Execute);
    auto c = m_db->connect();
    c.exec("CREATE TABLE public.side (key text)");
    const std::vector<store::SideStatement> side{{"INSERT INTO public.side VALUES ($1)", {"k2"}}};
    auto wrongLease = completion("k2", "00000000-0000-0000-0000-000000000000");
    QVERIFY(!m_store->complete(wrongLease, side).stored);
    QCOMPARE(c.exec("SELECT count(*) AS n FROM public.side").integer(0, "n"), 0LL);
    QCOMPARE(c.exec("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'k2' AND outcome = 'lease_lost' "
                    "AND detail LIKE '%rolled back%'")
                 .integer(0, "n"),
             1LL);
    // The connection went back to the pool usable: the right lease completes, side effect and all.
    auto done = m_store->complete(completion("k2", claimed.leaseToken), side);
    QVERIFY(done.stored);
    QCOMPARE(done.generation, 1);
    QCOMPARE(c.exec("SELECT count(*) AS n FROM public.side").integer(0, "n"), 1LL);
    QCOMPARE(c.exec("SELECT state FROM idem.keys WHERE idem_key = 'k2'").str(0, "state"), std::string("done"));
  }
};

QTEST_GUILESS_MAIN(TestKeyColumns)
#include "tst_keycolumns.moc"
