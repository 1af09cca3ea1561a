// The Tiers workspace on the offscreen platform, over a crafted trace: one bar per tier, flagged
// tiers written on the chart, the table model under QAbstractItemModelTester, the what-if panel
// moving live with the slider and asking the database for a typed TTL, the exports (PNG, SVG,
// one-page PDF) valid, the view rendering, and the same numbers as `idemctl tiers`.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSlider>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QTableView>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <nlohmann/json.hpp>
#include <set>

#include "core/policy/policy.h"
#include "core/store/policystore.h"
#include "core/tiers/format.h"
#include "tests/ui/uifixtures.h"
#include "ui/mainwindow/mainwindow.h"
#include "ui/tiers/curvechart.h"
#include "ui/tiers/tierchart.h"
#include "ui/tiers/tiersworkspace.h"
#include "ui/tiers/tiertablemodel.h"
#include "ui/tiers/whatifpanel.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using tiers::Millis;

namespace {

std::string policyText() {
  using nlohmann::json;
  const json tiers = json::array({
      {{"name", "payments"}, {"routes", {"POST /v1/payments", "POST /v1/refunds"}}, {"ttl", "24h"}, {"lease", "30s"},
       {"archive_retention", "400d"}, {"body_retention", "30d"},
       {"reference_windows", {{"channel_retry", "72h"}, {"reconciliation", "48h"}}},
       {"cross_key", {{"mode", "hold"}, {"window", "60s"}}}},
      {{"name", "orders"}, {"routes", {"POST /v1/orders"}}, {"ttl", "30m"}, {"rollout", "observe"},
       {"reference_windows", {{"client_retry", "20m"}}}},
      {{"name", "webhooks"}, {"routes", {"POST /v1/webhooks/ack"}}, {"ttl", "7d"}, {"on_expired", "reject"}},
  });
  return json{{"docs_url", "https://docs.test/idempotency"}, {"tenant_header", "Account-Id"}, {"tiers", tiers}}.dump();
}

// payments: 400 keys; replays log-uniform between 1 s and ~20 h; every 40th key retried 25-35 h
// later and executed again. orders: 300 keys, replays within 20 min. webhooks: 60 keys,
// replays after a day, every 20th rejected after 8 days.
const char* const kCraft = R"SQL(
CREATE TABLE public.p AS
SELECT i, date_trunc('second', now()) - interval '12 days' + i * interval '30 minutes' AS c,
       i % 40 = 0 AS late, make_interval(hours => 25 + i % 11) AS late_off
  FROM generate_series(1, 400) i;
INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status, resp_body,
                       created_at, completed_at, expires_at)
SELECT 'acct', 'POST /v1/payments', 'pay-' || i, CASE WHEN late THEN 2 ELSE 1 END, 'payments', '\x01'::bytea,
       'done', 201, convert_to(repeat('p', 180), 'UTF8'),
       c + CASE WHEN late THEN late_off ELSE interval '0' END, c + CASE WHEN late THEN late_off ELSE interval '0' END,
       c + CASE WHEN late THEN late_off ELSE interval '0' END + interval '24 hours'
  FROM public.p;
INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status,
                              resp_body, created_at, completed_at, expires_at, archived_at, archived_by, purge_after)
SELECT 'acct', 'POST /v1/payments', 'pay-' || i, 1, 'payments', '\x01'::bytea, 'done', 201,
       convert_to(repeat('b', 400), 'UTF8'), c, c, c + interval '24 hours', c + late_off, 'reuse',
       c + interval '400 days'
  FROM public.p WHERE late;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, latency_ms)
SELECT c, 'acct', 'POST /v1/payments', 'pay-' || i, 1, 'payments', 'executed', 0 FROM public.p;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, latency_ms)
SELECT c + late_off, 'acct', 'POST /v1/payments', 'pay-' || i, 2, 'payments', 'executed_after_expiry', 0
  FROM public.p WHERE late;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)
SELECT c + make_interval(secs => power(10, 0 + 4.85 * ((i * 7919 + j * 104729) % 1000) / 1000.0)),
       'acct', 'POST /v1/payments', 'pay-' || i, 1, 'payments', 'replayed'
  FROM public.p, generate_series(1, 3) j;

CREATE TABLE public.o AS
SELECT i, date_trunc('second', now()) - interval '3 days' + i * interval '10 minutes' AS c
  FROM generate_series(1, 300) i;
INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status,
                       created_at, completed_at, expires_at)
SELECT 'acct', 'POST /v1/orders', 'ord-' || i, 1, 'orders', '\x02'::bytea, 'done', 201, c, c,
       c + interval '30 minutes' FROM public.o;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, latency_ms)
SELECT c, 'acct', 'POST /v1/orders', 'ord-' || i, 1, 'orders', 'executed', 0 FROM public.o;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)
SELECT c + make_interval(secs => 2 + (i * 37) % 1200), 'acct', 'POST /v1/orders', 'ord-' || i, 1, 'orders',
       CASE WHEN i % 15 = 0 THEN 'conflict' ELSE 'replayed' END
  FROM public.o;

CREATE TABLE public.w AS
SELECT i, date_trunc('second', now()) - interval '25 days' + i * interval '6 hours' AS c
  FROM generate_series(1, 60) i;
INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status,
                       created_at, completed_at, expires_at)
SELECT 'acct', 'POST /v1/webhooks/ack', 'evt-' || i, 1, 'webhooks', '\x03'::bytea, 'done', 200, c, c,
       c + interval '7 days' FROM public.w;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, latency_ms)
SELECT c, 'acct', 'POST /v1/webhooks/ack', 'evt-' || i, 1, 'webhooks', 'executed', 0 FROM public.w;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)
SELECT c + interval '1 day', 'acct', 'POST /v1/webhooks/ack', 'evt-' || i, 1, 'webhooks', 'replayed' FROM public.w;
INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)
SELECT c + interval '8 days', 'acct', 'POST /v1/webhooks/ack', 'evt-' || i, 1, 'webhooks', 'rejected_expired'
  FROM public.w WHERE i % 20 = 0;
)SQL";

int distinctColours(const QImage& image) {
  std::set<QRgb> colours;
  for (int y = 0; y < image.height(); y += 2)
    for (int x = 0; x < image.width(); x += 2) colours.insert(image.pixel(x, y));
  return static_cast<int>(colours.size());
}

bool waitLoaded(TiersWorkspace& w, int timeoutMs = 20000) {
  QElapsedTimer t;
  t.start();
  while ((w.busy() || !w.loaded()) && t.elapsed() < timeoutMs) QTest::qWait(20);
  return w.loaded() && !w.busy();
}

}  // namespace

class TestTiersView : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<DbSession> m_session;
  std::unique_ptr<TiersWorkspace> m_view;

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_tiers");
    auto conn = m_db->connect();
    (void)store::recordPolicy(conn, policy::parsePolicy(policyText(), "ui-tiers.json"));
    conn.script(kCraft);
    conn.exec("VACUUM ANALYZE idem.keys");
    conn.exec("VACUUM ANALYZE idem.key_archive");
    m_session = std::make_unique<DbSession>(u"test-tiers"_s);
    QVERIFY(test::openSession(*m_session, m_db->conninfo()));
    m_view = std::make_unique<TiersWorkspace>(m_session.get());
    m_view->resize(1360, 900);
    m_view->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_view.get()));
    QVERIFY(waitLoaded(*m_view));
  }

  void cleanupTestCase() {
    m_view.reset();
    m_session.reset();
  }

  void chartHasOneBarPerTier() {
    QCOMPARE(m_view->report()->tiers.size(), std::size_t(3));
    QCOMPARE(m_view->chart()->barCount(), 3);
    // payments (retries and channel_retry) and webhooks (rejected after 8 days) are marked.
    const QStringList flags = m_view->chart()->flagTexts();
    QCOMPARE(flags.size(), 2);
    QVERIFY2(flags.join(u'\n').contains(u"channel_retry window 3 days"_s), qPrintable(flags.join(u'\n')));
    QVERIFY(flags.join(u'\n').contains(u"rejected"_s));
    QVERIFY(!m_view->report()->tier("orders")->flagged());
  }

  void tableModelPassesTester() {
    QAbstractItemModelTester tester(m_view->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(m_view->model()->rowCount(), 3);
    const QModelIndex verdict = m_view->model()->index(0, TierTableModel::ColVerdict);
    QVERIFY(verdict.data().toString().contains(u"too short"_s));
    QVERIFY(!verdict.data(Qt::ToolTipRole).toString().isEmpty());
    QCOMPARE(m_view->model()->index(1, TierTableModel::ColVerdict).data().toString(), u"OK"_s);
    QCOMPARE(m_view->model()->index(0, TierTableModel::ColTtl).data().toString(), u"24 h"_s);
    QVERIFY2(m_view->model()->index(0, TierTableModel::ColArchive).data().toString().contains(u"(bodies 30 days)"_s),
             qPrintable(m_view->model()->index(0, TierTableModel::ColArchive).data().toString()));
    QVERIFY(!m_view->model()->index(1, TierTableModel::ColArchive).data().toString().contains(u"bodies"_s));
    QVERIFY(m_view->model()->index(0, TierTableModel::ColRoutes).data().toString().contains(u"POST /v1/refunds"_s));
    QVERIFY(m_view->model()->index(0, TierTableModel::ColHorizon).data().toString().startsWith(u"p99.9"_s));
    // How far each tier is enforced: a product owner must not read an observe tier's TTL verdict
    // as protection, and sees what a new key repeating another key's request meets.
    QCOMPARE(m_view->model()->index(0, TierTableModel::ColEnforcement).data().toString(),
             u"key required · new-key repeats: hold 1 min"_s);
    QVERIFY(m_view->model()->index(0, TierTableModel::ColEnforcement).data(Qt::ToolTipRole).toString().contains(
        u"held (409) until the client confirms"_s));
    QCOMPARE(m_view->model()->index(1, TierTableModel::ColEnforcement).data().toString(), u"observe only"_s);
    QVERIFY(m_view->model()->index(1, TierTableModel::ColEnforcement).data(Qt::ToolTipRole).toString().contains(
        u"protects no one"_s));
    QCOMPARE(m_view->model()->index(2, TierTableModel::ColEnforcement).data().toString(), u"key required"_s);
    // A reload resets the model under the tester.
    QSignalSpy loaded(m_view.get(), &TiersWorkspace::reportLoaded);
    m_view->reload();
    QVERIFY(loaded.wait(20000));
  }

  void viewRenders() {
    const QImage image = m_view->grab().toImage();
    QVERIFY(image.width() > 500 && image.height() > 500);
    QVERIFY2(distinctColours(image) > 30, qPrintable(QString::number(distinctColours(image))));
    const QImage chart = m_view->chart()->grab().toImage();
    QVERIFY(distinctColours(chart) > 20);
    if (qEnvironmentVariableIsSet("IDEM_UI_SAVE_GRABS")) image.save(u"/tmp/grab-tiers.png"_s);
  }

  void sliderUpdatesLive() {
    auto* panel = m_view->whatIf();
    panel->setTier(u"payments"_s);
    const auto* pay = panel->tier();
    QVERIFY(pay);
    QCOMPARE(panel->proposal("payments").ttl, pay->recommendation.ttl);
    QSignalSpy changed(panel, &WhatIfPanel::proposalChanged);
    QSignalSpy asked(panel, &WhatIfPanel::whatIfRequested);
    // Step through the ladder with the keyboard: every position is answered at once.
    panel->slider()->setFocus();
    const int at24h = static_cast<int>(std::find_if(pay->curve.begin(), pay->curve.end(),
                                                    [](const auto& w) { return w.ttl == Millis(24h); }) -
                                       pay->curve.begin());
    panel->slider()->setValue(at24h);
    QCOMPARE(panel->proposal("payments").ttl, Millis(24h));
    QCOMPARE(panel->proposal("payments").afterExpiry, pay->current.afterExpiry);
    const QString at24 = panel->summary();
    QTest::keyClick(panel->slider(), Qt::Key_Right);
    QTest::keyClick(panel->slider(), Qt::Key_Right);
    QVERIFY(panel->proposal("payments").ttl > Millis(24h));
    QVERIFY(panel->proposal("payments").storageBytes > pay->current.storageBytes);
    QVERIFY(panel->summary() != at24);
    QVERIFY(changed.count() >= 3);
    QCOMPARE(asked.count(), 0);  // slider positions need no query
    QVERIFY(panel->missChart()->pointCount() > 10);
    QVERIFY(panel->missChart()->showsRecommendation());
    QCOMPARE(panel->storageChart()->pointCount(), panel->missChart()->pointCount());
  }

  void typedTtlAsksTheDatabase() {
    auto* panel = m_view->whatIf();
    panel->setTier(u"payments"_s);
    QSignalSpy changed(panel, &WhatIfPanel::proposalChanged);
    panel->ttlEdit()->setFocus();
    panel->ttlEdit()->selectAll();
    QTest::keyClicks(panel->ttlEdit(), u"29h"_s);
    QTest::keyClick(panel->ttlEdit(), Qt::Key_Return);
    QVERIFY(changed.wait(10000));
    const auto w = panel->proposal("payments");
    QCOMPARE(w.ttl, Millis(29h));
    auto conn = m_db->connect();
    const auto direct = tiers::whatIf(conn, *m_view->report()->tier("payments"), 29h, m_view->report()->since);
    QCOMPARE(w.afterExpiry, direct.afterExpiry);
    QVERIFY(w.afterExpiry > 0 && w.afterExpiry < panel->tier()->current.afterExpiry);
    // Not a duration: said at the field, nothing asked.
    QSignalSpy asked(panel, &WhatIfPanel::whatIfRequested);
    panel->ttlEdit()->selectAll();
    QTest::keyClicks(panel->ttlEdit(), u"soon"_s);
    QTest::keyClick(panel->ttlEdit(), Qt::Key_Return);
    QCOMPARE(asked.count(), 0);
    QVERIFY(panel->ttlEdit()->toolTip().contains(u"not a duration"_s));
  }

  void bodyRetentionWhatIf() {
    auto* panel = m_view->whatIf();
    panel->setTier(u"payments"_s);
    const auto* pay = panel->tier();
    QVERIFY(pay && pay->storage.archiveBodyBytes > 0);
    auto* box = panel->bodyRetentionBox();
    QVERIFY(box->isEnabled());
    QCOMPARE(box->currentData().toLongLong(), 0LL);  // "as now": the tier's 30 days
    QVERIFY(box->findData(qint64(Millis(24h * 30).count())) < 0);  // only shorter ages are offered
    const double before = panel->proposal("payments").storageBytes;

    // The archive was filled over the last 12 days: a week keeps the bodies archived within it.
    const int week = box->findData(qint64(Millis(24h * 7).count()));
    QVERIFY(week > 0);
    box->setCurrentIndex(week);
    const auto p = panel->proposal("payments");
    QCOMPARE(p.bodyRetention, std::optional<Millis>(Millis(24h * 7)));
    auto conn = m_db->connect();
    const double keptShare =
        conn.exec("SELECT (sum(pg_column_size(resp_body)) FILTER (WHERE archived_at >= now() - interval '7 days'))"
                  "::float8 / sum(pg_column_size(resp_body))::float8 AS s FROM idem.key_archive")
            .real(0, "s");
    QVERIFY(keptShare > 0.1 && keptShare < 0.9);
    const double dropped = pay->storage.archiveBodyBytes * (1 - keptShare);
    QVERIFY2(std::fabs((before - p.storageBytes) - dropped) < 0.02 * dropped + 1,
             qPrintable(u"storage fell by %1, the bodies older than a week are %2"_s.arg(before - p.storageBytes)
                            .arg(dropped)));
    QVERIFY(panel->summary().contains(u"with bodies kept "_s + box->itemText(week)));

    // Another TTL keeps the body choice; "as now" gives the storage back.
    QTest::keyClick(panel->slider(), Qt::Key_Right);
    QCOMPARE(panel->proposal("payments").bodyRetention, std::optional<Millis>(Millis(24h * 7)));
    box->setCurrentIndex(0);
    QVERIFY(!panel->proposal("payments").bodyRetention);
    QVERIFY(!panel->summary().contains(u"with bodies kept"_s));
  }

  // The decision sheet is laid out on a pool thread: the call returns at once, the signal says
  // when the file is there, and it holds what the synchronous export writes (the chart included).
  void pdfIsWrittenOffTheGuiThread() {
    QTemporaryDir dir;
    const QString inBackground = dir.filePath(u"tiers-bg.pdf"_s), waited = dir.filePath(u"tiers.pdf"_s);
    QSignalSpy done(m_view.get(), &TiersWorkspace::pdfExported);
    m_view->exportPdfInBackground(inBackground);
    QCOMPARE(done.count(), 0);
    QVERIFY(done.wait(20000));
    QCOMPARE(done.at(0).at(0).toString(), inBackground);
    QVERIFY(done.at(0).at(1).toBool());
    QVERIFY(m_view->exportPdf(waited));
    QFile a(inBackground), b(waited);
    QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
    QVERIFY(a.read(5) == "%PDF-");
    QVERIFY2(std::abs(a.size() - b.size()) < b.size() / 10, qPrintable(u"%1 vs %2 bytes"_s.arg(a.size()).arg(b.size())));
  }

  void exportsAreValid() {
    QTemporaryDir dir;
    const QString png = dir.filePath(u"tiers.png"_s), svg = dir.filePath(u"tiers.svg"_s),
                  pdf = dir.filePath(u"tiers.pdf"_s);
    QVERIFY(m_view->exportPng(png));
    QVERIFY(m_view->exportSvg(svg));
    QVERIFY(m_view->exportPdf(pdf));
    if (qEnvironmentVariableIsSet("IDEM_UI_SAVE_GRABS"))
      for (const QString& f : {png, svg, pdf}) {
        QFile::remove(u"/tmp/export-"_s + QFileInfo(f).fileName());
        QFile::copy(f, u"/tmp/export-"_s + QFileInfo(f).fileName());
      }

    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() >= m_view->chart()->width());
    QVERIFY(distinctColours(image) > 20);

    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&svgFile);
    bool sawSvg = false;
    while (!xml.atEnd())
      if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == u"svg"_s) sawSvg = true;
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(sawSvg);
    QSvgRenderer renderer(svg);
    QVERIFY(renderer.isValid());
    QImage drawn(renderer.defaultSize(), QImage::Format_ARGB32);
    drawn.fill(Qt::white);
    {
      QPainter painter(&drawn);
      renderer.render(&painter);
    }
    QVERIFY2(distinctColours(drawn) > 10, "the SVG draws next to nothing");
    if (qEnvironmentVariableIsSet("IDEM_UI_SAVE_GRABS")) drawn.save(u"/tmp/export-tiers-svg.png"_s);

    QFile pdfFile(pdf);
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    QVERIFY(pdfFile.read(5) == "%PDF-");
    QVERIFY(pdfFile.size() > 5000);
    const QString pdfinfo = QStandardPaths::findExecutable(u"pdfinfo"_s);
    if (pdfinfo.isEmpty()) QSKIP("pdfinfo (poppler-utils) is not installed: the PDF's structure is not checked");
    QProcess p;
    p.start(pdfinfo, {pdf});
    QVERIFY(p.waitForFinished(20000));
    const QString info = QString::fromUtf8(p.readAllStandardOutput());
    QCOMPARE(p.exitCode(), 0);
    QVERIFY2(info.contains(QRegularExpression(u"Pages:\\s+1\\b"_s)), qPrintable(info));
    QVERIFY(info.contains(u"Retention tiers"_s));
    const QString pdftotext = QStandardPaths::findExecutable(u"pdftotext"_s);
    if (!pdftotext.isEmpty()) {
      p.start(pdftotext, {pdf, u"-"_s});
      QVERIFY(p.waitForFinished(20000));
      const QString text = QString::fromUtf8(p.readAllStandardOutput());
      QVERIFY2(text.contains(u"payments"_s) && text.contains(u"channel_retry"_s), qPrintable(text.left(2000)));
    }
  }

  // Five payments under a 2-day TTL whose channel resends for 3 days (issue 29, item 6): the
  // view shows what it counted as ranges, recommends nothing, and names the window as a known
  // exposure although no retry came late; the rule is written in the view.
  void smallSampleReadsAsSuch() {
    test::TestDatabase db("ui_tiers_small");
    auto conn = db.connect();
    using nlohmann::json;
    const json tier = {{"name", "payments"}, {"routes", {"POST /v1/payments"}}, {"ttl", "2d"}, {"lease", "30s"},
                       {"reference_windows", {{"channel_retry", "72h"}}}};
    (void)store::recordPolicy(
        conn, policy::parsePolicy(json{{"docs_url", "https://docs.test/i"}, {"tiers", {tier}}}.dump(), "s.json"));
    conn.exec("INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, resp_status,"
              " created_at, completed_at, expires_at) SELECT 'acct', 'POST /v1/payments', 'pay-' || i, 1, 'payments',"
              " '\\x01'::bytea, 'done', 201, now() - make_interval(hours => i), now() - make_interval(hours => i),"
              " now() - make_interval(hours => i) + interval '2 days' FROM generate_series(1, $1::int) i",
              {5});
    conn.exec("INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, latency_ms)"
              " SELECT created_at, tenant, endpoint, idem_key, 1, tier, 'executed', 0 FROM idem.keys");
    conn.exec("INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome)"
              " SELECT created_at + interval '10 seconds', tenant, endpoint, idem_key, 1, tier, 'replayed'"
              " FROM idem.keys");
    DbSession session(u"test-tiers-small"_s);
    QVERIFY(test::openSession(session, db.conninfo()));
    TiersWorkspace view(&session);
    view.resize(1360, 900);
    view.show();
    QVERIFY(waitLoaded(view));
    auto* panel = view.whatIf();
    const auto* rec = panel->findChild<QLabel*>(u"tiersRecommendation"_s);
    const auto* rule = panel->findChild<QLabel*>(u"tiersRule"_s);
    QVERIFY(rec && rule);
    QVERIFY2(rec->text().contains(u"not enough retries observed to recommend"_s), qPrintable(rec->text()));
    QVERIFY(!panel->useRecommendedButton()->isEnabled());
    QVERIFY(!panel->missChart()->showsRecommendation());  // no line that reads as advice
    QVERIFY2(rule->isVisible() && rule->text().contains(u"Wilson"_s), qPrintable(rule->text()));
    QCOMPARE(view.model()->index(0, TierTableModel::ColRecommended).data().toString(), u"not enough retries"_s);
    // What it has: 0 of 5 late, as the range 0 to 1 in 2.3 (Wilson, 0 of 5: 0–43.4 %).
    const QString summary = panel->summary();
    QVERIFY2(summary.contains(u"0–43.4 %"_s) && summary.contains(u"0 of 5 observed"_s), qPrintable(summary));
    // At the 2-day TTL the trace shows no late retry, yet the 3-day channel resend outruns it.
    QVERIFY2(summary.contains(u"Known exposure: channel_retry (3 days) outruns the TTL by 24 h"_s), qPrintable(summary));
    if (qEnvironmentVariableIsSet("IDEM_UI_SAVE_GRABS")) view.grab().save(u"/tmp/grab-tiers-small-exposed.png"_s);
    panel->setTtl(Millis(72h));
    QVERIFY(!panel->summary().contains(u"Known exposure"_s));
    if (qEnvironmentVariableIsSet("IDEM_UI_SAVE_GRABS")) view.grab().save(u"/tmp/grab-tiers-small.png"_s);
  }

  void cliPrintsTheViewsNumbers() {
    std::string out;
    QCOMPARE(test::runIdemctl({"tiers", "--db", m_db->conninfo(), "--since", "30d", "--format", "json"}, &out), 0);
    auto cli = nlohmann::json::parse(out);
    auto view = tiers::toJson(*m_view->report());
    cli.erase("generated_at");
    view.erase("generated_at");
    QVERIFY2(cli == view, out.substr(0, 2000).c_str());
  }

  void periodChooserReloads() {
    QSignalSpy loaded(m_view.get(), &TiersWorkspace::reportLoaded);
    m_view->setPeriod(Millis(7 * 24h));
    QVERIFY(loaded.wait(20000));
    QCOMPARE(m_view->report()->since, Millis(7 * 24h));
    // payments' keys are 12 days old: fewer of their retries fall in the last week.
    QVERIFY(m_view->report()->tier("payments")->retries.retries < 1210);
    m_view->setPeriod(Millis(30 * 24h));
    QVERIFY(loaded.wait(20000));
  }

  void noPolicyIsExplained() {
    test::TestDatabase empty("ui_tiers_empty");
    DbSession session(u"test-tiers-empty"_s);
    QVERIFY(test::openSession(session, empty.conninfo()));
    TiersWorkspace view(&session);
    view.resize(900, 600);
    view.show();
    QSignalSpy loaded(&view, &TiersWorkspace::reportLoaded);
    QVERIFY(loaded.count() > 0 || loaded.wait(20000));
    QVERIFY(!view.loaded());
    bool explained = false;
    for (auto* label : view.findChildren<QLabel*>())
      explained = explained || (label->isVisible() && label->text().contains(u"no policy in force"_s) &&
                                label->text().contains(u"idemctl policy activate FILE"_s) &&
                                !label->text().contains(u"serve --policy"_s));  // one next step, not two
    QVERIFY(explained);
    QVERIFY(!view.exportPng(u"/tmp/never.png"_s));
  }

  void mainWindowHasTheWorkspace() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    MainWindow window(settings);
    auto* tiersView = window.findChild<TiersWorkspace*>();
    QVERIFY(tiersView);
    window.setWorkspace(MainWindow::TiersPage);
    QVERIFY(tiersView->isVisibleTo(&window));
  }

  // Last: it adds a second service to the store the slots above read (docs/store.md, "Services").
  void eachServiceKeepsItsTiersInTheView() {
    auto conn = m_db->connect();
    const std::string billing = nlohmann::json{
        {"docs_url", "https://docs.test/billing"},
        {"tiers", nlohmann::json::array({{{"name", "invoices"}, {"routes", {"POST /v1/invoices"}}, {"ttl", "2h"}}})}}
                                    .dump();
    (void)store::recordPolicy(conn, policy::parsePolicy(billing, "billing.json"), store::kDefaultLockTimeout, "billing");
    // A session opened now lists both services; the view starts on "default", whose tiers stay.
    DbSession session(u"test-tiers-services"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    TiersWorkspace view(&session);
    view.resize(1200, 800);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(waitLoaded(view));
    QStringList choices;
    for (int i = 0; i < view.serviceChooser()->count(); ++i) choices << view.serviceChooser()->itemText(i);
    QCOMPARE(choices, (QStringList{u"billing"_s, u"default"_s}));
    QCOMPARE(view.service(), u"default"_s);
    QCOMPARE(view.report()->service, std::string("default"));
    QCOMPARE(view.model()->rowCount(), 3);
    QVERIFY(view.report()->tier("payments") && !view.report()->tier("invoices"));

    // The chooser, as a user picks it: billing's own tiers, and back.
    QSignalSpy loaded(&view, &TiersWorkspace::reportLoaded);
    view.serviceChooser()->setCurrentIndex(0);
    emit view.serviceChooser()->activated(0);
    QVERIFY(loaded.wait(20000));
    QVERIFY(waitLoaded(view));
    QCOMPARE(view.report()->service, std::string("billing"));
    QCOMPARE(view.model()->rowCount(), 1);
    QVERIFY(view.report()->tier("invoices") && !view.report()->tier("payments"));
    view.setService(u"default"_s);
    QVERIFY(loaded.wait(20000));
    QVERIFY(waitLoaded(view));
    QVERIFY(view.report()->tier("payments"));
    if (qEnvironmentVariableIsSet("IDEM_UI_SAVE_GRABS")) view.grab().save(u"/tmp/grab-tiers-services.png"_s);
  }
};

QTEST_MAIN(TestTiersView)
#include "tst_tiers.moc"
