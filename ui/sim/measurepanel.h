#pragma once
// The simulator's Measure tab: what real clients did against `idemctl serve
// --allow-fault-injection`'s fault routes, read from the store's idem_demo.fault_attempts on the
// session's worker thread and analysed by core/measure (the code `idemctl measure` runs), per
// client and fault (MeasureModel); for the chosen client the policy it fits, in words, with
// "Use as policy A/B" to load it into the simulator's policy editors.
#include <QWidget>

#include "core/measure/recorded.h"
#include "core/sim/config.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace idem::ui {
class DbSession;
struct DbError;
}  // namespace idem::ui

namespace idem::ui::sim {

class MeasureModel;

class MeasurePanel final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(MeasurePanel)

 public:
  enum class State {
    NoSession,     // no database to read (the simulator runs without one)
    Loading,       // a reading is on the worker thread
    Shown,         // figures in the table
    Empty,         // the table exists but holds no attempt in the window
    MissingTable,  // no idem_demo.fault_attempts in this database
    BadSince,      // the since text is neither a duration nor a timestamp
    Failed         // the store refused or could not be reached
  };
  Q_ENUM(State)

  explicit MeasurePanel(QWidget* parent = nullptr);

  /// The connection to read through; the panel reads when it is first shown and after each
  /// (re)connection while it has been shown.
  void setSession(DbSession* session);
  /// Reads again with the since field's window.
  void reload();
  /// Shows the fitted policy of reports()[client] and enables its buttons.
  void selectClient(int client);

  [[nodiscard]] State state() const { return m_state; }
  [[nodiscard]] int currentClient() const { return m_client; }
  [[nodiscard]] MeasureModel* model() const { return m_model; }
  [[nodiscard]] QTableView* table() const { return m_table; }
  [[nodiscard]] QLineEdit* sinceEdit() const { return m_since; }
  [[nodiscard]] QPushButton* refreshButton() const { return m_refresh; }
  [[nodiscard]] QPushButton* useAButton() const { return m_useA; }
  [[nodiscard]] QPushButton* useBButton() const { return m_useB; }
  /// The empty or error state's text (hidden while figures are shown).
  [[nodiscard]] QLabel* messageLabel() const { return m_message; }
  [[nodiscard]] QLabel* statusLabel() const { return m_status; }
  [[nodiscard]] QLabel* policyLabel() const { return m_policyWords; }

 signals:
  /// A reading was answered (figures, empty, or an error shown).
  void loaded();
  /// "Use as policy A" (0) or "B" (1): the fitted policy of client (its User-Agent).
  void usePolicy(int which, const idem::sim::Policy& policy, const QString& client);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  struct Answer {
    bool badSince = false;
    idem::measure::Measurement measured;
  };
  void answered(const QString& since, Answer answer);
  void showError(const DbError& error);
  void showMessage(State state, const QString& html);
  void use(int which);

  DbSession* m_session = nullptr;
  MeasureModel* m_model;
  State m_state = State::NoSession;
  bool m_everShown = false;
  quint64 m_generation = 0;
  quint64 m_ticket = 0;
  int m_client = -1;

  QLineEdit* m_since;
  QPushButton* m_refresh;
  QLabel* m_status;
  QLabel* m_message;
  QWidget* m_content;
  QTableView* m_table;
  QLabel* m_policyTitle;
  QLabel* m_policyWords;
  QLabel* m_notes;
  QPushButton* m_useA;
  QPushButton* m_useB;
};

}  // namespace idem::ui::sim
