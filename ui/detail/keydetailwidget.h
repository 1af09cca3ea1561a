#pragma once
// The lower half of the Keys workspace: a key's summary and its tabs (Response,
// Generations, Trace, Explain). Loads a key's detail on its session's worker thread.
#include <QWidget>

#include "ui/common/dbresult.h"
#include "ui/detail/keydetail.h"

class QLabel;
class QTabWidget;
class QTableView;

namespace idem::ui {

class DbSession;
class EventModel;
class ExplainView;
class GenerationModel;
class ResponseView;
class TraceView;

class KeyDetailWidget final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(KeyDetailWidget)

 public:
  enum Tab { ResponseTab, GenerationsTab, TraceTab, ExplainTab };

  explicit KeyDetailWidget(DbSession* session, QWidget* parent = nullptr);

  /// Loads and shows ref; an invalid ref clears the tabs. generation > 0: the Response tab
  /// opens on that generation (the one a search by its resource id matched), else the live one.
  void showKey(const KeyRef& ref, int generation = 0);
  void reload();
  void setCurrentTab(Tab tab);
  [[nodiscard]] const KeyRef& key() const { return m_ref; }
  [[nodiscard]] const KeyDetail& detail() const { return m_detail; }
  [[nodiscard]] QTabWidget* tabs() const { return m_tabs; }
  [[nodiscard]] TraceView* traceView() const { return m_trace; }
  [[nodiscard]] ExplainView* explainView() const { return m_explain; }
  [[nodiscard]] EventModel* eventModel() const { return m_events; }
  [[nodiscard]] GenerationModel* generationModel() const { return m_generations; }

 signals:
  void detailLoaded();
  void loadFailed(const idem::ui::DbError& error);

 private:
  /// Shows detail (in the zone shown, explaining it again when needed); the Response tab on
  /// generation (0: the live one).
  void apply(KeyDetail detail, int generation);

  DbSession* m_session;
  KeyRef m_ref;
  int m_focusGeneration = 0;
  KeyDetail m_detail;
  quint64 m_generation = 0;
  QLabel* m_header;
  QTabWidget* m_tabs;
  ResponseView* m_response;
  GenerationModel* m_generations;
  QTableView* m_generationTable;
  EventModel* m_events;
  TraceView* m_trace;
  ExplainView* m_explain;
};

}  // namespace idem::ui
