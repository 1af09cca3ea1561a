// Connection failures reach the user as what happened / what it means / what to do: wrong
// host, wrong password (and none given), wrong database, a database without Idem's schema,
// a schema older than the console. The session is read-only by default.
#include <QFile>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include "core/store/migrations.h"
#include "tests/support/pgbouncer.h"
#include "tests/ui/uifixtures.h"
#include "ui/common/connectfailure.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/connection/profile.h"
#include "ui/connection/statuswidget.h"
#include "ui/mainwindow/mainwindow.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;
using Kind = ConnectFailure::Kind;

Q_DECLARE_METATYPE(idem::ui::ConnectFailure::Kind)

namespace {

/// Opens a session and waits for it to settle on Connected, Failed or Reconnecting.
DbSession::State settle(DbSession& session, const QString& conninfo, const QString& password = {}) {
  ConnectParams p;
  p.conninfo = conninfo;
  p.password = password;
  p.connectTimeoutS = 2;
  session.open(p);
  QElapsedTimer t;
  t.start();
  QTest::qWait(50);
  while (t.elapsed() < 15000) {
    const auto s = session.state();
    if (s == DbSession::State::Connected || s == DbSession::State::Failed ||
        (s == DbSession::State::Reconnecting && session.failure().isError()))
      return s;
    QTest::qWait(20);
  }
  return session.state();
}

}  // namespace

class TestConnection : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { qputenv("PGPASSFILE", "/nonexistent/pgpass"); }

  void classifiesLibpqMessages_data() {
    QTest::addColumn<QString>("message");
    QTest::addColumn<bool>("passwordGiven");
    QTest::addColumn<Kind>("kind");
    QTest::newRow("dns") << u"could not translate host name \"dbx\" to address: Name or service not known"_s << false
                         << Kind::Host;
    QTest::newRow("refused") << u"connection to server at \"10.0.0.1\", port 5432 failed: Connection refused"_s << false
                             << Kind::Host;
    QTest::newRow("socket") << u"connection to server on socket \"/x/.s.PGSQL.5432\" failed: No such file or directory"_s
                            << false << Kind::Host;
    QTest::newRow("timeout") << u"timeout expired"_s << false << Kind::Host;
    QTest::newRow("no password") << u"fe_sendauth: no password supplied"_s << false << Kind::PasswordNeeded;
    QTest::newRow("wrong password") << u"FATAL:  password authentication failed for user \"support\""_s << true
                                    << Kind::WrongPassword;
    QTest::newRow("pgpass wrong, none typed") << u"FATAL:  password authentication failed for user \"support\""_s
                                              << false << Kind::PasswordNeeded;
    QTest::newRow("database") << u"FATAL:  database \"idme\" does not exist"_s << false << Kind::NoSuchDatabase;
    QTest::newRow("role") << u"FATAL:  role \"suport\" does not exist"_s << false << Kind::NoSuchRole;
    QTest::newRow("hba") << u"FATAL:  no pg_hba.conf entry for host \"1.2.3.4\", user \"x\", database \"y\""_s << false
                         << Kind::NotAllowed;
    QTest::newRow("ssl") << u"server does not support SSL, but SSL was required"_s << false << Kind::Ssl;
    QTest::newRow("bad conninfo") << u"invalid connection option \"hots\""_s << false << Kind::BadConninfo;
    QTest::newRow("service") << u"definition of service \"prod\" not found"_s << false << Kind::BadConninfo;
  }
  void classifiesLibpqMessages() {
    QFETCH(QString, message);
    QFETCH(bool, passwordGiven);
    QFETCH(Kind, kind);
    const ConnectFailure f = classifyConnectError(message, u"db:5432"_s, passwordGiven);
    QCOMPARE(f.kind, kind);
    QVERIFY(!f.what.isEmpty() && !f.means.isEmpty() && !f.todo.isEmpty());
    QCOMPARE(f.detail, message);  // the server's words are kept, below the explanation
  }

  void conninfoKeepsUrisAndAddsPassword() {
    ConnectParams p;
    p.conninfo = u"postgresql://support@db.example.com:6432/idem?sslmode=require"_s;
    p.password = u"it's"_s;
    const QString s = QString::fromStdString(p.toLibpq());
    QVERIFY2(s.contains(u"host='db.example.com'"_s) && s.contains(u"port='6432'"_s) && s.contains(u"dbname='idem'"_s) &&
                 s.contains(u"sslmode='require'"_s) && s.contains(u"password='it\\'s'"_s) &&
                 s.contains(u"application_name='idem-console'"_s),
             qPrintable(s));
    QVERIFY(!ConnectParams::withoutSecrets(u"host=x password=secret dbname=y"_s).contains(u"secret"_s));
    p.conninfo = u"hots=x"_s;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, (void)p.toLibpq());
  }

  // Issue 29, item 7: a store given with --db is named after its database, not "command line".
  void commandLineProfileIsNamedAfterItsDatabase() {
    QCOMPARE(ConnectionProfile::fromConninfo(u"host=/tmp/idem-demo port=5432 dbname=idem_demo"_s).name,
             u"idem_demo"_s);
    QCOMPARE(ConnectionProfile::fromConninfo(u"host=db.internal dbname=idem user=support_ro"_s).name,
             u"idem on db.internal"_s);
    QCOMPARE(ConnectionProfile::fromConninfo(u"postgresql://ro@db.internal:5433/payments"_s).name,
             u"payments on db.internal"_s);
    QCOMPARE(ConnectionProfile::fromConninfo(u"service=idem-prod"_s).name, u"service idem-prod"_s);
    ConnectionProfile ro = ConnectionProfile::fromConninfo(u"host=/tmp/s dbname=idem_demo"_s);
    ro.readOnly = true;
    QCOMPARE(ro.displayName(), u"idem_demo (read-only)"_s);
  }

  void profilesNeverStorePasswords() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    ProfileStore store(settings);
    ConnectionProfile pasted = ConnectionProfile::fromConninfo(u"host=db dbname=idem password=hunter2"_s);
    pasted.name = u"pasted"_s;
    ConnectionProfile fields;
    fields.name = u"fields"_s;
    fields.host = u"10.0.3.7"_s;
    fields.database = u"idem"_s;
    fields.user = u"support_ro"_s;
    fields.sslmode = u"require"_s;
    ConnectionProfile service;
    service.name = u"svc"_s;
    service.kind = ConnectionProfile::Kind::Service;
    service.service = u"idem-prod"_s;
    store.save({pasted, fields, service});
    settings.sync();
    QFile file(dir.filePath(u"s.ini"_s));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(!file.readAll().contains("hunter2"));
    const auto loaded = store.load();
    QCOMPARE(loaded.size(), 3);
    QCOMPARE(loaded[1].toConninfo(), u"host='10.0.3.7' port=5432 dbname='idem' user='support_ro' sslmode='require'"_s);
    QCOMPARE(loaded[2].toConninfo(), u"service='idem-prod'"_s);
    QVERIFY(loaded[0].readOnly);
  }

  void sessionIsReadOnlyByDefault() {
    test::TestDatabase db("ui_conn_ro");
    DbSession session(u"test"_s);
    QCOMPARE(settle(session, QString::fromStdString(db.conninfo())), DbSession::State::Connected);
    QVERIFY(session.info().readOnly);
    QCOMPARE(session.info().schemaVersion, store::expectedSchemaVersion());
    std::optional<DbError> error;
    session.submit<int>(
        this, [](pg::Connection& c) { c.exec("CREATE TABLE idem.x (a int)"); return 0; },
        [&](DbResult<int> r) { error = r.error; });
    QTRY_VERIFY(error.has_value());
    QCOMPARE(error->sqlstate, u"25006"_s);  // read_only_sql_transaction
  }

  // Behind PgBouncer in transaction mode a session setting would stick to one server
  // connection: the console could write through the others, and whoever got that one next —
  // the enforcement service, in the same pool — could not. Each job is its own read-only
  // transaction instead.
  void readOnlyHoldsBehindAPoolerAndLeaksToNobody() {
    test::TestDatabase db("ui_conn_pooler");
    test::PgBouncer bouncer(test::sharedClusterConninfo(), 2);
    const std::string via = bouncer.conninfo(db.name());
    DbSession session(u"test"_s);
    QCOMPARE(settle(session, QString::fromStdString(via)), DbSession::State::Connected);
    QVERIFY(session.info().readOnly);
    pg::Connection service(via);
    service.exec("CREATE TABLE public.service_writes (n int)");
    for (int i = 0; i < 12; ++i) {
      std::optional<DbError> error;
      session.submit<int>(
          this, [](pg::Connection& c) { c.exec("CREATE TABLE public.console_x (a int)"); return 0; },
          [&](DbResult<int> r) { error = r.error; });
      QTRY_VERIFY(error.has_value());
      QCOMPARE(error->sqlstate, u"25006"_s);
      service.exec("INSERT INTO public.service_writes VALUES ($1)", {i});
    }
    QCOMPARE(service.exec("SELECT count(*) AS n FROM public.service_writes").integer(0, "n"), 12LL);
    // A job's reads still work, in one snapshot.
    std::optional<long long> keys;
    session.submit<long long>(
        this, [](pg::Connection& c) { return c.exec("SELECT count(*) AS n FROM idem.keys").integer(0, "n"); },
        [&](DbResult<long long> r) { keys = r.value; });
    QTRY_VERIFY(keys.has_value());
    QCOMPARE(*keys, 0LL);
  }

  void wrongHostIsExplainedAndRetried() {
    DbSession session(u"test"_s);
    QCOMPARE(settle(session, u"host=/nonexistent-socket-dir port=1 dbname=x"_s), DbSession::State::Reconnecting);
    QCOMPARE(session.failure().kind, Kind::Host);
    QVERIFY(session.failure().todo.contains(u"keeps trying"_s));
  }

  void wrongDatabaseIsExplained() {
    DbSession session(u"test"_s);
    const QString conninfo = QString::fromStdString(test::sharedClusterConninfo()) + u" dbname=no_such_db"_s;
    QCOMPARE(settle(session, conninfo), DbSession::State::Failed);
    QCOMPARE(session.failure().kind, Kind::NoSuchDatabase);
  }

  void databaseWithoutSchemaIsExplained() {
    test::TestDatabase db("ui_conn_empty", test::Schema::None);
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    MainWindow window(settings);
    window.show();
    window.connection()->connectProfile(ConnectionProfile::fromConninfo(QString::fromStdString(db.conninfo())));
    QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->state(), DbSession::State::Failed, 15000);
    QCOMPARE(window.browseSession()->failure().kind, Kind::NoSchema);
    QVERIFY(window.banner()->isVisible());
    QVERIFY2(window.banner()->messageText().contains(u"no Idem store"_s), qPrintable(window.banner()->messageText()));
    QVERIFY(window.banner()->messageText().contains(u"idemctl migrate"_s));
  }

  void olderSchemaIsExplained() {
    test::TestDatabase db("ui_conn_old");
    db.connect().exec("DELETE FROM idem.schema_migrations WHERE version = (SELECT max(version) FROM idem.schema_migrations)");
    DbSession session(u"test"_s);
    QCOMPARE(settle(session, QString::fromStdString(db.conninfo())), DbSession::State::Failed);
    QCOMPARE(session.failure().kind, Kind::SchemaOlder);
    QVERIFY(session.failure().means.contains(QString::number(store::expectedSchemaVersion())));
  }

  void wrongPasswordShowsMessageAndAsks() {
    test::PrivateCluster cluster;
    {
      auto admin = pg::Connection(cluster.conninfo());
      admin.exec("CREATE ROLE support_pw LOGIN PASSWORD 'right-password'");
      admin.exec("CREATE DATABASE idem_pw OWNER support_pw");
    }
    // This role alone must authenticate with a password; everyone else keeps trust.
    const QString hba = QString::fromStdString(cluster.cluster().root()) + u"/data/pg_hba.conf"_s;
    QFile file(hba);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray rules = "local all support_pw scram-sha-256\n" + file.readAll();
    file.close();
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(rules);
    file.close();
    pg::Connection(cluster.conninfo()).exec("SELECT pg_reload_conf()");
    std::string migrateOut;
    const QString target = QString::fromStdString(cluster.conninfo("idem_pw")) + u" user=support_pw"_s;
    QCOMPARE(test::runIdemctl({"migrate", "--db", target.toStdString() + " password=right-password"}, &migrateOut), 0);

    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    MainWindow window(settings);
    window.show();
    window.connection()->connectProfile(ConnectionProfile::fromConninfo(target));
    QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->state(), DbSession::State::Failed, 15000);
    QCOMPARE(window.browseSession()->failure().kind, Kind::PasswordNeeded);
    QVERIFY(window.banner()->isVisible());
    auto* field = window.banner()->findChild<QLineEdit*>();
    QVERIFY(field && field->isVisible());
    QCOMPARE(field->echoMode(), QLineEdit::Password);

    // A wrong password: said so, and asked again.
    window.connection()->setPassword(u"wrong-password"_s);
    QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->failure().kind, Kind::WrongPassword, 15000);
    QVERIFY2(window.banner()->messageText().contains(u"password was not accepted"_s),
             qPrintable(window.banner()->messageText()));
    QVERIFY(field->isVisible());

    // The right one, typed into the banner: connected, and nothing was written to settings.
    QTest::keyClicks(field, u"right-password"_s);
    QTest::keyClick(field, Qt::Key_Return);
    QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->state(), DbSession::State::Connected, 15000);
    QTRY_COMPARE_WITH_TIMEOUT(window.detailSession()->state(), DbSession::State::Connected, 15000);
    QVERIFY(!window.banner()->isVisible());
    settings.sync();
    QFile ini(dir.filePath(u"s.ini"_s));
    if (ini.open(QIODevice::ReadOnly)) QVERIFY(!ini.readAll().contains("right-password"));
  }
};

QTEST_MAIN(TestConnection)
#include "tst_connection.moc"
