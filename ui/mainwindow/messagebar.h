#pragma once
// The window's feedback line (issue 29): what the last action did — exported where, no match,
// copied, reconnecting — in a bar above the workspace. The status bar is the connection's;
// a message there was hidden behind it.
#include <QFrame>

class QLabel;
class QTimer;
class QToolButton;

namespace idem::ui {

class MessageBar final : public QFrame {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(MessageBar)

 public:
  enum class Kind { Info, Success, Warning };

  explicit MessageBar(QWidget* parent = nullptr);

  /// Shows text until the next message or the ✕. Plain messages go after a while; a file's
  /// message (folder non-empty) stays and offers "Open folder".
  void showText(const QString& text, Kind kind = Kind::Info, const QString& folder = {});
  [[nodiscard]] QString text() const;
  [[nodiscard]] QLabel* label() const { return m_text; }
  [[nodiscard]] QToolButton* openFolderButton() const { return m_openFolder; }

 private:
  QLabel* m_text;
  QToolButton* m_openFolder;
  QTimer* m_expiry;
  QString m_folder;
};

}  // namespace idem::ui
