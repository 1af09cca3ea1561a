#pragma once
// The status bar's connection line: "● connected 10.0.3.7:5432 idem · user support_ro ·
// read-only · 3 ms · schema v4 · policy v7 · PostgreSQL 15 · TLS on (TLSv1.3, verify-full: …)",
// or what is wrong.
#include <QLabel>

class QCheckBox;
class QLineEdit;
class QPushButton;

namespace idem::ui {

class DbSession;

class StatusWidget final : public QLabel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(StatusWidget)

 public:
  explicit StatusWidget(DbSession* session, QWidget* parent = nullptr);

 private:
  void refresh();
  DbSession* m_session;
};

/// Shown above the workspace while the session is not connected: the failure explained,
/// a password field when the server wants one, Retry and Edit connection.
class ConnectionBanner final : public QFrame {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ConnectionBanner)

 public:
  explicit ConnectionBanner(DbSession* session, QWidget* parent = nullptr);
  [[nodiscard]] QString messageText() const;

 signals:
  void retryRequested();
  /// remember: the user ticked "Remember in the system keyring".
  void passwordEntered(const QString& password, bool remember);
  void editRequested();

 private:
  void refresh();
  DbSession* m_session;
  QLabel* m_text;
  QLineEdit* m_password;
  QCheckBox* m_remember;
  QPushButton* m_connect;
};

}  // namespace idem::ui
