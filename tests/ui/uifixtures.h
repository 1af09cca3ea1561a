#pragma once
// Shared by the ui suites (header only: tests link library targets, never recompile them).
// A fresh migrated database filled with tests/ui/data/console_seed.sql, and an open
// DbSession on it.
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTimer>
#include <QtTest>

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

/// Runs the event loop until `wanted` 10 ms timer ticks have fired (or `timeoutMs` passed) and
/// returns how many fired. Called while the work under test is held by something the test owns
/// (a lock, a saturated thread pool): a GUI thread that waited on that work would see no tick
/// until the test let go, so the proof is the order of events, not a time bound.
inline int ticksWhileHeld(int wanted, int timeoutMs = 15000) {
  int ticks = 0;
  QTimer tick;
  tick.setInterval(10);
  QObject::connect(&tick, &QTimer::timeout, &tick, [&] { ++ticks; });
  tick.start();
  QElapsedTimer clock;
  clock.start();
  while (ticks < wanted && clock.elapsed() < timeoutMs) QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
  return ticks;
}

}  // namespace idem::test
