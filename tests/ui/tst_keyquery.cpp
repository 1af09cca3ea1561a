// The key browser's queries: every filter combination, in every sort order, paged by keyset
// in small pages, returns exactly the rows a direct SQL query returns; the windowed model
// passes QAbstractItemModelTester while it pages forward past its capacity and back.
#include <QAbstractItemModelTester>
#include <QtTest>
#include <array>
#include <set>

#include "core/store/keystore.h"
#include "tests/ui/uifixtures.h"
#include "ui/keys/keylistmodel.h"
#include "ui/keys/keyquery.h"
#include "ui/keys/statecountmodel.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

Q_DECLARE_METATYPE(idem::ui::KeyFilter)

namespace {

using RowId = std::tuple<std::string, std::string, std::string, int>;

RowId idOf(const KeyRow& r) {
  return {r.tenant.toStdString(), r.endpoint.toStdString(), r.key.toStdString(), r.generation};
}

std::vector<KeyRow> allPages(pg::Connection& conn, const KeyFilter& f, int page) {
  std::vector<KeyRow> out;
  std::optional<KeyCursor> cursor;
  for (int guard = 0; guard < 1000; ++guard) {
    auto rows = fetchKeyPage(conn, f, cursor, false, page);
    out.insert(out.end(), rows.begin(), rows.end());
    if (static_cast<int>(rows.size()) < page) break;
    cursor = KeyCursor::of(rows.back());
  }
  return out;
}

constexpr SortColumn kSorts[] = {SortColumn::Key,    SortColumn::Scope,   SortColumn::Generation, SortColumn::State,
                                 SortColumn::Status, SortColumn::Created, SortColumn::Expires};

}  // namespace

class TestKeyQuery : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<pg::Connection> m_conn;
  QDateTime m_now;

  std::set<RowId> expected(const QString& table, const QString& where) {
    // Written independently of keyquery.cpp: plain predicates over the table.
    const std::string sql = "SELECT tenant, endpoint, idem_key, generation FROM idem." + table.toStdString() +
                            " WHERE " + where.toStdString();
    auto r = m_conn->exec(sql);
    std::set<RowId> out;
    for (int i = 0; i < r.rows(); ++i)
      out.insert({r.str(i, "tenant"), r.str(i, "endpoint"), r.str(i, "idem_key"), static_cast<int>(r.integer(i, "generation"))});
    return out;
  }

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_keyquery");
    test::seedConsoleRows(*m_db);
    m_conn = std::make_unique<pg::Connection>(m_db->connect());
    m_now = QDateTime::fromSecsSinceEpoch(m_conn->exec("SELECT extract(epoch FROM now())::bigint AS s").integer(0, "s"),
                                          Qt::UTC);
  }

  void filtersMatchDirectSql_data() {
    QTest::addColumn<KeyFilter>("filter");
    QTest::addColumn<QString>("table");
    QTest::addColumn<QString>("where");
    QTest::addColumn<int>("minRows");  // guards against a vacuous pass
    auto f = [](auto tweak) {
      KeyFilter k;
      tweak(k);
      return k;
    };
    const QString from = QDateTime::currentDateTimeUtc().addSecs(-4 * 3600).toString(Qt::ISODate);
    const QString to = QDateTime::currentDateTimeUtc().addSecs(-2 * 3600).toString(Qt::ISODate);
    const QString multi =
        u"(tenant, endpoint, idem_key) IN (SELECT tenant, endpoint, idem_key FROM idem.events WHERE outcome IN "
        "('executed','executed_after_expiry','lease_takeover') GROUP BY 1, 2, 3 HAVING count(*) > 1"
        " UNION SELECT tenant, endpoint, idem_key FROM (SELECT tenant, endpoint, idem_key FROM idem.keys"
        " WHERE state = 'done' UNION ALL SELECT tenant, endpoint, idem_key FROM idem.key_archive WHERE state = 'done') d"
        " GROUP BY 1, 2, 3 HAVING count(*) > 1)"_s;
    QTest::newRow("all") << KeyFilter{} << u"keys"_s << u"true"_s << 61;
    QTest::newRow("processing") << f([](KeyFilter& k) { k.state = KeyState::Processing; }) << u"keys"_s
                                << u"state = 'processing' AND expires_at >= now()"_s << 5;
    QTest::newRow("done") << f([](KeyFilter& k) { k.state = KeyState::Done; }) << u"keys"_s
                          << u"state = 'done' AND expires_at >= now()"_s << 20;
    QTest::newRow("expired") << f([](KeyFilter& k) { k.state = KeyState::Expired; }) << u"keys"_s
                             << u"expires_at < now()"_s << 5;
    QTest::newRow("archived") << f([](KeyFilter& k) { k.state = KeyState::Archived; }) << u"key_archive"_s
                              << u"true"_s << 5;
    QTest::newRow("endpoint") << f([](KeyFilter& k) { k.endpoint = u"POST /v1/refunds"_s; }) << u"keys"_s
                              << u"endpoint = 'POST /v1/refunds'"_s << 10;
    QTest::newRow("tier") << f([](KeyFilter& k) { k.tier = u"orders"_s; }) << u"keys"_s << u"tier = 'orders'"_s << 10;
    QTest::newRow("tenant") << f([](KeyFilter& k) { k.tenant = u"acct_2"_s; }) << u"keys"_s << u"tenant = 'acct_2'"_s
                            << 10;
    QTest::newRow("created range") << f([&](KeyFilter& k) {
      k.createdFrom = QDateTime::fromString(from, Qt::ISODate);
      k.createdTo = QDateTime::fromString(to, Qt::ISODate);
    }) << u"keys"_s << (u"created_at >= '"_s + from + u"' AND created_at < '"_s + to + u"'"_s) << 5;
    QTest::newRow("2xx") << f([](KeyFilter& k) { k.status = StatusClass::S2xx; }) << u"keys"_s
                         << u"resp_status BETWEEN 200 AND 299"_s << 10;
    QTest::newRow("4xx") << f([](KeyFilter& k) { k.status = StatusClass::S4xx; }) << u"keys"_s
                         << u"resp_status BETWEEN 400 AND 499"_s << 10;
    QTest::newRow("5xx") << f([](KeyFilter& k) { k.status = StatusClass::S5xx; }) << u"keys"_s
                         << u"resp_status BETWEEN 500 AND 599"_s << 3;
    QTest::newRow("key exact") << f([](KeyFilter& k) { k.key = u"a_b%1"_s; }) << u"keys"_s
                               << u"idem_key = 'a_b%1'"_s << 1;
    QTest::newRow("key prefix with wildcards") << f([](KeyFilter& k) {
      k.key = u"a_b%"_s;
      k.keyPrefix = true;
    }) << u"keys"_s << u"left(idem_key, 4) = 'a_b%'"_s << 2;
    QTest::newRow("key prefix") << f([](KeyFilter& k) {
      k.key = u"k-01"_s;
      k.keyPrefix = true;
    }) << u"keys"_s << u"left(idem_key, 4) = 'k-01'"_s << 5;
    QTest::newRow("resource") << f([](KeyFilter& k) { k.resourceRef = u"pay_2Kx7Rt"_s; }) << u"keys"_s
                              << u"resource_ref = 'pay_2Kx7Rt'"_s << 1;
    QTest::newRow("executed > 1") << f([](KeyFilter& k) { k.executedMoreThanOnce = true; }) << u"keys"_s << multi << 3;
    QTest::newRow("stuck") << f([](KeyFilter& k) { k.stuckProcessing = true; }) << u"keys"_s
                           << u"state = 'processing' AND lease_until < now()"_s << 3;
    QTest::newRow("done+refunds+2xx") << f([](KeyFilter& k) {
      k.state = KeyState::Done;
      k.endpoint = u"POST /v1/refunds"_s;
      k.status = StatusClass::S2xx;
    }) << u"keys"_s << u"state = 'done' AND expires_at >= now() AND endpoint = 'POST /v1/refunds' AND resp_status BETWEEN 200 AND 299"_s
      << 2;
    QTest::newRow("expired+tenant") << f([](KeyFilter& k) {
      k.state = KeyState::Expired;
      k.tenant = u"acct_0"_s;
    }) << u"keys"_s << u"expires_at < now() AND tenant = 'acct_0'"_s << 1;
    QTest::newRow("archived+resource") << f([](KeyFilter& k) {
      k.state = KeyState::Archived;
      k.resourceRef = u"pay_1NvQ8A"_s;
    }) << u"key_archive"_s << u"resource_ref = 'pay_1NvQ8A'"_s << 1;
    QTest::newRow("archived+stuck") << f([](KeyFilter& k) {
      k.state = KeyState::Archived;
      k.stuckProcessing = true;
    }) << u"key_archive"_s << u"false"_s << 0;
    QTest::newRow("archived+multi+tier") << f([](KeyFilter& k) {
      k.state = KeyState::Archived;
      k.executedMoreThanOnce = true;
      k.tier = u"payments"_s;
    }) << u"key_archive"_s << (multi + u" AND tier = 'payments'"_s) << 2;
    QTest::newRow("processing+stuck") << f([](KeyFilter& k) {
      k.state = KeyState::Processing;
      k.stuckProcessing = true;
    }) << u"keys"_s << u"state = 'processing' AND expires_at >= now() AND lease_until < now()"_s << 1;
    QTest::newRow("multi+payments") << f([&](KeyFilter& k) {
      k.executedMoreThanOnce = true;
      k.endpoint = u"POST /v1/payments"_s;
    }) << u"keys"_s << (multi + u" AND endpoint = 'POST /v1/payments'"_s) << 1;
    QTest::newRow("prefix+tier+4xx") << f([](KeyFilter& k) {
      k.key = u"k-0"_s;
      k.keyPrefix = true;
      k.tier = u"payments"_s;
      k.status = StatusClass::S4xx;
    }) << u"keys"_s << u"left(idem_key, 3) = 'k-0' AND tier = 'payments' AND resp_status BETWEEN 400 AND 499"_s << 2;
    QTest::newRow("range+4xx+tenant") << f([&](KeyFilter& k) {
      k.createdFrom = QDateTime::fromString(from, Qt::ISODate);
      k.status = StatusClass::S4xx;
      k.tenant = u"acct_3"_s;
    }) << u"keys"_s << (u"created_at >= '"_s + from + u"' AND resp_status BETWEEN 400 AND 499 AND tenant = 'acct_3'"_s)
      << 1;
    QTest::newRow("nothing") << f([](KeyFilter& k) { k.tenant = u"acct_nobody"_s; }) << u"keys"_s << u"false"_s << 0;
  }

  void filtersMatchDirectSql() {
    QFETCH(KeyFilter, filter);
    QFETCH(QString, table);
    QFETCH(QString, where);
    QFETCH(int, minRows);
    const auto want = expected(table, where);
    QVERIFY2(static_cast<int>(want.size()) >= minRows, qPrintable(u"seed gives only %1 rows"_s.arg(want.size())));
    for (SortColumn sort : kSorts) {
      for (bool descending : {false, true}) {
        KeyFilter f = filter;
        f.sort = sort;
        f.descending = descending;
        const auto whole = allPages(*m_conn, f, 1000);
        const auto paged = allPages(*m_conn, f, 7);
        std::set<RowId> got;
        for (const auto& r : paged) QVERIFY2(got.insert(idOf(r)).second, "a row came twice across pages");
        QCOMPARE(got, want);
        QCOMPARE(paged.size(), whole.size());
        for (std::size_t i = 0; i < paged.size(); ++i) QVERIFY(idOf(paged[i]) == idOf(whole[i]));
        // Backward from past the last row gives the same rows in the same order.
        if (!whole.empty()) {
          auto back = fetchKeyPage(*m_conn, f, KeyCursor::of(whole.back()), true, 1000);
          QCOMPARE(back.size() + 1, whole.size());
          for (std::size_t i = 0; i < back.size(); ++i) QVERIFY(idOf(back[i]) == idOf(whole[i]));
        }
      }
    }
  }

  // Status, generation and state are served by branches of a UNION ALL, each in its own index
  // order (keyquery.cpp). Their merged order, across small pages both ways, is the order a plain
  // ORDER BY gives, with every kind of row a branch boundary cuts: in flight, done with a common
  // status, done with a rare one, done with no status, a later generation.
  void lowCardinalitySortsMatchDirectSqlOrder_data() {
    QTest::addColumn<int>("sort");
    QTest::addColumn<QString>("expr");
    QTest::addColumn<KeyFilter>("filter");
    QTest::addColumn<QString>("where");
    const std::pair<SortColumn, QString> columns[] = {{SortColumn::Status, u"coalesce(resp_status, 0)"_s},
                                                      {SortColumn::Generation, u"generation"_s},
                                                      {SortColumn::State, u"state"_s}};
    for (const auto& [column, expr] : columns) {
      const int c = static_cast<int>(column);
      QTest::newRow(qPrintable(expr + u" all"_s)) << c << expr << KeyFilter{} << u"true"_s;
      KeyFilter tenant;
      tenant.tenant = u"acct_1"_s;
      QTest::newRow(qPrintable(expr + u" tenant"_s)) << c << expr << tenant << u"tenant = 'acct_1'"_s;
      KeyFilter errors;
      errors.status = StatusClass::S4xx;
      QTest::newRow(qPrintable(expr + u" 4xx"_s)) << c << expr << errors << u"resp_status BETWEEN 400 AND 499"_s;
      KeyFilter done;
      done.state = KeyState::Done;
      QTest::newRow(qPrintable(expr + u" done"_s)) << c << expr << done << u"state = 'done' AND expires_at >= now()"_s;
      KeyFilter inFlight;
      inFlight.state = KeyState::Processing;
      QTest::newRow(qPrintable(expr + u" processing"_s))
          << c << expr << inFlight << u"state = 'processing' AND expires_at >= now()"_s;
      KeyFilter okOnly;
      okOnly.status = StatusClass::S2xx;
      QTest::newRow(qPrintable(expr + u" 2xx"_s)) << c << expr << okOnly << u"resp_status BETWEEN 200 AND 299"_s;
    }
  }

  void lowCardinalitySortsMatchDirectSqlOrder() {
    QFETCH(int, sort);
    QFETCH(QString, expr);
    QFETCH(KeyFilter, filter);
    QFETCH(QString, where);
    test::TestDatabase db("ui_keyquery_sorts");
    test::seedConsoleRows(db);
    auto c = db.connect();
    c.script(R"sql(
      INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status, expires_at)
      VALUES ('acct_1', 'POST /v1/payments', 'k-done-no-status', 1, 'payments', '\x01', 'done', NULL, now() + interval '1 day'),
             ('acct_1', 'POST /v1/payments', 'k-gen-3', 3, 'payments', '\x01', 'done', 201, now() + interval '1 day'),
             ('acct_2', 'POST /v1/refunds', 'k-204', 1, 'payments', '\x01', 'done', 204, now() + interval '1 day');
      ANALYZE idem.keys;
    )sql");
    for (bool descending : {false, true}) {
      KeyFilter f = filter;
      f.sort = static_cast<SortColumn>(sort);
      f.descending = descending;
      const QString dir = descending ? u" DESC"_s : u" ASC"_s;
      // Written independently of keyquery.cpp: one ORDER BY over the table.
      const QString sql = u"SELECT tenant, endpoint, idem_key, generation FROM idem.keys WHERE "_s + where +
                          u" ORDER BY "_s + expr + dir + u", tenant"_s + dir + u", endpoint"_s + dir + u", idem_key"_s + dir;
      auto r = c.exec(sql.toStdString());
      std::vector<RowId> want;
      for (int i = 0; i < r.rows(); ++i)
        want.emplace_back(r.str(i, "tenant"), r.str(i, "endpoint"), r.str(i, "idem_key"),
                          static_cast<int>(r.integer(i, "generation")));
      QVERIFY2(want.size() >= 5, "the seed gives too few rows for the order to mean anything");
      std::vector<RowId> got;
      for (const auto& row : allPages(c, f, 4)) got.push_back(idOf(row));
      QCOMPARE(got, want);
      // Backward from past the last row, in pages of 4: the same order.
      std::vector<RowId> back;
      std::optional<KeyCursor> cursor;
      auto rows = allPages(c, f, 1000);
      cursor = KeyCursor::of(rows.back());
      for (int guard = 0; guard < 1000; ++guard) {
        auto page = fetchKeyPage(c, f, cursor, true, 4);
        back.insert(back.begin(), page.size(), RowId{});
        for (std::size_t i = 0; i < page.size(); ++i) back[i] = idOf(page[i]);
        if (page.size() < 4) break;
        cursor = KeyCursor::of(page.front());
      }
      back.push_back(idOf(rows.back()));
      QCOMPARE(back, want);
    }
  }

  void executedMoreThanOnceWithoutItsTraceRows() {
    // Two done generations and no execution in the trace (a crash lost the rows): still a
    // key that ran twice. One done generation without trace rows is not.
    test::TestDatabase db("ui_keyquery_untraced");
    auto c = db.connect();
    c.script(R"sql(
      INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status, expires_at)
      VALUES ('acct_9', 'POST /v1/payments', 'k-twice', 2, 'payments', '\x01', 'done', 201, now() + interval '1 day'),
             ('acct_9', 'POST /v1/payments', 'k-once', 1, 'payments', '\x01', 'done', 201, now() + interval '1 day');
      INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status,
                                    created_at, expires_at, archived_by, purge_after)
      VALUES ('acct_9', 'POST /v1/payments', 'k-twice', 1, 'payments', '\x01', 'done', 201,
              now() - interval '2 days', now() - interval '1 day', 'sweeper', now() + interval '400 days');
    )sql");
    KeyFilter f;
    f.executedMoreThanOnce = true;
    const auto live = allPages(c, f, 100);
    QCOMPARE(live.size(), std::size_t{1});
    QCOMPARE(live.front().key, u"k-twice"_s);
    f.state = KeyState::Archived;
    const auto archived = allPages(c, f, 100);
    QCOMPARE(archived.size(), std::size_t{1});
    QCOMPARE(archived.front().generation, 1);
  }

  // A key a proxy took over and answered "outcome unknown" without running it again: its trace
  // holds lease_takeover and outcome_unknown, two execution outcomes, yet one request may have run
  // (the detail says so: store::kNotRunAfterTakeover). One taken over and run again is listed.
  void aTakeoverAnsweredUnknownDidNotRunTwice() {
    test::TestDatabase db("ui_keyquery_not_rerun");
    auto c = db.connect();
    c.script(R"sql(
      INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status, expires_at)
      VALUES ('acct_9', 'POST /v1/payments', 'k-unknown', 1, 'payments', '\x01', 'done', 502, now() + interval '1 day'),
             ('acct_9', 'POST /v1/payments', 'k-rerun', 1, 'payments', '\x01', 'done', 201, now() + interval '1 day');
    )sql");
    for (const auto& [key, outcome, detail] : std::vector<std::array<std::string, 3>>{
             {"k-unknown", "lease_takeover", ""},
             {"k-unknown", "outcome_unknown", std::string(store::kNotRunAfterTakeover)},
             {"k-rerun", "lease_takeover", ""},
             {"k-rerun", "executed", "pay_2"}})
      c.exec("INSERT INTO idem.events (tenant, endpoint, idem_key, generation, tier, outcome, detail)"
             " VALUES ('acct_9', 'POST /v1/payments', $1, 1, 'payments', $2, nullif($3, ''))",
             {key, outcome, detail});
    KeyFilter f;
    f.executedMoreThanOnce = true;
    const auto listed = allPages(c, f, 100);
    QCOMPARE(listed.size(), std::size_t{1});
    QCOMPARE(listed.front().key, u"k-rerun"_s);
  }

  // Services sharing a store may hold one tenant, endpoint and key (docs/store.md, "Services"):
  // the service completes the keyset, so a page boundary between two of them skips neither, in
  // every order, live and archived; the Service filter keeps one service's.
  void servicesWithTheSameKeyPageApartAndFilter() {
    test::TestDatabase db("ui_keyquery_services");
    auto c = db.connect();
    c.exec("INSERT INTO idem.keys (tenant, endpoint, idem_key, service, generation, tier, fingerprint, state, "
           "resp_status, created_at, expires_at) SELECT 'acct', 'POST /v1/orders', 'k-shared', s, 2, 'orders', "
           "'\\x01', 'done', 201, now() - interval '1 hour', now() + interval '1 hour' "
           "FROM unnest(ARRAY['alpha', 'beta', 'default']) s");
    c.exec("INSERT INTO idem.key_archive (tenant, endpoint, idem_key, service, generation, tier, fingerprint, state, "
           "resp_status, created_at, expires_at, archived_by, purge_after) SELECT 'acct', 'POST /v1/orders', "
           "'k-shared', s, 1, 'orders', '\\x01', 'done', 201, now() - interval '3 hours', now() - interval '2 hours', "
           "'reuse', now() + interval '1 day' FROM unnest(ARRAY['alpha', 'beta', 'default']) s");
    for (KeyState state : {KeyState::All, KeyState::Done, KeyState::Archived})
      for (SortColumn sort : kSorts)
        for (bool descending : {false, true}) {
          KeyFilter f;
          f.state = state;
          f.sort = sort;
          f.descending = descending;
          const auto rows = allPages(c, f, 1);
          std::set<std::string> services;
          for (const auto& r : rows) services.insert(r.service.toStdString());
          QVERIFY2(rows.size() == 3 && services.size() == 3,
                   qPrintable(u"state %1, sort %2: %3 rows"_s.arg(int(state)).arg(int(sort)).arg(rows.size())));
          f.service = u"beta"_s;
          const auto beta = allPages(c, f, 1);
          QCOMPARE(beta.size(), std::size_t(1));
          QCOMPARE(beta.front().service, u"beta"_s);
        }
  }

  void likePatternEscapesWildcards() {
    QCOMPARE(likePrefixPattern(u"a_b%"_s), std::string("a\\_b\\%%"));
    QCOMPARE(likePrefixPattern(u"x\\y"_s), std::string("x\\\\y%"));
  }

  void searchFindsResourceKeyAndPrefix() {
    auto byResource = searchKeys(*m_conn, u"pay_1NvQ8A"_s);
    QCOMPARE(byResource.size(), std::size_t(1));
    QCOMPARE(byResource[0].key, QString::fromLatin1(test::kIncidentKey));
    QVERIFY(byResource[0].archived);
    auto byKey = searchKeys(*m_conn, QString::fromLatin1(test::kIncidentKey));
    QCOMPARE(byKey.size(), std::size_t(2));  // live generation 2 first, then archived 1
    QVERIFY(!byKey[0].archived);
    QCOMPARE(byKey[0].generation, 2);
    auto byPrefix = searchKeys(*m_conn, u"8e03978e"_s);
    QCOMPARE(byPrefix.size(), std::size_t(2));
    QCOMPARE(byPrefix[0].matchedBy, u"prefix"_s);
    QVERIFY(searchKeys(*m_conn, u"nothing-like-this"_s).empty());
  }

  void stateCountsMatchSql() {
    const auto c = fetchStateCounts(*m_conn);
    auto count = [&](const char* sql) { return m_conn->exec(sql).integer(0, "n"); };
    QCOMPARE(c.processing, count("SELECT count(*) AS n FROM idem.keys WHERE state='processing' AND expires_at >= now()"));
    QCOMPARE(c.done, count("SELECT count(*) AS n FROM idem.keys WHERE state='done' AND expires_at >= now()"));
    QCOMPARE(c.expired, count("SELECT count(*) AS n FROM idem.keys WHERE expires_at < now()"));
    QCOMPARE(c.archived, count("SELECT count(*) AS n FROM idem.key_archive"));
    QCOMPARE(c.stuck, count("SELECT count(*) AS n FROM idem.keys WHERE state='processing' AND lease_until < now()"));
    QVERIFY(!c.doneEstimated);
    QCOMPARE(StateCountModel::formatCount(1'234'567, true), u"≈ 1.2 M"_s);
    QCOMPARE(StateCountModel::formatCount(340, false), u"340"_s);
  }

  void windowedModelPagesForwardAndBack() {
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    KeyListModel model(&session);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setPageSize(5);
    model.setCapacity(12);
    KeyFilter f;
    f.sort = SortColumn::Key;
    f.descending = false;
    // The tester itself calls fetchMore whenever rows arrive, so record every forward
    // insertion as it happens rather than assume who asked for it.
    std::vector<RowId> seen;
    connect(&model, &QAbstractItemModel::rowsInserted, this, [&](const QModelIndex&, int first, int last) {
      if (first != model.rowCount() - (last - first + 1)) return;  // a page before the window
      for (int i = first; i <= last; ++i) seen.push_back(idOf(*model.rowAt(i)));
    });
    model.setFilter(f);
    QTRY_VERIFY(!model.isLoading());
    while (model.canFetchMore({}) || model.isLoading()) {
      model.fetchMore({});
      QTRY_VERIFY(!model.isLoading());
      QVERIFY(model.rowCount() <= model.capacity());
    }
    const auto whole = allPages(*m_conn, f, 1000);
    QCOMPARE(seen.size(), whole.size());
    for (std::size_t i = 0; i < seen.size(); ++i) QVERIFY(seen[i] == idOf(whole[i]));
    QVERIFY(model.canFetchPrevious());  // the window dropped rows at the top
    while (model.canFetchPrevious()) {
      model.fetchPrevious();
      QTRY_VERIFY(!model.isLoading());
      QVERIFY(model.rowCount() <= model.capacity());
    }
    QVERIFY(idOf(*model.rowAt(0)) == idOf(whole.front()));
    // Sorting through the model's interface changes the order, not the rows.
    model.sort(KeyListModel::ColStatus, Qt::DescendingOrder);
    QTRY_VERIFY(!model.isLoading());
    QCOMPARE(model.filter().sort, SortColumn::Status);
    QVERIFY(model.rowAt(0)->status >= model.rowAt(model.rowCount() - 1)->status);
  }

  void lateAnswersAreDropped() {
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    KeyListModel model(&session);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    KeyFilter a;
    a.tenant = u"acct_1"_s;
    KeyFilter b;
    b.tenant = u"acct_2"_s;
    model.setFilter(a);
    model.setFilter(b);  // the first answer, whenever it comes, must not show
    QTRY_VERIFY(!model.isLoading());
    QTest::qWait(200);
    QVERIFY(model.rowCount() > 0);
    for (int i = 0; i < model.rowCount(); ++i) QCOMPARE(model.rowAt(i)->tenant, u"acct_2"_s);
  }

  void stateModelPassesTester() {
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    StateCountModel model(&session);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy loaded(&model, &StateCountModel::countsLoaded);
    model.refresh();
    QVERIFY(loaded.wait(10000));
    QCOMPARE(model.data(model.index(StateCountModel::rowOf(KeyState::Archived), StateCountModel::ColCount)).toString(),
             QString::number(model.counts().archived));
  }

  void cleanupTestCase() {
    m_conn.reset();
    m_db.reset();
  }
};

QTEST_MAIN(TestKeyQuery)
#include "tst_keyquery.moc"
