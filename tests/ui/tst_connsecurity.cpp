// What the console keeps and how it connects: no secret (password, sslpassword — every keyword
// libpq marks secret) reaches its settings or the keyring's account name, parseable or not; a
// connection string libpq cannot read is refused with a clear error instead of being saved; a
// profile naming a network host requires a verified TLS connection unless it says otherwise;
// the status bar says whether TLS is on and how the server's certificate was checked; the
// console reads a store as a member of idem_console.
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

#include <filesystem>

#include "core/cluster/localcluster.h"
#include "core/store/migrations.h"
#include "tests/ui/uifixtures.h"
#include "ui/connection/connectiondialog.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/connection/keyring.h"
#include "ui/connection/profile.h"
#include "ui/connection/statuswidget.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/keys/keysworkspace.h"
#include "ui/keys/keylistmodel.h"
#include "ui/mainwindow/mainwindow.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

namespace {

ConnectionProfile conninfoProfile(const QString& name, const QString& conninfo) {
  ConnectionProfile p = ConnectionProfile::fromConninfo(conninfo);
  p.name = name;
  return p;
}

QByteArray fileText(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QString libpqString(const QString& conninfo) {
  ConnectParams p;
  p.conninfo = conninfo;
  return QString::fromStdString(p.toLibpq());
}

/// A private cluster on loopback TCP with TLS: a test CA, and a server certificate for
/// 127.0.0.1 and localhost signed by it. A migrated database `idem`, a console login.
struct TlsServer {
  TlsServer() {
    QVERIFY_THROWS_NO_EXCEPTION(start());
  }
  void start() {
    char tmpl[] = "/tmp/idem-tls-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all | std::filesystem::perms::group_exec |
                                          std::filesystem::perms::others_exec);
    const std::string script =
        "set -e; cd " + dir +
        "; openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=idem-test-ca"
        "; openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=localhost"
        "; printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > san.ext"
        "; openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 "
        "-extfile san.ext";
    std::string out;
    if (cluster::runProgram({"/bin/sh", "-c", script}, &out, false) != 0) throw std::runtime_error(out);
    port = test::freeLoopbackPort();
    server = std::make_unique<cluster::LocalCluster>(dir + "/cluster", port);
    server->listenOnLoopback(dir + "/server.crt", dir + "/server.key");
    server->start();
    pg::Connection admin(server->conninfo());
    admin.exec("CREATE DATABASE idem");
    pg::Connection db(server->conninfo("idem"));
    store::migrate(db);
    db.exec("CREATE ROLE tls_console LOGIN PASSWORD 'tls-pw' IN ROLE idem_console");
  }
  ~TlsServer() {
    if (server) server->stop();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  [[nodiscard]] QString conninfo(const QString& extra) const {
    return u"host=127.0.0.1 port=%1 dbname=idem user=tls_console password=tls-pw "_s.arg(port) % extra;
  }
  std::string dir;
  int port = 0;
  std::unique_ptr<cluster::LocalCluster> server;
};

/// Connects a session and returns its state once settled, the status line in *status.
DbSession::State connectAndRead(const QString& conninfo, QString* status, ConnectFailure::Kind* kind = nullptr) {
  DbSession session(u"tls"_s);
  StatusWidget line(&session);
  ConnectParams p;
  p.conninfo = conninfo;
  p.connectTimeoutS = 5;
  session.open(p);
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < 15000 && session.state() != DbSession::State::Connected &&
         !(session.state() == DbSession::State::Failed ||
           (session.state() == DbSession::State::Reconnecting && session.failure().isError())))
    QTest::qWait(20);
  QTest::qWait(50);
  *status = line.text();
  if (kind) *kind = session.failure().kind;
  return session.state();
}

}  // namespace

class TestConnSecurity : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    qputenv("PGPASSFILE", "/nonexistent/pgpass");
    qunsetenv("PGSSLMODE");
    qunsetenv("PGHOST");
    qunsetenv("PGHOSTADDR");
  }

  // Before: a string libpq could not parse was written to the settings as typed.
  void unparseableConninfoIsRefusedAndNothingIsWritten() {
    QTemporaryDir dir;
    const QString ini = dir.filePath(u"s.ini"_s);
    QSettings settings(ini, QSettings::IniFormat);
    ProfileStore store(settings);
    store.save({conninfoProfile(u"good"_s, u"host=db dbname=idem"_s)});
    settings.sync();
    const QByteArray before = fileText(ini);
    QVERIFY(before.contains("good"));
    const QList<ConnectionProfile> withBad{conninfoProfile(u"good"_s, u"host=db dbname=idem"_s),
                                           conninfoProfile(u"typo"_s, u"host=db password=hunter2 sslmode"_s)};
    bool refused = false;
    try {
      store.save(withBad);
    } catch (const std::invalid_argument& e) {
      refused = true;
      const QString message = QString::fromUtf8(e.what());
      QVERIFY2(message.contains(u"typo"_s), e.what());  // names the profile
      QVERIFY2(!message.contains(u"hunter2"_s), e.what());
    }
    settings.sync();
    QVERIFY2(!fileText(ini).contains("hunter2"), fileText(ini).constData());
    QVERIFY(refused);
    QCOMPARE(fileText(ini), before);  // nothing was written: the saved profiles are as they were
  }

  void dialogRefusesAnUnparseableConninfo() {
    ConnectionDialog dialog({conninfoProfile(u"typo"_s, u"host=db password=hunter2 'unterminated"_s)}, u"typo"_s);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QPushButton* connectButton = nullptr;
    for (auto* b : dialog.findChildren<QPushButton*>())
      if (b->text() == ConnectionDialog::tr("&Connect")) connectButton = b;
    QVERIFY(connectButton);
    connectButton->click();
    QApplication::processEvents();
    QVERIFY2(dialog.isVisible(), "the dialog accepted a connection string libpq cannot read");
    QVERIFY(dialog.result() != QDialog::Accepted);
    bool explained = false;
    for (auto* label : dialog.findChildren<QLabel*>())
      if (label->isVisible() && label->text().contains(u"cannot be read"_s)) {
        explained = true;
        QVERIFY2(!label->text().contains(u"hunter2"_s), qPrintable(label->text()));
      }
    QVERIFY(explained);
  }

  // Before: only `password` was stripped; sslpassword (the client key's passphrase) was saved.
  void noSecretReachesTheSettingsOrTheKeyring() {
    QTemporaryDir dir;
    const QString ini = dir.filePath(u"s.ini"_s);
    QSettings settings(ini, QSettings::IniFormat);
    ProfileStore store(settings);
    store.save({conninfoProfile(u"kw"_s, u"host=db dbname=idem password=hunter2 sslpassword=keypass1 sslcert=/c.crt"_s),
                conninfoProfile(u"uri"_s, u"postgresql://support:hunter3@db/idem?sslpassword=keypass2"_s)});
    settings.sync();
    const QByteArray text = fileText(ini);
    for (const char* secret : {"hunter2", "hunter3", "keypass1", "keypass2"})
      QVERIFY2(!text.contains(secret), text.constData());
    const auto loaded = store.load();
    QCOMPARE(loaded.size(), 2);
    QVERIFY2(loaded[0].conninfo.contains(u"sslcert='/c.crt'"_s), qPrintable(loaded[0].conninfo));
    QVERIFY2(loaded[1].conninfo.contains(u"user='support'"_s), qPrintable(loaded[1].conninfo));
    // The keyring's account name is stored in clear by the Secret Service: no secret in it.
    for (const QString& conninfo : {u"host=db password=hunter2 sslpassword=keypass1"_s,
                                   u"host=db password=hunter2 'unterminated"_s, u"postgresql://u:hunter3@db:x/"_s}) {
      const QString account = Keyring::accountFor(conninfo);
      QVERIFY2(!account.contains(u"hunter"_s) && !account.contains(u"keypass"_s), qPrintable(account));
    }
  }

  // Before: no sslmode meant libpq's `prefer` — plain text whenever the server (or someone in
  // the middle) declines TLS.
  void networkHostsRequireAVerifiedTlsByDefault() {
    QVERIFY2(libpqString(u"host=db.example.com dbname=idem"_s).contains(u"sslmode='verify-full'"_s),
             qPrintable(libpqString(u"host=db.example.com dbname=idem"_s)));
    QVERIFY(libpqString(u"postgresql://support@10.0.3.7/idem"_s).contains(u"sslmode='verify-full'"_s));
    QVERIFY(libpqString(u"hostaddr=10.0.3.7 dbname=idem"_s).contains(u"sslmode='verify-full'"_s));
    QVERIFY(libpqString(u"host=/var/run/postgresql,db.example.com"_s).contains(u"sslmode='verify-full'"_s));
    ConnectionProfile fields;
    fields.host = u"10.0.3.7"_s;
    fields.database = u"idem"_s;
    QVERIFY(libpqString(fields.toConninfo()).contains(u"sslmode='verify-full'"_s));
    // A Unix socket, or an sslmode the profile chose, stays as given.
    QVERIFY(!libpqString(u"host=/var/run/postgresql dbname=idem"_s).contains(u"sslmode"_s));
    QVERIFY(!libpqString(u"dbname=idem"_s).contains(u"sslmode"_s));
    QVERIFY(libpqString(u"host=db sslmode=disable"_s).contains(u"sslmode='disable'"_s));
    QVERIFY(!libpqString(u"host=db sslmode=disable"_s).contains(u"verify-full"_s));
    QVERIFY(libpqString(u"host=db sslmode=require"_s).contains(u"sslmode='require'"_s));
    qputenv("PGSSLMODE", "require");  // the environment's choice is an explicit one too
    QVERIFY(!libpqString(u"host=db"_s).contains(u"sslmode"_s));
    qunsetenv("PGSSLMODE");
  }

  void statusBarSaysTlsIsOffOnASocket() {
    test::TestDatabase db("ui_tls_sock");
    DbSession session(u"test"_s);
    StatusWidget status(&session);
    QVERIFY(test::openSession(session, db.conninfo()));
    QTRY_VERIFY(status.text().contains(u"connected"_s));
    QVERIFY2(status.text().contains(u"TLS off (local socket)"_s), qPrintable(status.text()));
  }

  // TLS over loopback: verified by default, said so in the status bar; an explicit weaker
  // sslmode stays as chosen and is shown as such.
  void statusBarShowsTlsAndHowTheServerWasChecked() {
    TlsServer tls;
    if (QTest::currentTestFailed()) return;
    const QString ca = QString::fromStdString(tls.dir + "/ca.crt");
    QString status;
    // No sslmode: verify-full, against the CA the profile names.
    QCOMPARE(connectAndRead(tls.conninfo(u"sslrootcert="_s % ca), &status), DbSession::State::Connected);
    QVERIFY2(status.contains(u"TLS on (TLSv1."_s) && status.contains(u"verify-full: certificate and host name verified"_s),
             qPrintable(status));
    // No sslmode and no CA to check against: refused, not a silent unverified (or plain) session.
    qputenv("PGSSLROOTCERT", "/nonexistent/root.crt");
    ConnectFailure::Kind kind{};
    QCOMPARE(connectAndRead(tls.conninfo({}), &status, &kind), DbSession::State::Failed);
    QCOMPARE(kind, ConnectFailure::Kind::Ssl);
    qunsetenv("PGSSLROOTCERT");
    // Chosen weaker modes stay, and the status bar says what they mean.
    QCOMPARE(connectAndRead(tls.conninfo(u"sslmode=require"_s), &status), DbSession::State::Connected);
    QVERIFY2(status.contains(u"require: server certificate not verified"_s), qPrintable(status));
    QCOMPARE(connectAndRead(tls.conninfo(u"sslmode=disable"_s), &status), DbSession::State::Connected);
    QVERIFY2(status.contains(u"TLS off"_s) && !status.contains(u"local socket"_s), qPrintable(status));
  }

  // The console's reads (browse, search, a key's detail) as a login member of idem_console.
  void consoleReadsAsIdemConsole() {
    test::TestDatabase db("ui_role_console");
    test::seedConsoleRows(db);
    const std::string role = "t_console_" + std::to_string(getpid());
    {
      auto admin = db.connect();
      admin.exec("CREATE ROLE " + role + " LOGIN PASSWORD 'console-pw' IN ROLE idem_console");
    }
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    {
      MainWindow window(settings);
      window.show();
      const QString conninfo = QString::fromStdString(db.conninfo() + " user=" + role + " password=console-pw");
      window.connection()->connectProfile(ConnectionProfile::fromConninfo(conninfo));
      QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->state(), DbSession::State::Connected, 15000);
      QTRY_COMPARE_WITH_TIMEOUT(window.detailSession()->state(), DbSession::State::Connected, 15000);
      QCOMPARE(window.browseSession()->info().user, QString::fromStdString(role));
      QTRY_VERIFY_WITH_TIMEOUT(window.keys()->keyModel()->rowCount() > 10, 10000);
      QSignalSpy loaded(window.keys()->detail(), &KeyDetailWidget::detailLoaded);
      window.keys()->search(u"pay_1NvQ8A"_s);
      QVERIFY(loaded.wait(10000));
      QCOMPARE(window.keys()->detail()->detail().executions(), 2);
    }
    db.connect().exec("DROP ROLE " + role);
  }
};

QTEST_MAIN(TestConnSecurity)
#include "tst_connsecurity.moc"
