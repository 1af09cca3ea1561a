#pragma once
// Shared by the ui suites (header only: tests link library targets, never recompile them).
// A fresh migrated database filled with tests/ui/data/console_seed.sql, and an open
// DbSession on it.
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTimer>
#include <QtTest>
#include <functional>

#include "tests/support/testdb.h"
#include "ui/common/dbsession.h"

namespace idem::test {

inline const char* kIncidentKey = "8e03978e-40d5-43e8-bc93-6894a57f9324";

/// Runs the crafted rows script against db.
inline void seedConsoleRows(const TestDatabase& db) {
  QFile file(QStringLiteral(IDEM_SOURCE_DIR "/tests/ui/data/console_seed.sql"));
  if (!file.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read console_seed.sql");
  auto conn = db.connect();
  conn.script(file.readAll().toStdString());
}

/// Opens session on conninfo and waits until it is connected (or fails the test).
inline bool openSession(ui::DbSession& session, const std::string& conninfo, int timeoutMs = 15000) {
  ui::ConnectParams params;
  params.conninfo = QString::fromStdString(conninfo);
  session.open(params);
  QElapsedTimer t;
  t.start();
  while (session.state() != ui::DbSession::State::Connected && t.elapsed() < timeoutMs) {
    if (session.state() == ui::DbSession::State::Failed) return false;
    QTest::qWait(20);
  }
  return session.state() == ui::DbSession::State::Connected;
}

/// Largest gap between 10 ms timer ticks of the event loop while `until` is false, in ms: how
/// long the GUI thread was kept from its events. `ticks`: how many ticks it saw meanwhile.
inline qint64 worstTickGap(const std::function<bool()>& until, int timeoutMs, int* ticks = nullptr) {
  QElapsedTimer clock;
  clock.start();
  qint64 last = 0;
  qint64 worst = 0;
  QTimer tick;
  tick.setInterval(10);
  QObject::connect(&tick, &QTimer::timeout, &tick, [&] {
    const qint64 now = clock.elapsed();
    worst = std::max(worst, now - last);
    last = now;
    if (ticks) ++*ticks;
  });
  tick.start();
  while (!until() && clock.elapsed() < timeoutMs) QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
  return worst;
}

}  // namespace idem::test
