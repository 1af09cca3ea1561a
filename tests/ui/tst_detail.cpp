// The incident key (two generations: executed, replays, then executed after expiry) shows
// two executions; its timeline draws one marker per event; the detail models pass
// QAbstractItemModelTester; times read absolute and relative.
#include <algorithm>

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QTableView>
#include <QTreeWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "core/explain/explain.h"
#include "core/explain/loader.h"
#include "tests/ui/uifixtures.h"
#include "ui/common/timefmt.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/detail/responseview.h"
#include "ui/explain/explainview.h"
#include "ui/keydata/detailquery.h"
#include "ui/keydata/generationmodel.h"
#include "ui/trace/eventmodel.h"
#include "ui/trace/timelinewidget.h"
#include "ui/trace/traceview.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

class TestDetail : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  const KeyRef m_incident{u"acct_42"_s, u"POST /v1/payments"_s, QString::fromLatin1(test::kIncidentKey)};

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_detail");
    test::seedConsoleRows(*m_db);
  }

  void incidentShowsTwoExecutions() {
    auto conn = m_db->connect();
    const KeyDetail d = loadKeyDetail(conn, m_incident);
    QCOMPARE(d.generations().size(), std::size_t(2));
    QVERIFY(!d.generations()[0].live);
    QVERIFY(d.generations()[1].live);
    QCOMPARE(d.events().size(), std::size_t(6));
    QCOMPARE(d.executions(), 2);
    QCOMPARE(d.generations()[0].resourceRef.value_or(""), std::string("pay_1NvQ8A"));
    QCOMPARE(d.generations()[1].resourceRef.value_or(""), std::string("pay_2Kx7Rt"));
    // The retry came 32 minutes after generation 1 expired.
    const auto& retry = d.events()[4];
    QCOMPARE(retry.outcome, std::string("executed_after_expiry"));
    QCOMPARE(toDateTime(d.generations()[0].expiresAt).secsTo(toDateTime(retry.at)), qint64(32 * 60));
    // The same read feeds the Response tab and core's explanation: they agree.
    QVERIFY(!d.generations()[1].body.empty());
    QVERIFY(d.generations()[1].headersJson.find("Content-Type") != std::string::npos);
    QVERIFY(d.narrative().contains(u"32 min"_s));
    QVERIFY(d.serverNow().isValid());
  }

  void droppedArchiveBodyShowsWhenItWent() {
    auto conn = m_db->connect();
    // Inside our transaction the loader reads our snapshot: the change is never committed.
    conn.exec("BEGIN");
    conn.exec("UPDATE idem.key_archive SET resp_body = NULL, body_dropped_at = now() - interval '1 day' "
              "WHERE idem_key = $1 AND generation = 1",
              {m_incident.key.toStdString()});
    const SharedKeyDetail shared = std::make_shared<const KeyDetail>(loadKeyDetail(conn, m_incident));
    conn.exec("ROLLBACK");
    const KeyDetail& d = *shared;
    QVERIFY(d.generations()[0].body.empty());
    QVERIFY(d.generations()[0].bodyDroppedAt);
    QCOMPARE(toDateTime(d.generations()[0].bodyDroppedAt).secsTo(d.serverNow()), qint64(24 * 3600));
    QVERIFY(!d.generations()[1].bodyDroppedAt);
  }

  void aFoldedStormReadsAsItsCount() {
    auto conn = m_db->connect();
    conn.exec("BEGIN");  // never committed: the other tests see the incident as seeded
    conn.exec("INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, status, "
              "latency_ms, request_id, repeats, last_at) SELECT now() - interval '1 hour', tenant, endpoint, "
              "idem_key, 2, tier, 'replayed', 201, 3.5, 'req_last_of_storm', 40, "
              "now() - interval '1 hour' + interval '90 milliseconds' FROM idem.keys WHERE idem_key = $1",
              {m_incident.key.toStdString()});
    const SharedKeyDetail shared = std::make_shared<const KeyDetail>(loadKeyDetail(conn, m_incident));
    conn.exec("ROLLBACK");
    const KeyDetail& d = *shared;
    const auto& trace = d.events();
    auto folded = std::find_if(trace.begin(), trace.end(), [](const explain::Event& e) { return e.repeats > 1; });
    QVERIFY(folded != trace.end());
    QCOMPARE(folded->repeats, 40);
    QCOMPARE(toDateTime(folded->at).msecsTo(toDateTime(folded->lastAt)), qint64(90));
    const int row = static_cast<int>(folded - trace.begin());

    EventModel events;
    events.setDetail(shared);
    QCOMPARE(events.data(events.index(row, EventModel::ColOutcome)).toString(), u"replayed ×40"_s);
    QVERIFY(events.describe(row).contains(u"40 identical decisions"_s));
    QVERIFY(events.describe(row).contains(u"last request req_last_of_storm"_s));
    QVERIFY(events.describe(row).contains(u"slowest 3.5 ms"_s));

    GenerationModel generations;
    generations.setDetail(shared);
    int storedReplays = 0;
    for (const auto& e : trace)
      if (e.generation == 2 && e.outcome == "replayed" && e.repeats == 1) ++storedReplays;
    QCOMPARE(generations.data(generations.index(1, GenerationModel::ColReplays)).toInt(), storedReplays + 40);
    QCOMPARE(d.executions(), 2);  // replays never count as executions, folded or not
  }

  void unknownKeyIsEmpty() {
    auto conn = m_db->connect();
    const KeyDetail d = loadKeyDetail(conn, {u"acct_42"_s, u"POST /v1/payments"_s, u"no-such-key"_s});
    QVERIFY(d.generations().empty());
    QVERIFY(d.events().empty());
    QCOMPARE(d.executions(), 0);
  }

  void widgetLoadsIncidentAndTimelineHasOneMarkerPerEvent() {
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    KeyDetailWidget widget(&session);
    QAbstractItemModelTester genTester(widget.generationModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester evTester(widget.eventModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    widget.resize(1200, 700);
    widget.show();
    QSignalSpy loaded(&widget, &KeyDetailWidget::detailLoaded);
    widget.showKey(m_incident);
    QVERIFY(loaded.wait(10000));
    QCOMPARE(widget.detail().executions(), 2);
    QCOMPARE(widget.generationModel()->rowCount(), 2);
    QCOMPARE(widget.generationModel()->data(widget.generationModel()->index(0, GenerationModel::ColExecutions)).toInt(), 1);
    QCOMPARE(widget.generationModel()->data(widget.generationModel()->index(1, GenerationModel::ColExecutions)).toInt(), 1);
    QCOMPARE(widget.eventModel()->rowCount(), 6);
    // The stored response's headers, in the store's [[name, value], ...] form, are listed.
    auto* headerTree = widget.findChild<QTreeWidget*>();
    QVERIFY(headerTree);
    QCOMPARE(headerTree->findItems(u"Content-Type"_s, Qt::MatchExactly, 0).size(), 1);
    QCOMPARE(headerTree->findItems(u"Location"_s, Qt::MatchExactly, 0).size(), 1);

    widget.setCurrentTab(KeyDetailWidget::TraceTab);
    QApplication::processEvents();
    TimelineWidget* timeline = widget.traceView()->timeline();
    QCOMPARE(timeline->markerCount(), widget.eventModel()->rowCount());
    // After "fit", every marker is inside the widget, and the two executions sit in one
    // lane, the second one a day later.
    timeline->fitAll();
    for (int i = 0; i < timeline->markerCount(); ++i)
      QVERIFY(timeline->rect().contains(timeline->markerPosition(i).toPoint()));
    QCOMPARE(timeline->markerPosition(0).y(), timeline->markerPosition(4).y());
    QVERIFY(timeline->markerPosition(4).x() > timeline->markerPosition(0).x() + timeline->width() / 3);
    QCOMPARE(timeline->eventAt(timeline->markerPosition(4)), 4);

    // Zoom with the wheel around the first marker: the span shrinks, the marker stays put.
    const double span = timeline->viewEndMs() - timeline->viewStartMs();
    const QPointF first = timeline->markerPosition(0);
    QWheelEvent wheel(first, timeline->mapToGlobal(first), {}, {0, 240}, Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(timeline, &wheel);
    QVERIFY(timeline->viewEndMs() - timeline->viewStartMs() < span);
    QVERIFY(std::abs(timeline->markerPosition(0).x() - first.x()) < 1.0);
    // Drag to pan: markers move with the pointer.
    const QPointF before = timeline->markerPosition(0);
    const QPoint start(timeline->width() / 2, timeline->height() - 60);
    QTest::mousePress(timeline, Qt::LeftButton, {}, start);
    QMouseEvent move(QEvent::MouseMove, QPointF(start + QPoint(100, 0)), timeline->mapToGlobal(QPointF(start + QPoint(100, 0))),
                     Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(timeline, &move);
    QTest::mouseRelease(timeline, Qt::LeftButton, {}, start + QPoint(100, 0));
    QVERIFY(std::abs(timeline->markerPosition(0).x() - before.x() - 100) < 1.0);
    // Clicking a marker selects its row in the table.
    timeline->fitAll();
    QTest::mouseClick(timeline, Qt::LeftButton, {}, timeline->markerPosition(4).toPoint());
    QCOMPARE(widget.traceView()->table()->currentIndex().row(), 4);
    QVERIFY(widget.eventModel()->describe(4).contains(u"executed after expiry"_s));
  }

  // A crash between a key's commit and its queued trace row loses the `executed` row: the
  // generation is done, so it ran at least once (core's rule). The header, the Generations tab
  // and the Trace tab's summary all say what core says.
  void aLostExecutionRowStillCountsEverywhere() {
    const std::string lost = "lost-execution-row";
    {
      auto conn = m_db->connect();
      // A copy of the incident key under another key, without generation 1's execution row.
      const char* copy[] = {
          "INSERT INTO idem.keys SELECT (jsonb_populate_record(NULL::idem.keys, to_jsonb(k) || "
          "jsonb_build_object('idem_key', $2::text))).* FROM idem.keys k WHERE idem_key = $1",
          "INSERT INTO idem.key_archive SELECT (jsonb_populate_record(NULL::idem.key_archive, to_jsonb(a) || "
          "jsonb_build_object('idem_key', $2::text))).* FROM idem.key_archive a WHERE idem_key = $1",
          "INSERT INTO idem.events OVERRIDING USER VALUE SELECT (jsonb_populate_record(NULL::idem.events, "
          "to_jsonb(e) || jsonb_build_object('idem_key', $2::text))).* FROM idem.events e WHERE idem_key = $1",
          "DELETE FROM idem.events WHERE idem_key = $2 AND generation = 1 AND outcome = 'executed' "
          "AND $1 <> ''"};
      for (const char* sql : copy) conn.exec(sql, {m_incident.key.toStdString(), lost});
    }
    const KeyRef ref{m_incident.tenant, m_incident.endpoint, QString::fromStdString(lost)};
    auto conn = m_db->connect();
    const explain::Explanation core = explain::explain(explain::loadHistory(
        conn, {{ref.tenant.toStdString(), ref.endpoint.toStdString()}, lost}));
    QCOMPARE(core.executions, 2);

    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    KeyDetailWidget widget(&session);
    widget.resize(1200, 700);
    widget.show();
    QSignalSpy loaded(&widget, &KeyDetailWidget::detailLoaded);
    widget.showKey(ref);
    QVERIFY(loaded.wait(10000));
    const QString expected = u"executed %1 time"_s.arg(core.executions);  // "times", "time(s)"
    auto labelWith = [&](const QString& start) {
      for (const QLabel* l : widget.findChildren<QLabel*>())
        if (l->text().startsWith(start)) return l->text();
      return QString();
    };
    const QString header = labelWith(u"<b>"_s + ref.key);
    QVERIFY2(header.contains(expected), qPrintable(header));
    int tab = 0;
    for (int row = 0; row < widget.generationModel()->rowCount(); ++row)
      tab += widget.generationModel()->data(widget.generationModel()->index(row, GenerationModel::ColExecutions)).toInt();
    QCOMPARE(tab, core.executions);
    const QString trace = labelWith(u"<b style="_s);
    QVERIFY2(trace.contains(expected), qPrintable(trace));
  }

  void explainShowsCoreNarrativeAndExports() {
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    KeyDetailWidget widget(&session);
    widget.resize(1200, 700);
    widget.show();
    QSignalSpy loaded(&widget, &KeyDetailWidget::detailLoaded);
    widget.showKey(m_incident);
    QVERIFY(loaded.wait(10000));
    widget.setCurrentTab(KeyDetailWidget::ExplainTab);
    QApplication::processEvents();
    ExplainView* view = widget.explainView();
    QVERIFY2(!view->narrativeText().isEmpty(), qPrintable(widget.detail().explainError));
    QCOMPARE(widget.detail().executions(), 2);
    QVERIFY2(view->narrativeText().contains(u"32 min"_s), qPrintable(view->narrativeText()));
    QCOMPARE(view->timeline()->markerCount(), 6);
    QTemporaryDir dir;
    QString error;
    QVERIFY2(view->exportTo(dir.filePath(u"x.md"_s), ExplainView::Format::Markdown, &error), qPrintable(error));
    QVERIFY2(view->exportTo(dir.filePath(u"x.html"_s), ExplainView::Format::Html, &error), qPrintable(error));
    QVERIFY2(view->exportTo(dir.filePath(u"x.pdf"_s), ExplainView::Format::Pdf, &error), qPrintable(error));
    QFile md(dir.filePath(u"x.md"_s));
    QVERIFY(md.open(QIODevice::ReadOnly));
    QVERIFY(md.readAll().contains(test::kIncidentKey));
    QFile html(dir.filePath(u"x.html"_s));
    QVERIFY(html.open(QIODevice::ReadOnly));
    QVERIFY(html.readAll().contains("<html"));
    QFile pdf(dir.filePath(u"x.pdf"_s));
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QVERIFY(pdf.size() > 2000);
    QVERIFY(pdf.read(5) == "%PDF-");
    QVERIFY(!view->exportTo(u"/nonexistent-dir/x.md"_s, ExplainView::Format::Markdown, &error));
    QVERIFY(!error.isEmpty());
  }

  // One KeyDetail per load, handed to every tab (no copy per view): a new key replaces it in
  // all of them, and closing the key (a search that matched nothing) leaves them all empty.
  void tabsShareOneDetailPerLoad() {
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    KeyDetailWidget widget(&session);
    auto* response = widget.findChild<ResponseView*>();
    QVERIFY(response);
    auto sharedByEveryTab = [&](const SharedKeyDetail& d) {
      return widget.eventModel()->sharedDetail() == d && widget.generationModel()->sharedDetail() == d &&
             response->sharedDetail() == d;
    };
    QSignalSpy loaded(&widget, &KeyDetailWidget::detailLoaded);
    widget.showKey(m_incident);
    QVERIFY(loaded.wait(10000));
    const SharedKeyDetail incident = widget.sharedDetail();
    QCOMPARE(incident->ref, m_incident);
    QVERIFY(sharedByEveryTab(incident));
    QCOMPARE(widget.eventModel()->rowCount(), 6);

    const KeyRef other{u"acct_1"_s, u"POST /v1/payments"_s, u"k-001-c4ca4238a0b923820dcc509a6f75849b"_s};
    widget.showKey(other);
    QVERIFY(loaded.wait(10000));
    const SharedKeyDetail second = widget.sharedDetail();
    QVERIFY(second != incident);
    QCOMPARE(second->ref, other);
    QCOMPARE(second->generations().size(), std::size_t(1));
    QVERIFY(sharedByEveryTab(second));
    QCOMPARE(widget.generationModel()->rowCount(), 1);
    QCOMPARE(widget.explainView()->subject(), other);
    QVERIFY(response->bodyText().contains(u"S0001"_s));
    QCOMPARE(incident.use_count(), 1);  // no tab kept the previous key

    widget.clear(u"No key matches pay_typo."_s);
    QVERIFY(widget.sharedDetail() == noKeyDetail());
    QVERIFY(sharedByEveryTab(noKeyDetail()));
    QCOMPARE(widget.eventModel()->rowCount(), 0);
    QCOMPARE(widget.generationModel()->rowCount(), 0);
    QVERIFY(!widget.explainView()->subject().isValid());
    QVERIFY(response->bodyText().isEmpty());
    QCOMPARE(second.use_count(), 1);
  }

  void responseBodyIsPrettyJson() {
    const QString pretty = ResponseView::formatBody(R"({"id":"pay_1","amount":1000})");
    QVERIFY(pretty.contains(u"\n    \"amount\": 1000"_s));
    QCOMPARE(ResponseView::formatBody("plain text"), u"plain text"_s);
    QCOMPARE(ResponseView::formatBody(QByteArray("\xff\x00\x01", 3)), u"ff 00 01"_s);
  }

  void timesReadAbsoluteAndRelative_data() {
    QTest::addColumn<qint64>("deltaMs");
    QTest::addColumn<QString>("expiry");
    QTest::newRow("in 3 h 12 min") << qint64((3 * 60 + 12) * 60'000 + 5000) << u"expires in 3 h 12 min"_s;
    QTest::newRow("2 days ago") << qint64(-2LL * 86400'000 - 60'000) << u"expired 2 days ago"_s;
    QTest::newRow("45 s") << qint64(45'000) << u"expires in 45 s"_s;
    QTest::newRow("90 min") << qint64(-90 * 60'000) << u"expired 1 h 30 min ago"_s;
  }
  void timesReadAbsoluteAndRelative() {
    QFETCH(qint64, deltaMs);
    QFETCH(QString, expiry);
    const QDateTime now = QDateTime::fromSecsSinceEpoch(1'800'000'000, Qt::UTC);
    QCOMPARE(formatExpiry(now.addMSecs(deltaMs), now), expiry);
    const QString absolute = formatAbsolute(now);
    QVERIFY2(absolute.contains(u'-') && absolute.count(u':') == 2 && absolute.split(u' ').size() >= 3,
             qPrintable(absolute));  // date, time and zone
  }

  void cleanupTestCase() { m_db.reset(); }
};

QTEST_MAIN(TestDetail)
#include "tst_detail.moc"
