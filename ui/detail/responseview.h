#pragma once
// The Response tab: the stored status, the replayed headers and the body, JSON
// pretty-printed, for the generation chosen (the live one by default).
#include <QWidget>

#include "ui/keydata/keydetail.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QTreeWidget;

namespace idem::ui {

class ResponseView final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ResponseView)

 public:
  explicit ResponseView(QWidget* parent = nullptr);
  /// Shows generation `generation` of detail when it has one, else the live generation.
  void setDetail(SharedKeyDetail detail, int generation = 0);
  /// The generation number shown, 0 when none.
  [[nodiscard]] int shownGeneration() const;
  [[nodiscard]] QString bodyText() const;
  [[nodiscard]] const SharedKeyDetail& sharedDetail() const { return m_detail; }

  /// Pretty-prints JSON; other bodies as UTF-8 text, or a hex dump when not text.
  [[nodiscard]] static QString formatBody(const QByteArray& body);

 private:
  void showGeneration(int index);

  SharedKeyDetail m_detail = noKeyDetail();
  QComboBox* m_generation;
  QLabel* m_status;
  QTreeWidget* m_headers;
  QPlainTextEdit* m_body;
};

}  // namespace idem::ui
