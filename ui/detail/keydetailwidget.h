#pragma once
// The lower half of the Keys workspace: a key's summary and its tabs (Response,
// Generations, Trace, Explain). Loads a key's detail on its session's worker thread.
#include <QWidget>

#include "ui/common/dbresult.h"
#include "ui/keydata/keydetail.h"

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
  /// Closes the open key and says why in its place (a search that matched nothing): no other
  /// key's detail stays on screen to be exported.
  void clear(const QString& why);
  /// The store was lost (true): the header says how old the detail is and times stop counting;
  /// a fresh load ends it.
  void setStale(bool stale);
  /// The detail shown was read before the store was lost and not read again since.
  [[nodiscard]] bool isStale() const { return m_stale; }
  /// The header line (the key, what happened, when it expires; or why nothing is open).
  [[nodiscard]] QString headerText() const;
  /// The placeholder's text while no key is open ("" while one is).
  [[nodiscard]] QString placeholderText() const;
  void setCurrentTab(Tab tab);
  [[nodiscard]] const KeyRef& key() const { return m_ref; }
  [[nodiscard]] const KeyDetail& detail() const { return *m_detail; }
  /// The one copy of the detail shown, the same object every tab holds.
  [[nodiscard]] const SharedKeyDetail& sharedDetail() const { return m_detail; }
  [[nodiscard]] QTabWidget* tabs() const { return m_tabs; }
  /// What stands in for the tabs while no key is open (how to open one, or why none is).
  [[nodiscard]] QLabel* placeholder() const { return m_placeholder; }
  [[nodiscard]] TraceView* traceView() const { return m_trace; }
  [[nodiscard]] ExplainView* explainView() const { return m_explain; }
  [[nodiscard]] EventModel* eventModel() const { return m_events; }
  [[nodiscard]] GenerationModel* generationModel() const { return m_generations; }

 signals:
  void detailLoaded();
  void loadFailed(const idem::ui::DbError& error);
  /// The agent clicked the other key of a duplicate across keys in the header.
  void relatedKeyActivated(const idem::ui::KeyRef& key);

 private:
  /// Shows detail (in the zone shown, explaining it again when needed); the Response tab on
  /// generation (0: the live one).
  void apply(SharedKeyDetail detail, int generation);

  DbSession* m_session;
  KeyRef m_ref;
  int m_focusGeneration = 0;
  SharedKeyDetail m_detail = noKeyDetail();
  quint64 m_generation = 0;
  bool m_stale = false;
  QDateTime m_loadedAt;  // the server's clock when the detail was read
  QLabel* m_header;
  QLabel* m_placeholder;
  QTabWidget* m_tabs;
  ResponseView* m_response;
  GenerationModel* m_generations;
  QTableView* m_generationTable;
  EventModel* m_events;
  TraceView* m_trace;
  ExplainView* m_explain;
};

}  // namespace idem::ui
