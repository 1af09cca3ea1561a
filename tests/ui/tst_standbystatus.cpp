// The console pointed at a real hot standby (pg_basebackup of a private primary): the status
// bar says how old the data is ("data as of 2.3 s ago", from pg_last_xact_replay_timestamp), says
// so when the standby is promoted under it, and when it disappears.
#include <QRegularExpression>
#include <QtTest>

#include "core/store/migrations.h"
#include "tests/support/standby.h"
#include "tests/support/testdb.h"
#include "tests/ui/uifixtures.h"
#include "ui/common/dbsession.h"
#include "ui/connection/statuswidget.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

class TestStandbyStatus : public QObject {
  Q_OBJECT

 private slots:
  void statusBarOnAStandbyThatIsPromotedThenGone() {
    test::PrivateCluster pc;
    pg::Connection admin(pc.conninfo());
    store::migrate(admin);
    test::Standby standby(pc);
    test::waitForStandbys(admin, 1);
    admin.exec("CREATE TABLE replayed (x int)");  // a transaction for the standby to replay
    pg::Connection onStandby(standby.conninfo());
    QTRY_VERIFY_WITH_TIMEOUT(
        onStandby.exec("SELECT count(*) AS n FROM pg_class WHERE relname = 'replayed'").integer(0, "n") == 1, 30000);

    DbSession session(u"standby"_s);
    StatusWidget status(&session);
    session.setPingInterval(200);
    QVERIFY(test::openSession(session, standby.conninfo()));
    QTRY_VERIFY_WITH_TIMEOUT(status.text().contains(u"data as of"_s), 15000);
    QVERIFY2(status.text().contains(u"read-only (standby)"_s), qPrintable(status.text()));
    static const QRegularExpression age(u"data as of \\d+(\\.\\d)? (s|min) ago"_s);
    QVERIFY2(age.match(status.text()).hasMatch(), qPrintable(status.text()));

    standby.promote();
    QTRY_VERIFY_WITH_TIMEOUT(status.text().contains(u"promoted"_s), 15000);
    QVERIFY2(!status.text().contains(u"data as of"_s), qPrintable(status.text()));

    standby.cluster().stop();
    QTRY_VERIFY_WITH_TIMEOUT(status.text().contains(u"the standby is gone"_s), 15000);
  }
};

QTEST_MAIN(TestStandbyStatus)
#include "tst_standbystatus.moc"
