// The system keyring against a real Secret Service: the test starts a private D-Bus session bus
// and gnome-keyring-daemon. Against a server that demands a password (scram), a password the
// server accepted and the user asked to remember is found by the next console run without
// asking, never reaches the settings file, and forgetting it brings the prompt back.
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <fstream>
#include <sstream>

#include "core/store/migrations.h"
#include "tests/ui/uifixtures.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/connection/keyring.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

namespace {
const QString kPassword = u"pw-s3cret-for-keyring"_s;
}  // namespace

class TestKeyring : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  pid_t m_busPid = 0;
  std::unique_ptr<test::PrivateCluster> m_cluster;
  QString m_conninfo;  // the password-protected user's, without a password

  /// One console run: a session, a controller and the settings file, connecting the profile.
  struct ConsoleRun {
    DbSession session{u"keyring-test"_s};
    QSettings settings;
    ConnectionController controller;
    ConsoleRun(const QString& settingsFile, const QString& conninfo)
        : settings(settingsFile, QSettings::IniFormat), controller({&session}, settings) {
      const auto profile = ConnectionProfile::fromConninfo(conninfo);
      ProfileStore(settings).save({profile});  // as the console does with the profiles it knows
      controller.connectProfile(profile);
    }
    bool waitFor(DbSession::State wanted, ConnectFailure::Kind kind = ConnectFailure::Kind::None) {
      QElapsedTimer t;
      t.start();
      while (t.elapsed() < 15000) {
        if (session.state() == wanted &&
            (wanted != DbSession::State::Failed || session.failure().kind == kind))
          return true;
        QTest::qWait(20);
      }
      return false;
    }
  };

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    // A private session bus and Secret Service: nothing of the user's desktop is touched.
    for (const char* sub : {"data", "run", "home"}) QVERIFY(QDir(m_dir.path()).mkpath(QString::fromLatin1(sub)));
    QFile::setPermissions(m_dir.filePath(u"run"_s), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    qputenv("XDG_DATA_HOME", m_dir.filePath(u"data"_s).toUtf8());
    qputenv("XDG_RUNTIME_DIR", m_dir.filePath(u"run"_s).toUtf8());
    qputenv("HOME", m_dir.filePath(u"home"_s).toUtf8());
    std::string out;
    QCOMPARE(cluster::runProgram({"/usr/bin/dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"}, &out,
                                 false),
             0);
    std::istringstream lines(out);
    std::string address;
    std::string pid;
    std::getline(lines, address);
    std::getline(lines, pid);
    QVERIFY2(address.starts_with("unix:"), out.c_str());
    m_busPid = std::stoi(pid);
    qputenv("DBUS_SESSION_BUS_ADDRESS", QByteArray::fromStdString(address));
    QCOMPARE(cluster::runProgram({"/bin/sh", "-c",
                                  "printf test | gnome-keyring-daemon --unlock --components=secrets --daemonize"},
                                 &out, false),
             0);

    // A server that wants a password from this user (scram), and the console's read role.
    m_cluster = std::make_unique<test::PrivateCluster>();
    {
      pg::Connection admin(m_cluster->conninfo());
      store::migrate(admin);
      admin.exec("CREATE ROLE idem_pw_user LOGIN PASSWORD '" + kPassword.toStdString() + "'");
      admin.exec("GRANT idem_console TO idem_pw_user");
    }
    {
      pg::Connection admin(m_cluster->conninfo());
      const std::string hba = admin.exec("SELECT current_setting('hba_file') AS f").str(0, "f");
      std::stringstream original;
      original << std::ifstream(hba).rdbuf();
      std::ofstream(hba) << "local all idem_pw_user scram-sha-256\n" << original.str();
      admin.exec("SELECT pg_reload_conf()");
    }
    m_conninfo = QString::fromStdString(m_cluster->conninfo()).replace(u"user=idem "_s, u"user=idem_pw_user "_s);
    QVERIFY(m_conninfo.contains(u"user=idem_pw_user"_s));
  }

  void keyringKeepsAndForgets() {
    Keyring keyring;
    QSignalSpy remembered(&keyring, &Keyring::remembered);
    QSignalSpy looked(&keyring, &Keyring::lookedUp);
    QSignalSpy forgotten(&keyring, &Keyring::forgotten);
    keyring.remember(u"acct"_s, u"p1"_s);
    QTRY_VERIFY_WITH_TIMEOUT(remembered.count() >= 1, 10000);
    QVERIFY2(remembered.at(0).at(1).toBool(), qPrintable(remembered.at(0).at(2).toString()));
    keyring.lookup(u"acct"_s);
    QTRY_VERIFY_WITH_TIMEOUT(looked.count() >= 1, 10000);
    QCOMPARE(looked.at(0).at(1).toString(), u"p1"_s);
    keyring.forget(u"acct"_s);
    QTRY_VERIFY_WITH_TIMEOUT(forgotten.count() >= 1, 10000);
    QVERIFY(forgotten.at(0).at(1).toBool());
    keyring.lookup(u"acct"_s);
    QTRY_VERIFY_WITH_TIMEOUT(looked.count() >= 2, 10000);
    QVERIFY(looked.at(1).at(1).toString().isEmpty());
    QVERIFY(looked.at(1).at(2).toString().isEmpty());  // not found is no error
    // The entry is the connection without its password.
    const QString account = Keyring::accountFor(u"host=h user=u password=x dbname=d"_s);
    QCOMPARE(account, Keyring::accountFor(u"host=h user=u dbname=d"_s));
    QVERIFY2(!account.contains(u"password"_s), qPrintable(account));
  }

  void aRememberedPasswordConnectsTheNextRun() {
    const QString settingsFile = m_dir.filePath(u"console.ini"_s);
    {
      // First run: the keyring has nothing, so the server's question reaches the user.
      ConsoleRun run(settingsFile, m_conninfo);
      QVERIFY(run.waitFor(DbSession::State::Failed, ConnectFailure::Kind::PasswordNeeded));
      QTest::qWait(500);  // the keyring was asked and had nothing: still asking the user
      QCOMPARE(run.session.state(), DbSession::State::Failed);
      QSignalSpy kept(&run.controller, &ConnectionController::keyringResult);
      run.controller.setPassword(kPassword, /*remember=*/true);
      QVERIFY(run.waitFor(DbSession::State::Connected));
      QTRY_VERIFY_WITH_TIMEOUT(kept.count() >= 1, 10000);
      QVERIFY2(kept.at(0).at(0).toBool(), qPrintable(kept.at(0).at(1).toString()));
      run.settings.sync();
    }
    QFile ini(settingsFile);
    QVERIFY(ini.open(QIODevice::ReadOnly));
    QVERIFY2(!ini.readAll().contains(kPassword.toUtf8()), "the password reached the settings file");
    {
      // Second run: connected from the keyring, nobody typed anything.
      ConsoleRun run(settingsFile, m_conninfo);
      QVERIFY(run.waitFor(DbSession::State::Connected));
      QSignalSpy gone(&run.controller, &ConnectionController::keyringResult);
      run.controller.forgetPassword();
      QTRY_VERIFY_WITH_TIMEOUT(gone.count() >= 1, 10000);
      QVERIFY(gone.at(0).at(0).toBool());
    }
    {
      // Forgotten: the prompt is back.
      ConsoleRun run(settingsFile, m_conninfo);
      QVERIFY(run.waitFor(DbSession::State::Failed, ConnectFailure::Kind::PasswordNeeded));
      QTest::qWait(500);
      QCOMPARE(run.session.state(), DbSession::State::Failed);
    }
  }

  void aPasswordTheServerRefusedIsNotKept() {
    const QString settingsFile = m_dir.filePath(u"console2.ini"_s);
    Keyring keyring;
    QSignalSpy looked(&keyring, &Keyring::lookedUp);
    QSignalSpy forgotten(&keyring, &Keyring::forgotten);
    keyring.forget(Keyring::accountFor(m_conninfo));
    QTRY_VERIFY_WITH_TIMEOUT(forgotten.count() >= 1, 10000);
    ConsoleRun run(settingsFile, m_conninfo);
    QVERIFY(run.waitFor(DbSession::State::Failed, ConnectFailure::Kind::PasswordNeeded));
    QSignalSpy kept(&run.controller, &ConnectionController::keyringResult);
    run.controller.setPassword(u"wrong"_s, /*remember=*/true);
    QVERIFY(run.waitFor(DbSession::State::Failed, ConnectFailure::Kind::WrongPassword));
    QTest::qWait(500);
    QCOMPARE(kept.count(), 0);
    keyring.lookup(Keyring::accountFor(m_conninfo));
    QTRY_VERIFY_WITH_TIMEOUT(looked.count() >= 1, 10000);
    QVERIFY(looked.at(0).at(1).toString().isEmpty());
  }

  void cleanupTestCase() {
    m_cluster.reset();
    if (m_busPid > 0) ::kill(m_busPid, SIGTERM);  // gnome-keyring-daemon leaves with its bus
  }
};

QTEST_MAIN(TestKeyring)
#include "tst_keyring.moc"
