#pragma once
// The Explain tab: core's plain-language narrative of what happened to the key, beside the
// timeline, with export for the ticket.
#include <QWidget>

class QTextBrowser;

namespace idem::ui {

class EventModel;
class TimelineWidget;

class ExplainView final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ExplainView)

 public:
  explicit ExplainView(EventModel* model, QWidget* parent = nullptr);
  [[nodiscard]] QString narrativeText() const;

 private:
  void rebuild();

  EventModel* m_model;
  TimelineWidget* m_timeline;
  QTextBrowser* m_text;
};

}  // namespace idem::ui
