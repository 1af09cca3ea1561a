#include "ui/mainwindow/mainwindow.h"

#include <QAction>
#include <QActionGroup>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QShortcut>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QToolBar>
#include <QGuiApplication>
#include <QScreen>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/cases/casebook.h"
#include "ui/cases/casefolder.h"
#include "ui/cases/caseticket.h"
#include "ui/cases/casesview.h"
#include "ui/common/dbsession.h"
#include "ui/common/timezonesetting.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/connection/statuswidget.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/explain/explainview.h"
#include "ui/explain/lettersettingsdialog.h"
#include "ui/keys/keysworkspace.h"
#include "ui/mainwindow/messagebar.h"
#include "ui/sim/simulatorworkspace.h"
#include "ui/tiers/tiersworkspace.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

[[maybe_unused]] QWidget* placeholder(const QString& title, const QString& text, QWidget* parent) {
  auto* label = new QLabel(u"<h2>"_s % title.toHtmlEscaped() % u"</h2><p>"_s % text.toHtmlEscaped() % u"</p>"_s, parent);
  label->setAlignment(Qt::AlignCenter);
  label->setWordWrap(true);
  return label;
}

}  // namespace

MainWindow::MainWindow(QSettings& settings, QWidget* parent)
    : QMainWindow(parent), m_settings(settings), m_browse(new DbSession(u"db-browse"_s, this)),
      m_detail(new DbSession(u"db-detail"_s, this)), m_tiers(new DbSession(u"db-tiers"_s, this)),
      m_connection(new ConnectionController({m_browse, m_detail, m_tiers}, settings, this)),
      m_banner(new ConnectionBanner(m_browse, this)), m_stack(new QStackedWidget(this)),
      m_keys(new KeysWorkspace(m_browse, m_detail, this)), m_caseBook(new CaseBook(this)), m_cases(nullptr),
      m_messages(new MessageBar(this)) {
  setWindowTitle(tr("Idem console"));
  TimeZoneSetting::instance().load(m_settings);
  // One session reports the connection; the others ping rarely, just to notice a loss.
  m_detail->setPingInterval(30000);
  m_tiers->setPingInterval(30000);
  m_stack->addWidget(m_keys);
  // Tiers has a connection of its own: an analysis takes seconds on a large trace, and a key's
  // detail must not queue behind it.
  auto* tiersView = new TiersWorkspace(m_tiers, this);
  m_stack->addWidget(tiersView);
  connect(tiersView, &TiersWorkspace::message, this, [this](const QString& text) { m_messages->showText(text); });
  connect(tiersView, &TiersWorkspace::keyRequested, this, &MainWindow::openInKeys);
  m_simulator = new sim::SimulatorWorkspace(this);
  auto* simulator = m_simulator;
  // Measure reads on the analysis connection (Tiers'): a small table, never in a key's way.
  simulator->setSession(m_tiers);
  m_stack->addWidget(simulator);
  connect(simulator, &sim::SimulatorWorkspace::message, this,
          [this](const QString& text) { m_messages->showText(text); });
  // Live mode's keys are ordinary keys: show them in the key browser by their prefix.
  connect(simulator, &sim::SimulatorWorkspace::keysRequested, this, &MainWindow::openInKeys);

  buildCases();

  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(4, 4, 4, 0);
  layout->addWidget(m_banner);
  layout->addWidget(m_messages);
  layout->addWidget(m_stack, 1);
  setCentralWidget(central);
  buildTopBar();
  buildRail();
  // The status bar is the connection's; what an action did goes to the message bar above the
  // workspace (a status-bar message was hidden behind this widget).
  statusBar()->addPermanentWidget(new StatusWidget(m_browse, this), 1);

  connect(m_keys, &KeysWorkspace::message, this, [this](const QString& text) { m_messages->showText(text); });
  connect(m_keys, &KeysWorkspace::warning, this,
          [this](const QString& text) { m_messages->showText(text, MessageBar::Kind::Warning); });
  connect(m_browse, &DbSession::stateChanged, this, &MainWindow::announceConnection);
  connect(m_banner, &ConnectionBanner::retryRequested, m_connection, &ConnectionController::retry);
  connect(m_banner, &ConnectionBanner::passwordEntered, m_connection, &ConnectionController::setPassword);
  connect(m_connection, &ConnectionController::keyringResult, this,
          [this](bool, const QString& text) { m_messages->showText(text); });
  connect(m_banner, &ConnectionBanner::editRequested, this, [this] { m_connection->editProfiles(this); });
  connect(m_connection, &ConnectionController::profileChanged, this, &MainWindow::profileChanged);
  connect(m_connection, &ConnectionController::paramsChanged, m_keys, &KeysWorkspace::setConnectParams);
  restoreLayout();
}

MainWindow::~MainWindow() { m_cases->saveNotes(); }

void MainWindow::buildCases() {
  // The case book is the agent's own file; the console works without it (it says why).
  if (!m_caseBook->open(CaseBook::pathFrom(m_settings)))
    QTimer::singleShot(0, this, [this] {
      m_messages->showText(tr("The case book is not available (%1): lookups and exports are not kept.")
                               .arg(m_caseBook->error()),
                           MessageBar::Kind::Warning);
    });
  m_simulator->setCaseBook(m_caseBook);  // its saved scenarios
  m_cases = new CasesView(m_caseBook, this);
  m_stack->addWidget(m_cases);
  connect(m_keys, &KeysWorkspace::landed, this, [this](const KeyHit& hit, const QString& searched) {
    m_caseBook->recordLookup(searched, hit.tenant, hit.endpoint, hit.key, hit.generation, hit.resourceRef);
  });
  connect(m_keys, &KeysWorkspace::caseExported, this, [this](const KeyRef& key, const QString& path) {
    m_caseBook->recordExport(key.key, path);
    m_messages->showText(tr("Exported %1").arg(QDir::toNativeSeparators(path)), MessageBar::Kind::Success,
                         QFileInfo(path).absolutePath());
  });
  // The customer's letter: the agent's letter settings, the open case's ticket.
  ExplainView* explain = m_keys->detail()->explainView();
  // The ticket is the one of the case the open key is in: never another customer's case.
  explain->setLetterSource([this] {
    const KeyRef& ref = m_keys->detail()->detail().ref;
    return LetterSettings::load(m_settings).options(m_caseBook->ticketFor(ref.tenant, ref.endpoint, ref.key));
  });
  connect(m_caseBook, &CaseBook::changed, explain, &ExplainView::refreshLetter);
  connect(m_cases, &CasesView::searchRequested, this, &MainWindow::openInKeys);
}

void MainWindow::openInKeys(const QString& text) {
  setWorkspace(KeysPage);
  m_search->setText(text);
  m_keys->search(text);
}

namespace {
// The open key as the case book files it, with the resource id of its latest generation.
LetterKey letterKey(const KeyDetail& d) {
  QString resource;
  if (!d.generations().empty() && d.generations().back().resourceRef)
    resource = QString::fromStdString(*d.generations().back().resourceRef);
  return {d.ref.tenant, d.ref.endpoint, d.ref.key, resource};
}
}  // namespace

void MainWindow::buildTopBar() {
  auto* bar = addToolBar(tr("Connection and search"));
  bar->setObjectName(u"topBar"_s);
  bar->setMovable(false);
  m_profileButton = new QToolButton(bar);
  m_profileButton->setToolButtonStyle(Qt::ToolButtonTextOnly);
  m_profileButton->setText(tr("not connected"));
  m_profileButton->setToolTip(tr("Choose or edit the connection profile"));
  connect(m_profileButton, &QToolButton::clicked, this, [this] { m_connection->editProfiles(this); });
  auto* profileMenu = new QMenu(m_profileButton);
  profileMenu->addAction(tr("&Edit connections…"), this, [this] { m_connection->editProfiles(this); });
  profileMenu->addAction(tr("&Forget this connection's password (system keyring)"), m_connection,
                         &ConnectionController::forgetPassword);
  profileMenu->addAction(tr("&Case folder…"), this, [this] {
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Case folder (exports for customers)"),
                                                             caseFolder(m_settings));
    if (folder.isEmpty()) return;
    m_settings.setValue(QLatin1String(kCaseFolderSetting), folder);
    m_messages->showText(tr("Exports for customers go to %1").arg(folder));
  });
  profileMenu->addAction(tr("&Letters to customers…"), this, [this] {
    LetterSettingsDialog dialog(LetterSettings::load(m_settings), this);
    if (dialog.exec() != QDialog::Accepted) return;
    dialog.settings().save(m_settings);
    m_keys->detail()->explainView()->refreshLetter();
  });
  addTimeZoneMenu(profileMenu);
  m_profileButton->setMenu(profileMenu);
  m_profileButton->setPopupMode(QToolButton::MenuButtonPopup);
  bar->addWidget(m_profileButton);
  auto* spacer = new QWidget(bar);
  spacer->setFixedWidth(24);
  bar->addWidget(spacer);
  m_search = new QLineEdit(bar);
  m_search->setObjectName(u"globalSearch"_s);
  m_search->setPlaceholderText(tr("Key, pay_… / re_… / ord_… id, or key prefix   (Ctrl+K)"));
  m_search->setClearButtonEnabled(true);
  m_search->setMinimumWidth(420);
  bar->addWidget(m_search);
  auto* focusSearch = new QAction(tr("Search"), this);
  focusSearch->setShortcut(QKeySequence(u"Ctrl+K"_s));
  focusSearch->setShortcutContext(Qt::ApplicationShortcut);
  connect(focusSearch, &QAction::triggered, this, [this] {
    setWorkspace(KeysPage);
    m_search->setFocus(Qt::ShortcutFocusReason);
    m_search->selectAll();
  });
  addAction(focusSearch);
  // The support case's last action: the open key's explanation for the customer (no keys,
  // leases or generations) as PDF into the case folder, no dialog. Ctrl+P
  // (print), not Ctrl+E: on X11 the search box takes Ctrl+E as "end of line" before any shortcut.
  auto* exportCase = new QAction(tr("Export for customer"), this);
  exportCase->setObjectName(u"exportForCustomer"_s);
  exportCase->setShortcut(QKeySequence(u"Ctrl+P"_s));
  exportCase->setShortcutContext(Qt::ApplicationShortcut);
  auto exportForCustomer = [this] {
    m_keys->setCaseFolder(caseFolder(m_settings));
    auto exportLetter = [this](const QString&) {
      m_keys->exportToCaseFolder(explain::Audience::Customer);  // says why when it refuses
    };
    // The letter quotes the case's ticket: asked for only when there is a letter to write and no
    // case is open; a refused export says why without asking for anything.
    if (m_keys->exportBlockedReason().isEmpty() && m_keys->detail()->detail().ref.isValid())
      withCaseTicket(m_caseBook, m_cases, this, letterKey(m_keys->detail()->detail()), exportLetter);
    else
      exportLetter({});
  };
  connect(exportCase, &QAction::triggered, this, exportForCustomer);
  addAction(exportCase);
  bar->addAction(exportCase);
  // While the action is off, Ctrl+P still answers: with why there is nothing to export. The two
  // are never on together (an ambiguous shortcut fires neither).
  auto* refusedExport = new QShortcut(QKeySequence(u"Ctrl+P"_s), this, exportForCustomer, Qt::ApplicationShortcut);
  auto blocked = [exportCase, refusedExport](const QString& reason) {
    exportCase->setEnabled(reason.isEmpty());
    refusedExport->setEnabled(!reason.isEmpty());
    exportCase->setToolTip(reason.isEmpty() ? tr("Writes the customer's letter for the open key into the case folder (Ctrl+P)")
                                            : reason);
  };
  blocked(m_keys->exportBlockedReason());
  connect(m_keys, &KeysWorkspace::exportBlockedChanged, this, blocked);
  connect(m_search, &QLineEdit::textEdited, m_keys, &KeysWorkspace::setTypedSearch);
  connect(m_search, &QLineEdit::returnPressed, this, [this] {
    setWorkspace(KeysPage);
    m_keys->search(m_search->text());
  });
}

void MainWindow::announceConnection() {
  const DbSession::State state = m_browse->state();
  // Reconnecting: a store this window was connected to went away (a first failure is the banner's).
  if (state == DbSession::State::Reconnecting) {
    if (std::exchange(m_storeLost, true)) return;
    m_messages->showText(tr("The store is unreachable: reconnecting… What is shown is as it was read; exports wait "
                            "for fresh data."),
                         MessageBar::Kind::Warning);
  } else if (state == DbSession::State::Connected && std::exchange(m_storeLost, false)) {
    m_messages->showText(tr("Reconnected: the views are read again."), MessageBar::Kind::Success);
  }
}

void MainWindow::addTimeZoneMenu(QMenu* menu) {
  // Every time shown to people follows this; CSV and JSON stay ISO-8601 UTC.
  auto* times = menu->addMenu(tr("&Times in"));
  auto* group = new QActionGroup(times);
  const std::pair<DisplayZone, QString> choices[] = {
      {DisplayZone::Utc, tr("&UTC")},
      {DisplayZone::Local, tr("&Local time (%1)").arg(TimeZoneSetting::localZoneName())}};
  for (const auto& [zone, label] : choices) {
    auto* action = times->addAction(label);
    action->setObjectName(zone == DisplayZone::Utc ? u"timesInUtc"_s : u"timesInLocal"_s);
    action->setCheckable(true);
    action->setChecked(TimeZoneSetting::instance().zone() == zone);
    group->addAction(action);
    connect(action, &QAction::triggered, this, [this, zone = zone] {
      TimeZoneSetting::instance().setZone(zone);
      TimeZoneSetting::instance().save(m_settings);
    });
  }
  // Another window of this process may change it: the check mark follows.
  connect(&TimeZoneSetting::instance(), &TimeZoneSetting::changed, group, [group](DisplayZone zone) {
    group->actions().at(zone == DisplayZone::Utc ? 0 : 1)->setChecked(true);
  });
}

void MainWindow::buildRail() {
  auto* rail = new QToolBar(tr("Workspaces"), this);
  rail->setObjectName(u"rail"_s);
  rail->setMovable(false);
  rail->setToolButtonStyle(Qt::ToolButtonTextOnly);
  addToolBar(Qt::LeftToolBarArea, rail);
  m_rail = new QActionGroup(this);
  const QString names[] = {tr("Keys"), tr("Tiers"), tr("Sim"), tr("Cases")};
  for (int i = 0; i < 4; ++i) {
    auto* a = rail->addAction(names[i]);
    a->setCheckable(true);
    a->setShortcut(QKeySequence(Qt::ALT | static_cast<Qt::Key>(Qt::Key_1 + i)));
    m_rail->addAction(a);
    connect(a, &QAction::triggered, this, [this, i] { setWorkspace(static_cast<Workspace>(i)); });
  }
  m_rail->actions().first()->setChecked(true);
}

void MainWindow::setWorkspace(Workspace workspace) {
  m_stack->setCurrentIndex(workspace);
  m_rail->actions().at(workspace)->setChecked(true);
}

void MainWindow::profileChanged(const ConnectionProfile& profile) {
  m_profileButton->setText(u"▾ "_s % profile.displayName());
  setWindowTitle(tr("%1 — Idem console").arg(profile.name));
}

void MainWindow::restoreLayout() {
  // First run: most of the screen's available area, centred (the widgets' size hints alone
  // gave ~1080×670 on a 1600×1000 screen, too small for the tables' headers).
  if (!restoreGeometry(m_settings.value(u"window/geometry"_s).toByteArray())) {
    if (const QScreen* screen = QGuiApplication::primaryScreen()) {
      const QRect area = screen->availableGeometry();
      const QSize size(area.width() * 85 / 100, area.height() * 85 / 100);
      setGeometry(QStyle::alignedRect(Qt::LeftToRight, Qt::AlignCenter, size, area));
    }
  }
  restoreState(m_settings.value(u"window/state"_s).toByteArray());
  for (auto* s : findChildren<QSplitter*>())
    if (!s->objectName().isEmpty()) s->restoreState(m_settings.value(u"splitters/"_s % s->objectName()).toByteArray());
  setWorkspace(static_cast<Workspace>(std::clamp(m_settings.value(u"window/workspace"_s, 0).toInt(), 0, 3)));
}

void MainWindow::saveLayout() {
  m_settings.setValue(u"window/geometry"_s, saveGeometry());
  m_settings.setValue(u"window/state"_s, saveState());
  for (auto* s : findChildren<QSplitter*>())
    if (!s->objectName().isEmpty()) m_settings.setValue(u"splitters/"_s % s->objectName(), s->saveState());
  m_settings.setValue(u"window/workspace"_s, m_stack->currentIndex());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveLayout();
  event->accept();
}

}  // namespace idem::ui
