// idem-console: the operations console for support staff (docs/design.md §7).
//   idem-console [--db CONNINFO] [--demo]
// With --db it opens that store; with neither it shows the saved profiles.
// --screenshot FILE (with --search, --tab, --workspace, --sim-tab, --run) grabs the window once
// the data is shown, then quits: how the README's screenshots are taken from the real program.
#include <unistd.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QLineEdit>
#include <QSettings>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <cstdio>
#include <string_view>
#include <vector>

#include "core/sim/scenarios.h"
#include "core/store/migrations.h"
#include "ui/common/dbsession.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/connection/profile.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/keys/duplicatelistmodel.h"
#include "ui/keys/duplicatesview.h"
#include "ui/keys/keysworkspace.h"
#include "ui/mainwindow/mainwindow.h"
#include "ui/sim/simulatorworkspace.h"

using namespace Qt::StringLiterals;

namespace {

// Every option the console takes, described once for --help and read after parsing.
struct Options {
  QCommandLineOption db{u"db"_s, u"Open this store (libpq keywords, postgresql:// URI or service=NAME)."_s,
                        u"CONNINFO"_s};
  QCommandLineOption demo{u"demo"_s, u"Start the demo store and open it."_s};
  QCommandLineOption settingsFile{u"settings"_s, u"Keep settings in this INI file instead of the user's."_s, u"FILE"_s};
  QCommandLineOption search{u"search"_s, u"Search for this key or resource id once connected."_s, u"TEXT"_s};
  QCommandLineOption duplicates{u"suspected-duplicates"_s,
                                u"Keys workspace: list the suspected duplicates across keys and open the newest."_s};
  QCommandLineOption tab{u"tab"_s, u"Detail tab to show: response, generations, trace, explain."_s, u"NAME"_s};
  QCommandLineOption screenshot{u"screenshot"_s, u"Save a PNG of the window after --delay ms, then quit."_s, u"FILE"_s};
  QCommandLineOption delay{u"delay"_s, u"Milliseconds before the screenshot (default 3000)."_s, u"MS"_s, u"3000"_s};
  QCommandLineOption size{u"size"_s, u"Window size, e.g. 1400x900."_s, u"WxH"_s};
  QCommandLineOption workspace{u"workspace"_s, u"Workspace to show: keys, tiers, sim, cases."_s, u"NAME"_s};
  QCommandLineOption runSim{u"run"_s, u"Run the simulator's scenario once the window is shown."_s};
  QCommandLineOption simTab{u"sim-tab"_s,
                            u"Open the simulator on this tab: ab, offsets, load, heatmap, live, measure."_s, u"NAME"_s};
  QCommandLineOption simEditor{u"sim-editor"_s,
                               u"Show this simulator editor: policy-a, policy-b, server, across-keys."_s, u"NAME"_s};
  QCommandLineOption scenario{u"scenario"_s,
                              u"Load this built-in simulator scenario: charge-twice, storm, budget-spike, new-keys."_s,
                              u"NAME"_s};

  void addTo(QCommandLineParser& cli) const {
    cli.setApplicationDescription(
        u"Idem operations console: browse idempotency keys, trace replays, explain duplicates."_s);
    cli.addHelpOption();
    cli.addVersionOption();
    cli.addOptions({db, demo, settingsFile, search, duplicates, tab, screenshot, delay, size, workspace, runSim, simTab, simEditor, scenario});
  }
};

void nameApplication() {
  QCoreApplication::setOrganizationName(u"Idem"_s);
  QCoreApplication::setApplicationName(u"idem-console"_s);
  QCoreApplication::setApplicationVersion(
      QStringLiteral(IDEM_VERSION " (schema %1)").arg(idem::store::expectedSchemaVersion()));
}

// --help and --version need no display: answered by a QCoreApplication, which loads no
// platform plugin (a QApplication without a display aborts in the xcb plugin).
bool wantsTextOnly(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help" || a == "-?" || a == "--help-all" || a == "-v" || a == "--version") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options;
  if (wantsTextOnly(argc, argv)) {
    // The usage line names the program as a user types it, not the path it was started by
    // (help2man makes the man page from this text).
    std::vector<char*> args(argv, argv + argc);
    char name[] = "idem-console";
    args[0] = name;
    QCoreApplication core(argc, args.data());
    nameApplication();
    QCommandLineParser cli;
    options.addTo(cli);
    cli.process(core);  // prints help or version and exits
    return 0;
  }
  QApplication app(argc, argv);
  nameApplication();
  QCommandLineParser cli;
  options.addTo(cli);
  cli.process(app);
  // Plain references, not a structured binding: the lambdas below capture some of them.
  const QCommandLineOption& db = options.db;
  const QCommandLineOption& demo = options.demo;
  const QCommandLineOption& settingsFile = options.settingsFile;
  const QCommandLineOption& search = options.search;
  const QCommandLineOption& tab = options.tab;
  const QCommandLineOption& duplicates = options.duplicates;
  const QCommandLineOption& screenshot = options.screenshot;
  const QCommandLineOption& delay = options.delay;
  const QCommandLineOption& size = options.size;
  const QCommandLineOption& workspace = options.workspace;
  const QCommandLineOption& runSim = options.runSim;
  const QCommandLineOption& simTab = options.simTab;
  const QCommandLineOption& scenario = options.scenario;
  const QCommandLineOption& simEditor = options.simEditor;

  if (cli.isSet(demo)) {
    // The demo (private PostgreSQL, endpoint, traffic) is idemctl's; it opens a console on
    // its store by itself. Hand over to it: this process becomes `idemctl demo`.
    // Installed, idemctl sits next to the console (bin/); in a build tree, in app/idemctl.
    QString idemctl = QCoreApplication::applicationDirPath() + u"/idemctl"_s;
    if (!QFileInfo(idemctl).isExecutable()) idemctl = QCoreApplication::applicationDirPath() + u"/../idemctl/idemctl"_s;
    if (QFileInfo(idemctl).isExecutable()) {
      const QByteArray exe = QFileInfo(idemctl).canonicalFilePath().toLocal8Bit();
      char* args[] = {const_cast<char*>(exe.constData()), const_cast<char*>("demo"), nullptr};
      execv(exe.constData(), args);
    }
    std::fprintf(stderr,
                 "idem-console: idemctl is not built next to the console. Start the demo with `./run demo`; it opens "
                 "the console on its store.\n");
    return 2;
  }

  std::unique_ptr<QSettings> settings = cli.isSet(settingsFile)
                                            ? std::make_unique<QSettings>(cli.value(settingsFile), QSettings::IniFormat)
                                            : std::make_unique<QSettings>();
  idem::ui::MainWindow window(*settings);
  if (cli.isSet(size)) {
    const QStringList wh = cli.value(size).split(u'x');
    if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
  }
  window.show();

  if (cli.isSet(db)) {
    window.connection()->connectProfile(idem::ui::ConnectionProfile::fromConninfo(cli.value(db)));
  } else {
    // Shown once the event loop runs so the main window is there behind the dialog.
    QTimer::singleShot(0, &window, [&window] {
      window.connection()->editProfiles(&window);
    });
  }

  if (cli.isSet(search)) {
    // Search once the first connection is up; later reconnects do not search again.
    auto conn = std::make_shared<QMetaObject::Connection>();
    *conn = QObject::connect(window.browseSession(), &idem::ui::DbSession::opened, &window, [&window, &cli, &search, conn] {
      QObject::disconnect(*conn);
      window.searchBox()->setText(cli.value(search));
      window.keys()->search(cli.value(search));
    });
  }
  if (cli.isSet(duplicates)) {
    // The list once connected, its newest pair opened when it arrives (once).
    auto conn = std::make_shared<QMetaObject::Connection>();
    *conn = QObject::connect(window.browseSession(), &idem::ui::DbSession::opened, &window, [&window, conn] {
      QObject::disconnect(*conn);
      idem::ui::KeyFilter filter;
      filter.suspectedDuplicates = true;
      window.keys()->setFilter(filter);
    });
    auto loaded = std::make_shared<QMetaObject::Connection>();
    *loaded = QObject::connect(window.keys()->duplicatesView()->model(), &idem::ui::DuplicateListModel::pageLoaded,
                               &window, [&window, loaded](int rows, bool) {
                                 QObject::disconnect(*loaded);
                                 if (rows > 0) window.keys()->duplicatesView()->table()->selectRow(0);
                               });
  }
  if (cli.isSet(tab)) {
    static const QStringList names{u"response"_s, u"generations"_s, u"trace"_s, u"explain"_s};
    const int index = static_cast<int>(names.indexOf(cli.value(tab).toLower()));
    if (index >= 0) {
      const auto chosen = static_cast<idem::ui::KeyDetailWidget::Tab>(index);
      window.keys()->detail()->setCurrentTab(chosen);
      // The tab asked for wins over the search's own landing (Explain for a duplicate), once.
      auto conn = std::make_shared<QMetaObject::Connection>();
      *conn = QObject::connect(window.keys()->detail(), &idem::ui::KeyDetailWidget::detailLoaded, &window,
                               [&window, chosen, conn] {
                                 QObject::disconnect(*conn);
                                 window.keys()->detail()->setCurrentTab(chosen);
                               });
    }
  }
  if (cli.isSet(workspace)) {
    static const QStringList names{u"keys"_s, u"tiers"_s, u"sim"_s, u"cases"_s};
    const int index = static_cast<int>(names.indexOf(cli.value(workspace).toLower()));
    if (index < 0) {
      std::fprintf(stderr, "idem-console: --workspace takes one of keys, tiers, sim, cases (not %s)\n",
                   qPrintable(cli.value(workspace)));
      return 2;
    }
    window.setWorkspace(static_cast<idem::ui::MainWindow::Workspace>(index));
  }
  if (cli.isSet(scenario)) {
    const auto& builtIn = idem::sim::builtInScenarios();
    const auto* found = idem::sim::findScenario(cli.value(scenario).toStdString());
    if (!found) {
      std::fprintf(stderr, "idem-console: --scenario takes one of charge-twice, storm, budget-spike, new-keys (not %s)\n",
                   qPrintable(cli.value(scenario)));
      return 2;
    }
    window.setWorkspace(idem::ui::MainWindow::SimulatorPage);
    window.simulator()->loadScenario(static_cast<idem::ui::sim::SimulatorWorkspace::Scenario>(found - builtIn.data()));
  }
  if (cli.isSet(runSim)) QTimer::singleShot(0, window.simulator(), &idem::ui::sim::SimulatorWorkspace::run);
  if (cli.isSet(simTab)) {
    static const QStringList names{u"ab"_s, u"offsets"_s, u"load"_s, u"heatmap"_s, u"live"_s, u"measure"_s};
    const int index = static_cast<int>(names.indexOf(cli.value(simTab).toLower()));
    if (auto* simulator = window.findChild<idem::ui::sim::SimulatorWorkspace*>(); simulator && index >= 0) {
      window.setWorkspace(idem::ui::MainWindow::SimulatorPage);
      simulator->setCurrentTab(static_cast<idem::ui::sim::SimulatorWorkspace::Tab>(index));
    }
  }
  if (cli.isSet(simEditor)) {
    static const QStringList names{u"policy-a"_s, u"policy-b"_s, u"server"_s, u"across-keys"_s};
    const int index = static_cast<int>(names.indexOf(cli.value(simEditor).toLower()));
    if (auto* editors = window.findChild<QTabWidget*>(u"simEditors"_s); editors && index >= 0) {
      window.setWorkspace(idem::ui::MainWindow::SimulatorPage);
      editors->setCurrentIndex(index);
    }
  }
  if (cli.isSet(screenshot)) {
    const QString path = cli.value(screenshot);
    QTimer::singleShot(cli.value(delay).toInt(), &window, [&window, path] {
      const bool ok = window.grab().save(path);
      std::fprintf(stderr, ok ? "idem-console: saved %s\n" : "idem-console: cannot save %s\n", qPrintable(path));
      QApplication::exit(ok ? 0 : 1);
    });
  }
  return QApplication::exec();
}
