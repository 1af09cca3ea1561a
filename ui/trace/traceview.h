#pragma once
// The Trace tab: the timeline above the table of the same events. Clicking a marker
// selects its row and the reverse.
#include <QWidget>

class QLabel;
class QTableView;

namespace idem::ui {

class EventModel;
class TimelineWidget;

class TraceView final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TraceView)

 public:
  explicit TraceView(EventModel* model, QWidget* parent = nullptr);
  [[nodiscard]] TimelineWidget* timeline() const { return m_timeline; }
  [[nodiscard]] QTableView* table() const { return m_table; }

 private:
  void updateSummary();

  EventModel* m_model;
  QLabel* m_summary;
  TimelineWidget* m_timeline;
  QTableView* m_table;
};

}  // namespace idem::ui
