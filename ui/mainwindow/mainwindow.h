#pragma once
// The console's one window: a top bar (profile, global search), a left rail choosing the
// workspace (Keys, Tiers, Simulator), the workspace, and the status bar. It only arranges
// the workspaces and wires the connection; each workspace owns its models.
#include <QMainWindow>

class QActionGroup;
class QLineEdit;
class QMenu;
class QSettings;
class QStackedWidget;
class QToolButton;

namespace idem::ui {

class CaseBook;
class CasesView;
class ConnectionBanner;
class ConnectionController;
class DbSession;
class KeysWorkspace;
class MessageBar;
struct ConnectionProfile;
namespace sim {
class SimulatorWorkspace;
}

class MainWindow final : public QMainWindow {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(MainWindow)

 public:
  enum Workspace { KeysPage, TiersPage, SimulatorPage, CasesPage };

  explicit MainWindow(QSettings& settings, QWidget* parent = nullptr);
  ~MainWindow() override;

  [[nodiscard]] ConnectionController* connection() const { return m_connection; }
  [[nodiscard]] KeysWorkspace* keys() const { return m_keys; }
  [[nodiscard]] DbSession* browseSession() const { return m_browse; }
  [[nodiscard]] DbSession* detailSession() const { return m_detail; }
  [[nodiscard]] DbSession* tiersSession() const { return m_tiers; }
  [[nodiscard]] ConnectionBanner* banner() const { return m_banner; }
  [[nodiscard]] QLineEdit* searchBox() const { return m_search; }
  [[nodiscard]] CaseBook* caseBook() const { return m_caseBook; }
  [[nodiscard]] CasesView* cases() const { return m_cases; }
  [[nodiscard]] sim::SimulatorWorkspace* simulator() const { return m_simulator; }
  /// The feedback line above the workspace (what the last action did).
  [[nodiscard]] MessageBar* messages() const { return m_messages; }
  void setWorkspace(Workspace workspace);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  /// The key browser, searching for `text` as the search box does (a key, an id, a prefix).
  void openInKeys(const QString& text);
  void buildTopBar();
  void buildRail();
  void addTimeZoneMenu(QMenu* menu);
  void buildCases();
  void profileChanged(const ConnectionProfile& profile);
  void restoreLayout();
  void saveLayout();
  void announceConnection();

  QSettings& m_settings;
  DbSession* m_browse;
  DbSession* m_detail;
  DbSession* m_tiers;
  ConnectionController* m_connection;
  ConnectionBanner* m_banner;
  QStackedWidget* m_stack;
  KeysWorkspace* m_keys;
  sim::SimulatorWorkspace* m_simulator = nullptr;
  CaseBook* m_caseBook;
  CasesView* m_cases;
  QToolButton* m_profileButton = nullptr;
  QLineEdit* m_search = nullptr;
  QActionGroup* m_rail = nullptr;
  MessageBar* m_messages;
  bool m_storeLost = false;  // the browse session lost the store (announced once, and its return)
};

}  // namespace idem::ui
