// Tiers on small samples (issue 29, item 6): the Wilson ranges against published values, and
// small seeded stores on which the old report overstated what it knew — one late retry in 66
// operations printed as "15,152 duplicates per million", five operations cut a 2-day TTL to
// 30 s, and the what-if at 48 h read 0 % although a 3-day reference window outruns it.
#include <QtTest>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/policy/policy.h"
#include "core/store/policystore.h"
#include "core/tiers/confidence.h"
#include "core/tiers/format.h"
#include "core/tiers/tiers.h"
#include "tests/support/testdb.h"

using namespace idem;
using namespace std::chrono_literals;
using tiers::Millis;

namespace {

// (Built with nlohmann::json: moc reads "//" inside a raw string as a comment.)
std::string policyText(const std::string& ttl, const nlohmann::json& windows) {
  nlohmann::json tier = {{"name", "pay"}, {"routes", {"POST /v1/pay"}}, {"ttl", ttl}, {"lease", "30s"},
                         {"on_expired", "execute"}};
  if (!windows.empty()) tier["reference_windows"] = windows;
  return nlohmann::json{{"docs_url", "https://docs.test/idempotency"}, {"tiers", {tier}}}.dump();
}

/// `operations` payments a minute apart from 5 days ago, each replayed 10 s in; the first
/// `late` of them came back `lateHours` later and were executed again (generation 2).
void seed(pg::Connection& conn, int operations, int late, int lateHours) {
  conn.exec("CREATE TABLE public.ops (i int, c timestamptz, late boolean)");
  conn.exec("INSERT INTO public.ops SELECT i, date_trunc('second', now()) - interval '5 days' + i * interval '1 minute',"
            " i <= $2::int FROM generate_series(1, $1::int) i",
            {operations, late});
  conn.exec("INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status,"
            " created_at, completed_at, expires_at)"
            " SELECT 't1', 'POST /v1/pay', 'pay-' || i, CASE WHEN late THEN 2 ELSE 1 END, 'pay', '\\x01'::bytea,"
            "  'done', 201, c + CASE WHEN late THEN make_interval(hours => $1::int) ELSE interval '0' END,"
            "  c + interval '1 second', c + interval '2 days' FROM public.ops",
            {lateHours});
  conn.exec("INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, fingerprint, state,"
            " resp_status, created_at, completed_at, expires_at, archived_at, archived_by, purge_after)"
            " SELECT 't1', 'POST /v1/pay', 'pay-' || i, 1, 'pay', '\\x01'::bytea, 'done', 201, c,"
            "  c + interval '1 second', c + interval '1 day', c + make_interval(hours => $1::int), 'reuse',"
            "  c + interval '400 days' FROM public.ops WHERE late",
            {lateHours});
  conn.exec("INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, latency_ms)"
            " SELECT c + interval '200 milliseconds', 't1', 'POST /v1/pay', 'pay-' || i, 1, 'pay', 'executed', 200"
            " FROM public.ops");
  conn.exec("INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)"
            " SELECT c + interval '10 seconds', 't1', 'POST /v1/pay', 'pay-' || i, 1, 'pay', 'replayed'"
            " FROM public.ops");
  conn.exec("INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, latency_ms)"
            " SELECT c + make_interval(hours => $1::int) + interval '1500 milliseconds', 't1', 'POST /v1/pay',"
            "  'pay-' || i, 2, 'pay', 'executed_after_expiry', 1500 FROM public.ops WHERE late",
            {lateHours});
}

tiers::Report analyse(const test::TestDatabase& db, std::map<std::string, Millis> candidates = {}) {
  auto conn = db.connect();
  tiers::Options o;
  o.candidates = std::move(candidates);
  return tiers::analyse(conn, o);
}

}  // namespace

class TestTiersSmall : public QObject {
  Q_OBJECT
  // 66 payments, one came back 30 h later into a 24 h TTL; the channel resends for 3 days.
  std::unique_ptr<test::TestDatabase> m_oneLate;
  // Five payments under a 2-day TTL, each replayed 10 s in; no reference window.
  std::unique_ptr<test::TestDatabase> m_five;

 private slots:
  void initTestCase() {
    m_oneLate = std::make_unique<test::TestDatabase>("tiers_one_late");
    auto a = m_oneLate->connect();
    (void)store::recordPolicy(a, policy::parsePolicy(policyText("24h", {{"channel_retry", "72h"}}), "p.json"));
    seed(a, 66, 1, 30);
    m_five = std::make_unique<test::TestDatabase>("tiers_five");
    auto b = m_five->connect();
    (void)store::recordPolicy(b, policy::parsePolicy(policyText("2d", nlohmann::json::object()), "p.json"));
    seed(b, 5, 0, 0);
  }

  // Newcombe (1998), "Two-sided confidence intervals for the single proportion", table I,
  // method 3 (Wilson score without continuity correction), to four decimals.
  void wilsonMatchesPublishedValues_data() {
    QTest::addColumn<qlonglong>("k");
    QTest::addColumn<qlonglong>("n");
    QTest::addColumn<double>("low");
    QTest::addColumn<double>("high");
    QTest::newRow("81/263") << 81LL << 263LL << 0.2553 << 0.3662;
    QTest::newRow("15/148") << 15LL << 148LL << 0.0624 << 0.1605;
    QTest::newRow("0/20") << 0LL << 20LL << 0.0 << 0.1611;
    QTest::newRow("1/29") << 1LL << 29LL << 0.0061 << 0.1718;
    QTest::newRow("29/29") << 29LL << 29LL << 0.8830 << 1.0;
  }
  void wilsonMatchesPublishedValues() {
    QFETCH(qlonglong, k);
    QFETCH(qlonglong, n);
    QFETCH(double, low);
    QFETCH(double, high);
    const auto i = tiers::wilson(k, n);
    QVERIFY2(std::fabs(i.low - low) < 5e-5, qPrintable(QString::number(i.low, 'f', 6)));
    QVERIFY2(std::fabs(i.high - high) < 5e-5, qPrintable(QString::number(i.high, 'f', 6)));
  }

  void wilsonEdges() {
    QCOMPARE(tiers::wilson(0, 0).high, 0.0);   // nothing measured: no range to claim
    QCOMPARE(tiers::wilson(5, 3).high, 1.0);   // more late retries than operations: capped at all
    QVERIFY(tiers::wilson(0, 1'000'000).high < 4e-6);  // a big clean sample says "rare", with a bound
  }

  void oneLateRetryIsARangeNotAFigure() {
    const auto r = analyse(*m_oneLate);
    const auto& now = r.tier("pay")->current;
    QCOMPARE(now.afterExpiry, 1LL);
    QCOMPARE(r.tier("pay")->retries.operations, 66LL);
    // 1 of 66: 0.27 % to 8.1 % of operations, so 2,680 to 80,959 per million.
    QVERIFY(std::fabs(now.perMillionRange.low - 2679.64) < 0.1);
    QVERIFY(std::fabs(now.perMillionRange.high - 80959.2) < 0.5);
    std::string out;
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_oneLate->conninfo()}, &out), 0);
    QVERIFY2(out.find("2,680–80,959 duplicates per million") != std::string::npos, out.c_str());
    QVERIFY2(out.find("Wilson") != std::string::npos, out.c_str());  // the rule is said
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_oneLate->conninfo(), "--format", "json"}, &out), 0);
    const auto j = nlohmann::json::parse(out);
    QCOMPARE(j["min_retries_to_recommend"].get<long long>(), tiers::kMinRetriesToRecommend);
    const auto range = j["tiers"][0]["current"]["per_million_95"];
    QCOMPARE(range.size(), std::size_t(2));
    QCOMPARE(range[0].get<double>(), now.perMillionRange.low);
    QCOMPARE(range[1].get<double>(), now.perMillionRange.high);
  }

  void fiveOperationsRecommendNothing() {
    const auto r = analyse(*m_five);
    const auto* pay = r.tier("pay");
    QCOMPARE(pay->retries.retries, 5LL);
    QVERIFY(!pay->recommendation.made);
    QCOMPARE(pay->recommendation.ttl, Millis(48h));  // the TTL stays; no cut to 30 s
    QCOMPARE(pay->proposed.ttl, Millis(48h));
    QVERIFY(pay->recommendation.because.find("not enough retries observed to recommend") != std::string::npos);
    std::string out;
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_five->conninfo()}, &out), 0);
    QVERIFY2(out.find("recommended   none: not enough retries observed to recommend: 5 of the 30") !=
                 std::string::npos,
             out.c_str());
    QVERIFY2(out.find("5 after 5 operations") != std::string::npos, out.c_str());  // what it has
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_five->conninfo(), "--format", "json"}, &out), 0);
    const auto rec = nlohmann::json::parse(out)["tiers"][0]["recommendation"];
    QCOMPARE(rec["made"].get<bool>(), false);
    QVERIFY(rec["ttl"].is_null());
  }

  void enoughRetriesStillRecommend() {
    // 66 operations and 67 retries pass the minimum; the channel's 3 days bind.
    const auto r = analyse(*m_oneLate);
    QVERIFY(r.tier("pay")->recommendation.made);
    QCOMPARE(r.tier("pay")->recommendation.ttl, Millis(72h));
  }

  void whatIfCountsReferenceWindows() {
    const auto r = analyse(*m_oneLate, {{"pay", 48h}});
    const auto& at48 = r.tier("pay")->proposed;
    QCOMPARE(at48.ttl, Millis(48h));
    QCOMPARE(at48.afterExpiry, 0LL);  // the trace caught nothing that late…
    QCOMPARE(at48.exposures.size(), std::size_t(1));  // …but the 3-day channel retry outruns 48 h
    QCOMPARE(at48.exposures.front().first, std::string("channel_retry"));
    QVERIFY(r.tier("pay")->recommendation.cost.exposures.empty());  // 72 h covers it
    std::string out;
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_oneLate->conninfo(), "--ttl", "pay=48h"}, &out), 0);
    QVERIFY2(out.find("known exposure: channel_retry (3 days) outruns the TTL by 24 h") != std::string::npos,
             out.c_str());
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_oneLate->conninfo(), "--ttl", "pay=48h", "--format", "json"}, &out),
             0);
    const auto exposures = nlohmann::json::parse(out)["tiers"][0]["proposed"]["known_exposures"];
    QCOMPARE(exposures.size(), std::size_t(1));
    QCOMPARE(exposures[0]["beyond_ttl"].get<std::string>(), std::string("1d"));
  }

  void cleanupTestCase() {
    m_oneLate.reset();
    m_five.reset();
  }
};

QTEST_GUILESS_MAIN(TestTiersSmall)
#include "tst_tiers_small.moc"
