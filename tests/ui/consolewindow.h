#pragma once
// The console's window as the ui suites drive it (header only): connected to a test store,
// and searched the way an agent does (Ctrl+K, Ctrl+V, Enter).
#include <QApplication>
#include <QClipboard>
#include <QLineEdit>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "ui/common/dbsession.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/mainwindow/mainwindow.h"

namespace idem::test {

/// Ctrl+K, paste text, Enter: the first half of every support case.
inline void pasteAndEnter(ui::MainWindow& window, const QString& text) {
  QApplication::clipboard()->setText(text);
  QTest::keyClick(&window, Qt::Key_K, Qt::ControlModifier);
  QTRY_VERIFY(window.searchBox()->hasFocus());
  QTest::keyClick(window.searchBox(), Qt::Key_V, Qt::ControlModifier);
  QCOMPARE(window.searchBox()->text(), text);
  QTest::keyClick(window.searchBox(), Qt::Key_Return);
}

/// A window with settings of its own (the case folder in a temporary folder), at a typical
/// size, shown and connected to conninfo.
struct ConsoleDesk {
  QTemporaryDir dir;
  QSettings settings{dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat};
  QString caseFolder = dir.filePath(QStringLiteral("cases"));
  std::unique_ptr<ui::MainWindow> window;

  /// False when the window did not connect within 15 s.
  bool open(const std::string& conninfo) {
    settings.setValue(QStringLiteral("cases/folder"), caseFolder);
    window = std::make_unique<ui::MainWindow>(settings);
    window->resize(1280, 800);
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get())) return false;
    window->connection()->connectProfile(ui::ConnectionProfile::fromConninfo(QString::fromStdString(conninfo)));
    return QTest::qWaitFor([this] { return window->browseSession()->state() == ui::DbSession::State::Connected; },
                           15000);
  }
};

}  // namespace idem::test
