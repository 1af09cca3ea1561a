// Retention tiers against a crafted trace: rows inserted with SQL at explicit times, with the
// true offset of every retry written alongside in public.truth. The library's what-ifs,
// percentiles, storage, recommendation and flags are checked against direct SQL over that
// truth and over the tables' real size; `idemctl tiers --format json` against the library.
#include <QtTest>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/policy/policy.h"
#include "core/store/policystore.h"
#include "core/tiers/format.h"
#include "core/tiers/tiers.h"
#include "tests/support/testdb.h"

using namespace idem;
using namespace std::chrono_literals;
using tiers::Millis;

namespace {

// (Built with nlohmann::json: moc reads "//" inside a raw string as a comment.)
std::string policyText() {
  using nlohmann::json;
  const json tiers = json::array({
      {{"name", "pay"}, {"routes", {"POST /v1/pay"}}, {"ttl", "24h"}, {"lease", "30s"}, {"on_expired", "execute"},
       {"reference_windows", {{"channel_retry", "72h"}, {"reconciliation", "48h"}}}},
      {{"name", "ord"}, {"routes", {"POST /v1/ord"}}, {"ttl", "30m"}, {"lease", "10s"}},
      {{"name", "hook"}, {"routes", {"POST /v1/hook"}}, {"ttl", "7d"}, {"on_expired", "reject"}},
      {{"name", "idle"}, {"routes", {"POST /v1/idle"}}, {"ttl", "2h"}, {"reference_windows", {{"client", "1h"}}}},
  });
  return json{{"docs_url", "https://docs.test/idempotency"}, {"tenant_header", "Account-Id"}, {"tiers", tiers}}
      .dump();
}

// The trace. t0 is now() to the second; every time is an offset from it.
//  pay  (24h, execute): 600 keys, one every 10 min from t0-9d. Replays of generation 1 at up to
//       23h59m; a 409 at +300ms for every 10th key; a 422 at +2h for every 25th. Every 50th key
//       came back 24h+i min later and was executed again (generation 2; generation 1 archived),
//       then replayed 5 s after that: measured from generation 2, so 5 s.
//  ord  (30m): 200 keys from t0-2d, two replays each within 29 minutes; every 20th key also
//       had a storm of 50 replays 90 s in, folded into one trace row (repeats = 50).
//  hook (7d, reject): 40 keys from t0-25d, a replay after a day; every 10th rejected at +8d.
const char* const kCraft = R"SQL(
CREATE TABLE public.truth (tier text, outcome text, at timestamptz, off_ms float8);
CREATE TABLE public.base AS SELECT date_trunc('second', now()) AS t0;

CREATE TABLE public.pay AS
SELECT i, b.t0 - interval '9 days' + i * interval '10 minutes' AS c,
       i % 50 = 0 AS late, make_interval(hours => 24, mins => i) AS late_off
  FROM public.base b, generate_series(1, 600) i;

INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status, resp_body,
                       created_at, completed_at, expires_at)
SELECT 't1', 'POST /v1/pay', 'pay-' || i, CASE WHEN late THEN 2 ELSE 1 END, 'pay', '\x01'::bytea, 'done', 201,
       convert_to(repeat('x', 100 + i % 200), 'UTF8'),
       c + CASE WHEN late THEN late_off ELSE interval '0' END,
       c + CASE WHEN late THEN late_off ELSE interval '0' END + interval '1 second',
       c + CASE WHEN late THEN late_off ELSE interval '0' END + interval '24 hours'
  FROM public.pay;
INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status,
                              resp_body, created_at, completed_at, expires_at, archived_at, archived_by, purge_after)
SELECT 't1', 'POST /v1/pay', 'pay-' || i, 1, 'pay', '\x01'::bytea, 'done', 201,
       convert_to(repeat('y', 150), 'UTF8'), c, c + interval '1 second', c + interval '24 hours',
       c + late_off, 'reuse', c + interval '400 days'
  FROM public.pay WHERE late;

INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, latency_ms)
SELECT c + interval '200 milliseconds', 't1', 'POST /v1/pay', 'pay-' || i, 1, 'pay', 'executed', 200
  FROM public.pay;

-- executed again after expiry: written at completion (1.5 s after it arrived)
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, latency_ms)
SELECT c + late_off + interval '1500 milliseconds', 't1', 'POST /v1/pay', 'pay-' || i, 2, 'pay',
       'executed_after_expiry', 1500
  FROM public.pay WHERE late;
INSERT INTO public.truth
SELECT 'pay', 'executed_after_expiry', c + late_off + interval '1500 milliseconds',
       extract(epoch FROM late_off) * 1000 FROM public.pay WHERE late;

INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)
SELECT c + late_off + interval '5 seconds', 't1', 'POST /v1/pay', 'pay-' || i, 2, 'pay', 'replayed'
  FROM public.pay WHERE late;
INSERT INTO public.truth
SELECT 'pay', 'replayed', c + late_off + interval '5 seconds', 5000 FROM public.pay WHERE late;

CREATE TABLE public.pay_replays AS
SELECT p.i, p.c, make_interval(mins => (p.i * 37 + j * 101) % 1440, secs => j) AS off
  FROM public.pay p, generate_series(1, 2) j WHERE j <= p.i % 3;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)
SELECT c + off, 't1', 'POST /v1/pay', 'pay-' || i, 1, 'pay', 'replayed' FROM public.pay_replays;
INSERT INTO public.truth SELECT 'pay', 'replayed', c + off, extract(epoch FROM off) * 1000 FROM public.pay_replays;

INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)
SELECT c + interval '300 milliseconds', 't1', 'POST /v1/pay', 'pay-' || i, 1, 'pay', 'conflict'
  FROM public.pay WHERE i % 10 = 1;
INSERT INTO public.truth SELECT 'pay', 'conflict', c + interval '300 milliseconds', 300 FROM public.pay WHERE i % 10 = 1;

INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)
SELECT c + interval '2 hours', 't1', 'POST /v1/pay', 'pay-' || i, 1, 'pay', 'mismatch'
  FROM public.pay WHERE i % 25 = 3;
INSERT INTO public.truth SELECT 'pay', 'mismatch', c + interval '2 hours', 7200000 FROM public.pay WHERE i % 25 = 3;

-- orders
CREATE TABLE public.ord AS
SELECT i, b.t0 - interval '2 days' + i * interval '5 minutes' AS c FROM public.base b, generate_series(1, 200) i;
INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status, resp_body,
                       created_at, completed_at, expires_at)
SELECT 't2', 'POST /v1/ord', 'ord-' || i, 1, 'ord', '\x02'::bytea, 'done', 201, convert_to('{"id":"ord"}', 'UTF8'),
       c, c + interval '1 second', c + interval '30 minutes'
  FROM public.ord;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, latency_ms)
SELECT c + interval '50 milliseconds', 't2', 'POST /v1/ord', 'ord-' || i, 1, 'ord', 'executed', 50 FROM public.ord;
CREATE TABLE public.ord_replays AS
SELECT o.i, o.c, make_interval(mins => (o.i * 13 + j * 7) % 29, secs => j) AS off
  FROM public.ord o, generate_series(1, 2) j;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)
SELECT c + off, 't2', 'POST /v1/ord', 'ord-' || i, 1, 'ord', 'replayed' FROM public.ord_replays;
INSERT INTO public.truth SELECT 'ord', 'replayed', c + off, extract(epoch FROM off) * 1000 FROM public.ord_replays;
-- a retry storm on every 20th order, folded by the trace writer into one row of 50 replays
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, repeats, last_at)
SELECT c + interval '90 seconds', 't2', 'POST /v1/ord', 'ord-' || i, 1, 'ord', 'replayed', 50,
       c + interval '90.08 seconds'
  FROM public.ord WHERE i % 20 = 0;
INSERT INTO public.truth SELECT 'ord', 'replayed', c + interval '90 seconds', 90000
  FROM public.ord, generate_series(1, 50) WHERE i % 20 = 0;

-- webhooks: expired keys stay (not swept); a late retry is rejected
CREATE TABLE public.hook AS
SELECT i, b.t0 - interval '25 days' + i * interval '6 hours' AS c FROM public.base b, generate_series(1, 40) i;
INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status, resp_body,
                       created_at, completed_at, expires_at)
SELECT 't3', 'POST /v1/hook', 'hook-' || i, 1, 'hook', '\x03'::bytea, 'done', 200, NULL,
       c, c + interval '1 second', c + interval '7 days'
  FROM public.hook;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, latency_ms)
SELECT c + interval '10 milliseconds', 't3', 'POST /v1/hook', 'hook-' || i, 1, 'hook', 'executed', 10 FROM public.hook;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)
SELECT c + interval '1 day', 't3', 'POST /v1/hook', 'hook-' || i, 1, 'hook', 'replayed' FROM public.hook;
INSERT INTO public.truth SELECT 'hook', 'replayed', c + interval '1 day', 86400000 FROM public.hook;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)
SELECT c + interval '8 days', 't3', 'POST /v1/hook', 'hook-' || i, 1, 'hook', 'rejected_expired'
  FROM public.hook WHERE i % 10 = 0;
INSERT INTO public.truth
SELECT 'hook', 'rejected_expired', c + interval '8 days', 8 * 86400000 FROM public.hook WHERE i % 10 = 0;
)SQL";

bool near(double a, double b, double rel = 1e-9) { return std::fabs(a - b) <= rel * std::max(1.0, std::fabs(b)); }

void recordPolicy(pg::Connection& conn, const std::string& text) {
  (void)store::recordPolicy(conn, policy::parsePolicy(text, "tiers-test.json"));
}

}  // namespace

class TestTiers : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;

  tiers::Report analyse(Millis since = 30 * 24h, std::map<std::string, Millis> candidates = {}) {
    auto conn = m_db->connect();
    tiers::Options o;
    o.since = since;
    o.candidates = std::move(candidates);
    return tiers::analyse(conn, o);
  }

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("tiers");
    auto conn = m_db->connect();
    recordPolicy(conn, policyText());
    conn.script(kCraft);
    // Settles the tables' sizes (visibility and free-space maps) so that autovacuum does not
    // change pg_total_relation_size between two measurements.
    conn.exec("VACUUM ANALYZE idem.keys");
    conn.exec("VACUUM ANALYZE idem.key_archive");
  }

  // ---- pure parts ----

  void roundUp_data() {
    QTest::addColumn<qint64>("in");
    QTest::addColumn<qint64>("out");
    QTest::newRow("zero") << qint64(0) << qint64(1000);
    QTest::newRow("ms") << qint64(1) << qint64(1000);
    QTest::newRow("seconds") << qint64(61'001) << qint64(62'000);
    QTest::newRow("minutes") << qint64(125'000) << qint64(180'000);
    QTest::newRow("hours") << qint64(88'380'000) << qint64(90'000'000);        // 24h33m -> 25h
    QTest::newRow("exact 72h") << qint64(259'200'000) << qint64(259'200'000);
    QTest::newRow("days") << qint64(8LL * 86'400'000 + 1) << qint64(9LL * 86'400'000);
  }
  void roundUp() {
    QFETCH(qint64, in);
    QFETCH(qint64, out);
    QCOMPARE(tiers::roundUpToPolicyUnit(Millis(in)).count(), out);
  }

  void ladderAscends() {
    const auto& l = tiers::ttlLadder();
    QVERIFY(l.size() > 30);
    QVERIFY(std::is_sorted(l.begin(), l.end()));
    QCOMPARE(l.front(), Millis(1s));
  }

  void humanNumbers() {
    QCOMPARE(tiers::humanBytes(0), std::string("0 B"));
    QCOMPARE(tiers::humanBytes(1536), std::string("1.50 kB"));
    QCOMPARE(tiers::humanBytes(12.5 * 1024 * 1024), std::string("12.5 MB"));
    QCOMPARE(tiers::humanPerMillion(20000), std::string("20,000"));
    QCOMPARE(tiers::humanPerMillion(12.5), std::string("12.5"));
    QCOMPARE(tiers::humanPercent(0), std::string("0 %"));
    QCOMPARE(tiers::humanPercent(0.0041), std::string("0.41 %"));
    QCOMPARE(tiers::humanPercent(0.00000001), std::string("< 0.01 %"));
  }

  // ---- against the crafted trace ----

  void reportHasEveryTierOfThePolicy() {
    const auto r = analyse();
    QCOMPARE(r.tiers.size(), std::size_t(4));
    QCOMPARE(r.tiers[0].tier.name, std::string("pay"));
    QVERIFY(r.policyVersion >= 1);
    QCOMPARE(r.tier("pay")->retries.operations, 600LL);
    QCOMPARE(r.tier("ord")->retries.operations, 200LL);
    QCOMPARE(r.tier("idle")->retries.retries, 0LL);
    QVERIFY(!r.tier("idle")->retries.offsets);
  }

  void percentilesMatchDirectSql_data() {
    QTest::addColumn<QString>("tier");
    QTest::addColumn<qint64>("sinceMs");
    for (const char* t : {"pay", "ord", "hook"}) {
      QTest::newRow(QByteArray(t) + " 30d") << QString::fromLatin1(t) << qint64(30LL * 86'400'000);
      QTest::newRow(QByteArray(t) + " 3d") << QString::fromLatin1(t) << qint64(3LL * 86'400'000);
    }
  }
  void percentilesMatchDirectSql() {
    QFETCH(QString, tier);
    QFETCH(qint64, sinceMs);
    const auto r = analyse(Millis(sinceMs));
    const auto* t = r.tier(tier.toStdString());
    QVERIFY(t);
    auto conn = m_db->connect();
    auto d = conn.exec(
        "SELECT count(*) AS n, percentile_cont(0.5) WITHIN GROUP (ORDER BY off_ms) AS p50,"
        " percentile_cont(0.9) WITHIN GROUP (ORDER BY off_ms) AS p90,"
        " percentile_cont(0.99) WITHIN GROUP (ORDER BY off_ms) AS p99,"
        " percentile_cont(0.999) WITHIN GROUP (ORDER BY off_ms) AS p999, max(off_ms) AS pmax,"
        " count(*) FILTER (WHERE outcome = 'replayed') AS replayed"
        " FROM public.truth WHERE tier = $1 AND at >= now() - $2::interval",
        {tier.toStdString(), policy::toInterval(Millis(sinceMs))});
    QCOMPARE(t->retries.retries, d.integer(0, "n"));
    QCOMPARE(t->retries.byOutcome.at("replayed"), d.integer(0, "replayed"));
    if (d.integer(0, "n") == 0) {
      QVERIFY(!t->retries.offsets);
      return;
    }
    QVERIFY(t->retries.offsets);
    const auto& o = *t->retries.offsets;
    QVERIFY2(near(o.p50, d.real(0, "p50")), qPrintable(QString::number(o.p50)));
    QVERIFY(near(o.p90, d.real(0, "p90")));
    QVERIFY(near(o.p99, d.real(0, "p99")));
    QVERIFY(near(o.p999, d.real(0, "p999")));
    QVERIFY(near(o.max, d.real(0, "pmax")));
  }

  void whatIfMatchesDirectSql_data() {
    QTest::addColumn<QString>("tier");
    QTest::addColumn<qint64>("ttlMs");
    const qint64 ttls[] = {300, 1000, 5000, 1'234'567, 1'800'000, 7'200'000, 86'400'000, 88'000'000,
                           91'000'000, 259'200'000, 604'800'000, 691'200'000, 864'000'000};
    for (const char* t : {"pay", "ord", "hook", "idle"})
      for (qint64 ttl : ttls) QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(QLatin1String(t)).arg(ttl)))
                                  << QString::fromLatin1(t) << ttl;
  }
  void whatIfMatchesDirectSql() {
    QFETCH(QString, tier);
    QFETCH(qint64, ttlMs);
    const Millis since = 30 * 24h;
    const auto r = analyse(since);
    const auto* t = r.tier(tier.toStdString());
    QVERIFY(t);
    auto conn = m_db->connect();
    const auto w = tiers::whatIf(conn, *t, Millis(ttlMs), since);

    auto d = conn.exec(
        "SELECT (SELECT count(*) FROM public.truth WHERE tier = $1 AND at >= now() - $3::interval) AS retries,"
        " (SELECT count(*) FROM public.truth WHERE tier = $1 AND at >= now() - $3::interval AND off_ms >= $2::float8)"
        "   AS late,"
        " (SELECT count(*) FROM idem.events WHERE tier = $1 AND outcome = 'executed' AND at >= now() - $3::interval)"
        "   AS ops,"
        " pg_total_relation_size('idem.keys')::float8"
        "   * coalesce((SELECT sum(pg_column_size(k.*)) FROM idem.keys k WHERE k.tier = $1), 0)"
        "   / (SELECT sum(pg_column_size(k.*)) FROM idem.keys k) AS live_bytes,"
        " pg_total_relation_size('idem.key_archive')::float8"
        "   * coalesce((SELECT sum(pg_column_size(a.*)) FROM idem.key_archive a WHERE a.tier = $1), 0)"
        "   / (SELECT sum(pg_column_size(a.*)) FROM idem.key_archive a) AS archive_bytes",
        {tier.toStdString(), std::to_string(ttlMs), policy::toInterval(since)});
    const long long retries = d.integer(0, "retries"), late = d.integer(0, "late"), ops = d.integer(0, "ops");
    const double missRate = retries ? double(late) / double(retries) : 0;
    const double perMillion = ops ? double(late) * 1e6 / double(ops) : 0;
    const double storage =
        d.real(0, "live_bytes") * double(ttlMs) / double(t->tier.ttl.count()) + d.real(0, "archive_bytes");

    QCOMPARE(w.retries, retries);
    QCOMPARE(w.afterExpiry, late);
    QVERIFY(near(w.missRate, missRate));
    QVERIFY(near(w.perMillion, perMillion));
    if (t->tier.onExpired == policy::OnExpired::Execute) {
      QVERIFY(near(w.duplicatesPerMillion, perMillion));
      QCOMPARE(w.rejectionsPerMillion, 0.0);
    } else {
      QCOMPARE(w.duplicatesPerMillion, 0.0);
      QVERIFY(near(w.rejectionsPerMillion, perMillion));
    }
    // pg_column_size of a whole row differs by a few bytes with the plan that formed it (a
    // filtered scan vs a grouped one), hence 0.1 % rather than exact for the bytes.
    QVERIFY2(near(w.storageBytes, storage, 1e-3),
             qPrintable(QStringLiteral("%1 vs %2").arg(w.storageBytes).arg(storage)));
    // The curve computed in the report holds the same numbers wherever it has this TTL.
    if (const auto* p = t->pointAt(Millis(ttlMs))) {
      QCOMPARE(p->afterExpiry, w.afterExpiry);
      QVERIFY(near(p->storageBytes, w.storageBytes));
    }
  }

  void curveIsMonotonic() {
    const auto r = analyse();
    for (const auto& t : r.tiers) {
      QVERIFY(t.curve.size() >= tiers::ttlLadder().size());
      for (std::size_t i = 1; i < t.curve.size(); ++i) {
        QVERIFY(t.curve[i].ttl > t.curve[i - 1].ttl);
        QVERIFY(t.curve[i].afterExpiry <= t.curve[i - 1].afterExpiry);
        QVERIFY(t.curve[i].storageBytes >= t.curve[i - 1].storageBytes);
      }
      QVERIFY(t.pointAt(t.tier.ttl));
      QVERIFY(t.pointAt(t.recommendation.ttl));
    }
  }

  void offsetsFollowTheGenerationRule() {
    // pay: the 12 late retries are measured from generation 1 (24h+i min), the replays of
    // generation 2 from generation 2 (5 s): at the 24h TTL exactly the 12 late ones miss.
    const auto r = analyse();
    const auto* pay = r.tier("pay");
    QCOMPARE(pay->current.afterExpiry, 12LL);
    QCOMPARE(pay->retries.byOutcome.at("executed_after_expiry"), 12LL);
    QCOMPARE(pay->retries.offsets->max, double((24 * 60 + 600) * 60'000LL));
    QVERIFY(near(pay->current.duplicatesPerMillion, 12.0 * 1e6 / 600.0));
    QCOMPARE(r.tier("ord")->current.afterExpiry, 0LL);
    QCOMPARE(r.tier("hook")->current.afterExpiry, 4LL);
  }

  void recommendationCoversP999AndWindows() {
    const auto r = analyse();
    for (const auto& t : r.tiers) {
      const auto& rec = t.recommendation;
      if (t.retries.offsets) {
        QVERIFY2(double(rec.ttl.count()) >= t.retries.offsets->p999, t.tier.name.c_str());
        QVERIFY2(double(rec.ttl.count()) > t.retries.offsets->p999, t.tier.name.c_str());
        // percentile_cont interpolates: at most the one retry above p99.9 may be left out.
        QVERIFY(rec.cost.missRate <= 0.001 || rec.cost.afterExpiry <= 1);
      }
      if (rec.made)
        for (const auto& [name, window] : t.tier.referenceWindows) QVERIFY(rec.ttl >= window);
      if (rec.made) QVERIFY(rec.ttl >= t.tier.lease);
      QVERIFY(!rec.because.empty());
    }
    // pay: p99.9 lies among the late retries (~33 h) but the channel's 72 h window binds.
    QCOMPARE(r.tier("pay")->recommendation.ttl, Millis(72h));
    QVERIFY(r.tier("pay")->recommendation.because.find("channel_retry") != std::string::npos);
    QCOMPARE(r.tier("pay")->recommendation.cost.afterExpiry, 0LL);
    // ord: its retries end before 29 min; the smallest covering TTL is shorter than 30m.
    const auto* ord = r.tier("ord");
    QCOMPARE(ord->recommendation.ttl, tiers::roundUpToPolicyUnit(Millis(static_cast<long long>(
                                          std::ceil(ord->retries.offsets->p999)))));
    QVERIFY(ord->recommendation.ttl <= 30min);
    QVERIFY(ord->recommendation.cost.storageBytes <= ord->current.storageBytes);
    // hook: the rejected retries at 8 days are more than 0.1 %; a TTL of exactly 8 days would
    // still expire the key as they arrive, so 9 days (whole days above a week).
    QCOMPARE(r.tier("hook")->recommendation.ttl, Millis(9 * 24h));
    QCOMPARE(r.tier("hook")->recommendation.cost.afterExpiry, 0LL);
    // idle: no retries observed, so no recommendation (its 1h window alone would cut the 2h TTL
    // on no evidence): the TTL in force stays.
    QVERIFY(!r.tier("idle")->recommendation.made);
    QCOMPARE(r.tier("idle")->recommendation.ttl, Millis(2h));
  }

  void flags() {
    const auto r = analyse();
    const auto* pay = r.tier("pay");
    QVERIFY(pay->flagged());
    QCOMPARE(pay->flags.size(), std::size_t(3));  // retries, channel_retry (72h) and reconciliation (48h)
    bool retries = false, channel = false, reconciliation = false;
    for (const auto& f : pay->flags) {
      retries = retries || f.find("retries outrun the TTL") != std::string::npos;
      channel = channel || f.find("channel_retry (3 days)") != std::string::npos;
      reconciliation = reconciliation || f.find("reconciliation") != std::string::npos;
    }
    QVERIFY(retries);
    QVERIFY(channel);
    QVERIFY(reconciliation);
    QVERIFY(!r.tier("ord")->flagged());
    QVERIFY(!r.tier("idle")->flagged());
    const auto* hook = r.tier("hook");
    QVERIFY(hook->flagged());
    QVERIFY(hook->flags.front().find("rejected with 422") != std::string::npos);
  }

  void candidateBecomesProposed() {
    const auto r = analyse(30 * 24h, {{"pay", 48h}});
    const auto* pay = r.tier("pay");
    QVERIFY(pay->proposedFromCandidate);
    QCOMPARE(pay->proposed.ttl, Millis(48h));
    QVERIFY(!r.tier("ord")->proposedFromCandidate);
    QCOMPARE(r.tier("ord")->proposed.ttl, r.tier("ord")->recommendation.ttl);
  }

  void cliPrintsTheLibrarysNumbers() {
    std::string out;
    const int rc = test::runIdemctl({"tiers", "--db", m_db->conninfo(), "--since", "30d", "--ttl", "pay=48h",
                                     "ord=1h", "--format", "json"},
                                    &out);
    QVERIFY2(rc == 0, out.c_str());
    auto cli = nlohmann::json::parse(out);
    auto lib = tiers::toJson(analyse(30 * 24h, {{"pay", 48h}, {"ord", 1h}}));
    cli.erase("generated_at");
    lib.erase("generated_at");
    QVERIFY2(cli == lib, (cli.dump(1) + "\n---\n" + lib.dump(1)).substr(0, 4000).c_str());
    QCOMPARE(cli["tiers"][0]["proposed"]["ttl"].get<std::string>(), std::string("2d"));

    QVERIFY(test::runIdemctl({"tiers", "--db", m_db->conninfo(), "--format", "markdown"}, &out) == 0);
    QVERIFY(out.find("| pay |") != std::string::npos);
    QVERIFY(out.find("too short") != std::string::npos);
    QVERIFY(test::runIdemctl({"tiers", "--db", m_db->conninfo()}, &out) == 0);
    QVERIFY(out.find("[TOO SHORT]") != std::string::npos);
  }

  void cliRejectsBadInput() {
    std::string out;
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_db->conninfo(), "--ttl", "pay"}, &out), 2);
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_db->conninfo(), "--ttl", "pay=soon"}, &out), 2);
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_db->conninfo(), "--ttl", "nosuch=1h"}, &out), 2);
    QVERIFY(out.find("has no tier \"nosuch\"") != std::string::npos);
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_db->conninfo(), "--format", "xml"}, &out), 2);
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_db->conninfo(), "--since", "-1d"}, &out), 2);
  }

  void noPolicyIsSaid() {
    test::TestDatabase empty("tiers_empty");
    auto conn = empty.connect();
    QVERIFY_THROWS_EXCEPTION(tiers::NoPolicy, (void)tiers::analyse(conn, {}));
    std::string out;
    QCOMPARE(test::runIdemctl({"tiers", "--db", empty.conninfo()}, &out), 1);
    QVERIFY(out.find("no policy") != std::string::npos);
  }

  // The storage estimate predicts what the tables will really take: measured on 3,000 rows,
  // priced for 10× the TTL (so 10× the rows), then 27,000 more rows are inserted.
  void storageWithinTenPercentOfRealSize() {
    test::TestDatabase db("tiers_storage");
    auto conn = db.connect();
    recordPolicy(conn, nlohmann::json{{"docs_url", "https://docs.test/idempotency"},
                                      {"tiers", {{{"name", "bulk"}, {"routes", {"POST /v1/bulk"}}, {"ttl", "1h"}}}}}
                           .dump());
    const char* insert =
        "INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status,"
        " resp_headers, resp_body, resource_ref, request_id, created_at, completed_at, expires_at)"
        " SELECT 'acct_' || (i % 97), 'POST /v1/bulk', md5(i::text) || '-' || i, 1, 'bulk',"
        "  sha256(i::text::bytea), 'done', 201, '{\"Content-Type\":\"application/json\"}'::jsonb,"
        "  convert_to('{\"id\":\"pay_' || md5(i::text) || '\",\"amount\":' || (i * 7 % 100000) ||"
        "   ',\"currency\":\"usd\",\"status\":\"succeeded\"}', 'UTF8'),"
        "  'pay_' || md5(i::text), 'req_' || i, now(), now(), now() + interval '1 hour'"
        " FROM generate_series($1::int, $2::int) i";
    conn.exec(insert, {1, 3000});
    tiers::Options o;
    const auto before = tiers::analyse(conn, o);
    const auto* bulk = before.tier("bulk");
    QVERIFY(bulk);
    QCOMPARE(std::llround(bulk->storage.liveRows), 3000LL);
    QVERIFY(bulk->storage.avgRowBytes > 100);
    const auto predicted = tiers::evaluate(bulk->tier, bulk->retries, bulk->storage, 10h, 0);

    conn.exec(insert, {3001, 30000});
    const double real = conn.exec("SELECT pg_total_relation_size('idem.keys')::float8 + "
                                  "pg_total_relation_size('idem.key_archive')::float8 AS b")
                            .real(0, "b");
    const double error = std::fabs(predicted.storageBytes - real) / real;
    QVERIFY2(error < 0.10, qPrintable(QStringLiteral("predicted %1, real %2 (%3 %)")
                                          .arg(predicted.storageBytes)
                                          .arg(real)
                                          .arg(error * 100)));
    // Measured again on the full table: rows exact, bytes the table's (the empty archive aside).
    const auto after = tiers::analyse(conn, o);
    QCOMPARE(std::llround(after.tier("bulk")->storage.liveRows), 30000LL);
    QVERIFY(std::fabs(after.tier("bulk")->current.storageBytes - real) / real < 0.10);

    // Archive half of them: the archive's estimate follows its own table.
    conn.exec(
        "WITH moved AS (DELETE FROM idem.keys WHERE split_part(idem_key, '-', 2)::int % 2 = 0 RETURNING *)"
        " INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, fingerprint, state,"
        "  resp_status, resp_headers, resp_body, resource_ref, request_id, created_at, completed_at, expires_at,"
        "  archived_by, purge_after)"
        " SELECT tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status, resp_headers,"
        "  resp_body, resource_ref, request_id, created_at, completed_at, expires_at, 'sweeper', now() + interval"
        "  '400 days' FROM moved");
    const auto archived = tiers::analyse(conn, o);
    const double archiveReal =
        conn.exec("SELECT pg_total_relation_size('idem.key_archive')::float8 AS b").real(0, "b");
    QCOMPARE(std::llround(archived.tier("bulk")->storage.archiveRows), 15000LL);
    QVERIFY(std::fabs(archived.tier("bulk")->storage.archiveBytes - archiveReal) / archiveReal < 0.10);

    // The stored bodies' share of the archive (what a body_retention would drop) is the share
    // the bodies take of the archived rows, and nothing once the sweeper has dropped them.
    const auto& withBodies = archived.tier("bulk")->storage;
    const double share = conn.exec("SELECT sum(pg_column_size(resp_body))::float8 / sum(pg_column_size(a.*))::float8"
                                   " AS s FROM idem.key_archive a")
                             .real(0, "s");
    QVERIFY(share > 0.05 && share < 0.95);
    QVERIFY2(std::fabs(withBodies.archiveBodyBytes / withBodies.archiveBytes - share) < 0.05,
             qPrintable(QStringLiteral("estimated %1 of the archive, measured %2")
                            .arg(withBodies.archiveBodyBytes / withBodies.archiveBytes)
                            .arg(share)));
    // A body retention to try: a quarter of the archive was archived 10 days ago, the rest 100
    // days ago. Keeping bodies 30 days keeps the recent quarter's; 7 days keeps none.
    conn.exec("UPDATE idem.key_archive SET archived_at = now() - CASE WHEN split_part(idem_key, '-', 2)::int % 8 = 0"
              " THEN interval '10 days' ELSE interval '100 days' END");
    const auto aged = tiers::analyse(conn, o);
    const auto& agedBulk = *aged.tier("bulk");
    const auto shares = conn.exec(
        "SELECT sum(pg_column_size(resp_body))::float8 / sum(pg_column_size(a.*))::float8 AS bodies,"
        " (sum(pg_column_size(resp_body)) FILTER (WHERE archived_at >= now() - interval '30 days'))::float8"
        "  / sum(pg_column_size(a.*))::float8 AS recent FROM idem.key_archive a");
    const double bodies = shares.real(0, "bodies"), recent = shares.real(0, "recent");
    QVERIFY(recent > 0.1 * bodies && recent < 0.4 * bodies);
    auto close = [](double got, double want) { return std::fabs(got - want) / want < 0.05; };
    const auto keep30 = tiers::archiveBytesKeepingBodies(agedBulk, tiers::Millis(24h * 30));
    QVERIFY(keep30);
    QVERIFY2(close(*keep30, agedBulk.storage.archiveBytes * (1 - bodies + recent)),
             qPrintable(QStringLiteral("keeping bodies 30 days: %1 of the archive, measured %2")
                            .arg(*keep30 / agedBulk.storage.archiveBytes)
                            .arg(1 - bodies + recent)));
    const auto keep7 = tiers::archiveBytesKeepingBodies(agedBulk, tiers::Millis(24h * 7));
    QVERIFY(keep7);
    QVERIFY(close(*keep7, agedBulk.storage.archiveBytes * (1 - bodies)));
    // Bodies are kept as long as the rows (400 days) now: a longer age has nothing to say.
    QVERIFY(!tiers::archiveBytesKeepingBodies(agedBulk, tiers::Millis(24h * 730)));
    QVERIFY(!tiers::archiveBytesKeepingBodies(agedBulk, tiers::Millis(24h * 31)));  // not an age of the ladder

    conn.exec("UPDATE idem.key_archive SET resp_body = NULL, body_dropped_at = now()");
    const auto dropped = tiers::analyse(conn, o);
    QCOMPARE(dropped.tier("bulk")->storage.archiveBodyBytes, 0.0);
    QCOMPARE(std::llround(dropped.tier("bulk")->storage.archiveRows), 15000LL);  // the rows stay
  }
};

QTEST_GUILESS_MAIN(TestTiers)
#include "tst_tiers.moc"
